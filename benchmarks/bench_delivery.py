"""Delivery under faults end to end (`make run CONFIG=configs/delivery.yaml`), timed: the matrix.

Runs the experiment's config in this checkout (its results folder must be empty or absent, so
that every job runs), then writes what it found beside the findings' meta.json: delivery.csv,
delivery.md and summary.md, and README.md with the command, the wall time, the machine's load
(`uptime`) before and after, and the matrix with its recommendation.
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
import subprocess
import sys
import time

from findings import findings_file

from ingestbench import CHECKOUT
from ingestbench.config import load_config
from ingestbench.delivery.summary import delivery_section

CONFIG = "configs/delivery.yaml"


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--config", default=CONFIG, help=f"the config to run (default: {CONFIG})")
    a = p.parse_args()
    results = CHECKOUT / load_config(CHECKOUT / a.config)["results_dir"]
    if results.exists() and any(results.iterdir()):
        print(f"{results} is not empty: move it away so that every job runs, then rerun.")
        return 2
    before, started = uptime(), dt.datetime.now(dt.UTC)
    t0 = time.monotonic()
    code = subprocess.run(["make", "run", f"CONFIG={a.config}"], cwd=CHECKOUT, check=False)
    seconds = time.monotonic() - t0
    after = uptime()
    if code.returncode != 0:
        print(f"make run CONFIG={a.config} failed (exit {code.returncode})")
        return code.returncode
    out = findings_file("README.md", results / "findings-README.md")
    # delivery/<server>/: the config's one server
    delivery = next((results / "delivery").glob("*/delivery.csv")).parent
    for name in ("delivery.csv", "delivery.md"):
        shutil.copyfile(delivery / name, out.with_name(name))
    shutil.copyfile(results / "summary.md", out.with_name("summary.md"))
    cases = len((delivery / "delivery.csv").read_text().splitlines()) - 1
    out.write_text(
        f"# Delivery under faults (`{a.config}`)\n\n"
        f"Command: `make run CONFIG={a.config}` in a fresh clone, started "
        f"{started:%Y-%m-%d %H:%M} UTC; it took {seconds / 60:.1f} min ({cases} cases in "
        f"delivery.csv). Machine, commit and versions: meta.json. The machine is shared "
        f"(2 cores, other agents' jobs beside this one), `uptime` before: `{before}`; after: "
        f"`{after}`.\n\n{delivery_section(delivery / 'delivery.csv')}"
    )
    print(out.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
