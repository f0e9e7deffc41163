"""The same small workflow locally (`--cores N`) and through SLURM (profiles/slurm): wall times.

Each round runs both, alternating (local, SLURM, local, SLURM ...) so that drift on a shared
machine hits both alike, each in a fresh copy of the workflow with no results. Needs a SLURM
cluster that answers (`cluster/slurm-up.sh` starts a single-node one; `make bench-cluster` does
it). Prints a table with each run's wall time, the medians and their ratio (SLURM / local).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ingestbench.dev.workflow_copy import REPO, copy_workflow

MODES = {
    "local": lambda cores: ["--cores", str(cores)],
    "slurm": lambda cores: ["--profile", "profiles/slurm"],
}


def run_once(mode: str, config: Path, cores: int, log_dir: Path, index: int) -> float:
    """Wall seconds of one whole run in a fresh copy; its output goes to a log file."""
    with tempfile.TemporaryDirectory(prefix=f"ingestbench-cluster-{mode}-", dir=log_dir) as tmp:
        workdir = copy_workflow(Path(tmp))
        cmd = [sys.executable, "-m", "snakemake", *MODES[mode](cores), "--configfile",
               str(config.resolve())]  # fmt: skip
        log = log_dir / f"{mode}-{index}.log"
        t0 = time.perf_counter()
        with open(log, "w") as out:
            code = subprocess.run(cmd, cwd=workdir, stdout=out, stderr=subprocess.STDOUT).returncode
        wall = time.perf_counter() - t0
    if code != 0:
        sys.exit(f"bench_cluster: the {mode} run failed (exit {code}); its output is in {log}.")
    return wall


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--config", type=Path, default=REPO / "tests" / "data" / "config.test.yaml",
                   help="the workflow config (default: the tiny test config)")  # fmt: skip
    p.add_argument("--rounds", type=int, default=1, help="local + SLURM runs each (default: 1)")
    p.add_argument("--cores", type=int, default=2, help="--cores of the local run (default: 2)")
    p.add_argument("--logs", type=Path, default=Path("results") / "bench-cluster",
                   help="where the runs' outputs go (default: results/bench-cluster)")  # fmt: skip
    args = p.parse_args()
    if shutil.which("sinfo") is None or subprocess.run(["sinfo"], capture_output=True).returncode:
        sys.exit("bench_cluster: no SLURM cluster answers here; cluster/slurm-up.sh starts one.")
    args.logs.mkdir(parents=True, exist_ok=True)
    walls: dict[str, list[float]] = {mode: [] for mode in MODES}
    for i in range(args.rounds):
        for mode in MODES:
            walls[mode].append(run_once(mode, args.config, args.cores, args.logs.resolve(), i))
            print(f"round {i + 1}: {mode} {walls[mode][-1]:.0f} s", flush=True)
    print(f"\n{'run':<8} {'wall s (each)':<24} {'median s':>9}")
    for mode, values in walls.items():
        each = ", ".join(f"{v:.0f}" for v in values)
        print(f"{mode:<8} {each:<24} {statistics.median(values):>9.0f}")
    ratio = statistics.median(walls["slurm"]) / statistics.median(walls["local"])
    print(f"\nSLURM / local: {ratio:.2f}x ({args.config.name}, local --cores {args.cores})")


if __name__ == "__main__":
    main()
