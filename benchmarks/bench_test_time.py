"""How long `make test` takes: the whole command, then each tier alone, on a fresh clone.

The clone (`git clone` of this checkout's HEAD into a temporary folder, its venv made by
`make install` outside the timing) runs `make test` once, then each tier as `make test` runs it
(`pytest tests/TIER -n 2 --dist loadscope --no-loadscope-reorder`); the load average before and
after each says how quiet the machine was. `make test`'s budget is 15 minutes on 2 cores.

    .venv/bin/python benchmarks/bench_test_time.py   # or: make bench-test-time
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

from _bench import REPO

TIERS = ("unit", "integration", "workflow", "browser")
#: The tests' environment: without the findings folder this benchmark writes into, which the
#: benchmarks the tests run would take for theirs.
TEST_ENV = {k: v for k, v in os.environ.items() if not k.startswith("FINDINGS_")}


def timed(cmd: list[str], cwd: Path) -> tuple[float, str, str]:
    """(wall seconds, pytest's last summary line, the load averages before -> after)."""
    before = os.getloadavg()[0]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=TEST_ENV)
    wall = time.perf_counter() - t0
    lines = re.findall(r"^=+ (.*(?:passed|failed).*) =+$", done.stdout, re.M)
    summary = lines[-1] if lines else f"exit {done.returncode}"
    if done.returncode != 0:
        print(done.stdout[-3000:], done.stderr[-2000:])
    return wall, summary, f"{before:.1f} -> {os.getloadavg()[0]:.1f}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tiers", nargs="*", default=list(TIERS), help="the tiers timed alone")
    p.add_argument("--no-whole", action="store_true", help="skip the whole `make test`")
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="ingestbench-test-time-") as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
        subprocess.run(["make", "install"], cwd=clone, check=True, capture_output=True)
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone,
                                capture_output=True, text=True).stdout.strip()  # fmt: skip
        rows = []
        if not a.no_whole:
            rows.append(("`make test`", *timed(["make", "test"], clone)))
        python = str(clone / ".venv" / "bin" / "python")
        for tier in a.tiers:
            cmd = [python, "-m", "pytest", f"tests/{tier}", "-n", "2", "--dist", "loadscope",
                   "--no-loadscope-reorder", "-p", "no:cacheprovider", "-q"]  # fmt: skip
            rows.append((tier, *timed(cmd, clone)))
    print(
        f"\nA fresh clone of {commit}, on {os.cpu_count()} cores (budget of `make test`: 15 min)\n"
    )
    print("| run | wall | pytest says | load average (1 min) before -> after |")
    print("| --- | ---: | --- | --- |")
    for name, wall, summary, load in rows:
        print(f"| {name} | {wall:,.0f} s ({wall / 60:.1f} min) | {summary} | {load} |")


if __name__ == "__main__":
    main()
