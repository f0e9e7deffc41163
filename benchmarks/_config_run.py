"""A config's whole run, timed, for the benchmarks that keep what one run found
(bench_delivery, bench_servers): `make run CONFIG=...` into an empty results folder, with the
machine's load average before and after."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import subprocess
import time
from pathlib import Path

from ingestbench import CHECKOUT


def load_average() -> str:
    """The 1, 5 and 15 min load averages, as `uptime` gives them."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


@dataclasses.dataclass(frozen=True)
class TimedRun:
    started: dt.datetime
    seconds: float
    before: str  # load averages
    after: str


def timed_run(config: str, results: Path) -> TimedRun | int:
    """`make run CONFIG=config` in this checkout, timed; or the exit code (2: `results` holds
    files, so that not every job would run) after one sentence saying why."""
    if results.exists() and any(results.iterdir()):
        print(f"{results} is not empty: move it away so that every job runs, then rerun.")
        return 2
    before, started = load_average(), dt.datetime.now(dt.UTC)
    t0 = time.monotonic()
    code = subprocess.run(["make", "run", f"CONFIG={config}"], cwd=CHECKOUT, check=False)
    seconds = time.monotonic() - t0
    if code.returncode != 0:
        print(f"make run CONFIG={config} failed (exit {code.returncode})")
        return code.returncode
    return TimedRun(started, seconds, before, load_average())
