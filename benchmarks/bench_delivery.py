"""Delivery under faults end to end (`make run CONFIG=configs/delivery.yaml`), timed: the matrix.

Runs the experiment's config in this checkout (its results folder must be empty or absent, so
that every job runs), then writes what it found beside the findings' meta.json: delivery.csv,
delivery.md and summary.md, and README.md with the command, the wall time, the machine's load
average (1, 5 and 15 min) before and after, and the matrix with its recommendation. It refuses to
start while the 1-minute load average is at `--max-load` (3) or above: on the shared 2-core
machine the fault windows and the restarts would measure the other work.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys

from _config_run import load_average, timed_run
from findings import findings_file

from ingestbench import CHECKOUT
from ingestbench.config import load_config
from ingestbench.delivery.summary import delivery_section

CONFIG = "configs/delivery.yaml"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--config", default=CONFIG, help=f"the config to run (default: {CONFIG})")
    p.add_argument(
        "--max-load", type=float, default=3.0,
        help="refuse to start at this 1-minute load average or above (default: 3)",
    )  # fmt: skip
    a = p.parse_args()
    if os.getloadavg()[0] >= a.max_load:
        print(f"the load average is {load_average()}: wait until its first figure is below "
              f"{a.max_load:g}, or pass --max-load.")  # fmt: skip
        return 3
    results = CHECKOUT / load_config(CHECKOUT / a.config)["results_dir"]
    run = timed_run(a.config, results)
    if isinstance(run, int):
        return run
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
        f"{run.started:%Y-%m-%d %H:%M} UTC; it took {run.seconds / 60:.1f} min ({cases} cases in "
        f"delivery.csv). Machine, commit and versions: meta.json. The machine is shared "
        f"(2 cores, other agents' jobs beside this one): its load average (1, 5, 15 min) "
        f"before: {run.before}; after: {run.after}.\n\n"
        f"{delivery_section(delivery / 'delivery.csv')}"
    )
    print(out.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
