"""How long a job's QuestDB takes to start: with the JVM's AOT cache and without, interleaved.

Each round starts the config's server (its jar and Java, as a job does) once from the AOT cache
beside the jar (made first if missing, outside the timing) and once without it, in turn, and
times each from launching the JVM to the server's first answer, with the server's CPU-seconds
by then (the JVM's threads); medians over the rounds. The job's own imports, which overlap this
start, are timed apart: what a job spends before its first repeat is the longer of the two.

    .venv/bin/python benchmarks/bench_server_start.py   # or: make bench-server-start
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench import REPO

from ingestbench.config import QuestDBSettings, load_config
from ingestbench.server.aot import aot_cache_options
from ingestbench.server.jar import server_jar
from ingestbench.server.process import embedded_server, java_executable


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=7, help="starts of each kind (default: 7)")
    a = p.parse_args()
    settings = QuestDBSettings.from_config(load_config(REPO / "config.yaml"))
    jar, java = server_jar(settings), java_executable(settings.java)
    cached = aot_cache_options(java, jar, settings.startup_timeout_s)
    if not cached:
        sys.exit("no AOT cache for this Java (it needs Java 25 or later); nothing to compare.")
    kinds = {"without the AOT cache": [], "with the AOT cache": cached}
    times: dict[str, list[tuple[float, float]]] = {kind: [] for kind in kinds}
    with tempfile.TemporaryDirectory(prefix="ingestbench-start-") as tmp:
        for i in range(a.rounds):
            for kind, options in kinds.items():
                log = Path(tmp) / f"server-{i}-{len(options)}.log"
                t0 = time.perf_counter()
                with embedded_server(jar, java=java, jvm_options=options, log_path=log) as qdb:
                    times[kind].append((time.perf_counter() - t0, qdb.cpu_seconds()))
    imports = [import_seconds() for _ in range(3)]
    print(f"\nQuestDB {settings.version} start, launch to first answer: medians of {a.rounds} "
          f"interleaved rounds\n")  # fmt: skip
    print(f"{'start':<24}{'seconds':>9}{'server CPU-s':>14}")
    for kind, runs in times.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"{kind:<24}{wall:>9.2f}{cpu:>14.2f}")
    print(
        f"\nthe job's imports (measuring code, pandas, polars, pyarrow, the client), "
        f"overlapping the start: {statistics.median(imports):.2f} s (median of 3)"
    )


def import_seconds() -> float:
    """Seconds a fresh interpreter takes to import what a job imports while its server starts."""
    code = ("import time; t = time.perf_counter(); from ingestbench.ingest.job import "
            "import_measuring_code; import_measuring_code('polars'); "
            "print(time.perf_counter() - t)")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(done.stdout.split()[-1])


if __name__ == "__main__":
    main()
