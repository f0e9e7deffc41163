"""Benchmark the TSBS cpu generator: rows/s, CPU seconds and peak RSS per row count and format.

Each generation runs in a fresh child process (so peak RSS is per run). Two CPU figures:
``gen CPU s`` is the CPU time of the ``generate()`` call alone (getrusage of the child before and
after it: the number to hold against the target); ``proc CPU s`` is the whole child (user + sys
from the child's rusage), including Python start-up and importing numpy and pyarrow. Wall and
rows/s are of ``generate()``. Peak RSS is the child's ``ru_maxrss``. Medians of the repeats.

    .venv/bin/python benchmarks/bench_generate.py --rows 1000000 10000000 --formats parquet csv
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from findings import findings_file

from ingestbench.storage.files import write_json_atomic

REPO = Path(__file__).resolve().parents[1]


def child(args: argparse.Namespace) -> None:
    """Run one generation in this process and print its figures as JSON on stdout."""
    import resource
    import time

    from ingestbench.tsbs import DatasetParams, generate

    params = DatasetParams(scale=args.scale, epochs=-(-args.child_rows // args.scale), seed=42)
    before = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    manifest = generate(params, args.out, formats=(args.child_format,), progress=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    size = manifest["files"][args.child_format]["bytes"]
    print(json.dumps({"rows": params.rows, "wall_s": wall, "gen_cpu_s": cpu, "bytes": size}))


def run_once(rows: int, fmt: str, scale: int, out: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "src"), env.get("PYTHONPATH")]))
    cmd = [sys.executable, __file__, "--child-rows", str(rows), "--child-format", fmt]
    cmd += ["--scale", str(scale), "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env, text=True)
    stdout = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"the generator child failed (exit {proc.returncode}) for {rows} rows, {fmt}")
    result = json.loads(stdout.strip().splitlines()[-1])
    result["proc_cpu_s"] = usage.ru_utime + usage.ru_stime
    result["peak_rss_mib"] = usage.ru_maxrss / 1024  # KiB on Linux
    shutil.rmtree(out, ignore_errors=True)  # free the disk (and page cache) for the next run
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument(
        "--formats", nargs="+", choices=("parquet", "csv"), default=["parquet", "csv"]
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scale", type=int, default=4000, help="hosts (default: 4000, as TSBS)")
    parser.add_argument("--out", type=Path, help="scratch directory (default: a temporary one)")
    parser.add_argument("--json", type=Path, default=findings_file("generate.json"),
                        help="also write every run's figures here")  # fmt: skip
    parser.add_argument("--child-rows", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--child-format", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_rows is not None:
        child(args)
        return

    scratch = args.out or Path(tempfile.mkdtemp(prefix="bench_generate-"))
    header = (
        f"| {'rows':>11} | {'format':7} | {'wall s':>7} | {'gen CPU s':>9} | {'proc CPU s':>10} "
        f"| {'rows/s':>11} | {'peak RSS MiB':>12} | {'MiB':>8} |"
    )
    print(f"scale {args.scale}, median of {args.repeats} runs, each in a fresh process")
    print(header)
    print("|" + "|".join("-" * (len(c) + 0) for c in header.split("|")[1:-1]) + "|")
    records = []
    try:
        for rows in args.rows:
            for fmt in args.formats:
                runs = [
                    run_once(rows, fmt, args.scale, scratch / f"run-{rows}-{fmt}-{i}")
                    for i in range(args.repeats)
                ]
                records += [{"format": fmt, "repeat": i, **r} for i, r in enumerate(runs)]

                def med(key, runs=runs):
                    return statistics.median(r[key] for r in runs)

                n = runs[0]["rows"]
                print(
                    f"| {n:>11,} | {fmt:7} | {med('wall_s'):7.2f} | {med('gen_cpu_s'):9.2f} "
                    f"| {med('proc_cpu_s'):10.2f} | {n / med('wall_s'):11,.0f} "
                    f"| {med('peak_rss_mib'):12.0f} | {med('bytes') / 2**20:8.1f} |",
                    flush=True,
                )
    finally:
        if args.out is None:
            shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        write_json_atomic(args.json, records)


if __name__ == "__main__":
    main()
