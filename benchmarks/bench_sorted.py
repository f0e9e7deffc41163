"""What sorting by the timestamp buys on an own table out of time order, interleaved on one server.

The string-heavy flights table (ingestbench.own.flights: rows carrier by carrier, so most arrive
behind the latest timestamp) and its copy sorted by DuckDB as `sorted: true` writes it
(ingestbench.own.sort), each described by the workflow (its profile: the late share, the
partitions touched), then each client path (--variant, repeated) on both against one fresh
QuestDB, warmed up, in --repeats interleaved rounds through the workflow's own `run_repeat`, so
that drift on a shared machine hits both alike. Medians of rows/s and of client and server
CPU-s per 1M rows; the last column is sorted over unsorted. The sort's own time is printed apart.

    .venv/bin/python benchmarks/bench_sorted.py   # or: make bench-sorted (400,000 rows)
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _bench import dataset_and_server, medians, warm_up_each

from ingestbench.ingest.methods import Job
from ingestbench.ingest.parts import job_parts
from ingestbench.ingest.runner import run_repeat
from ingestbench.own.dataset import OwnDataset, sorted_copy
from ingestbench.own.flights import write_flights
from ingestbench.own.manifest import spec_of, write_own_manifest
from ingestbench.own.sort import as_sorted_copy, write_sorted
from ingestbench.variants import parse_variant_name


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=400_000, help="rows (default: 400,000)")
    p.add_argument("--variant", action="append", help="repeatable (default: pandas dataframe() "
                   "over HTTP, pandas threads over TCP with 2 workers)")  # fmt: skip
    p.add_argument("--repeats", type=int, default=5, help="(default: 5)")
    p.add_argument("--memory-limit", default="1GB", help="DuckDB's, for the sort (default: 1GB)")
    units = ("HOUR", "DAY", "WEEK", "MONTH", "YEAR")
    p.add_argument("--partition-by", choices=units, help="the table's unit (default: the rule's)")
    a = p.parse_args()
    names = a.variant or ["pandas-dataframe-parquet-http", "pandas-threads-parquet-tcp-w2"]
    variants = [parse_variant_name(n) for n in names]
    with (
        tempfile.TemporaryDirectory(prefix="ingestbench-sorted-") as tmp,
        dataset_and_server(10, 10) as (_params, _paths, qdb, config),
    ):  # the TSBS dataset is unused: only the server is
        source = Path(tmp) / "flights.parquet"
        write_flights(source, a.rows)
        entry = {"label": "flights", "path": str(source)}
        if a.partition_by:  # else the schema's default: the unit from rows per day
            entry["partition_by"] = a.partition_by
        manifest = write_own_manifest(OwnDataset.from_config(entry), Path(tmp) / "own.json")
        copy = sorted_copy(entry, tmp)
        sort = write_sorted(spec_of(manifest), Path(copy["path"]), Path(tmp) / "sort.json",
                            memory_limit=a.memory_limit)  # fmt: skip
        twin = as_sorted_copy(OwnDataset.from_config(copy), manifest)
        manifests = {"unsorted": manifest,
                     "sorted": write_own_manifest(twin, Path(tmp) / "sorted.json")}  # fmt: skip
        files = {"unsorted": source, "sorted": Path(copy["path"])}
        protocol = config["ilp_protocol_version"]
        jobs = {(v.name, kind): Job(qdb, v, files[kind],
                                    job_parts(v, manifests[kind], files[kind], "flights", None),
                                    protocol)
                for v in variants for kind in files}  # fmt: skip
        warm_up_each(list(jobs.values()), config["warmup_rows"])
        runs: dict[tuple[str, str], list] = {key: [] for key in jobs}
        for i in range(a.repeats):  # round-robin: drift on the machine hits every job alike
            for key, job in jobs.items():
                runs[key].append(run_repeat(job, i))
    for kind, m in manifests.items():
        [t] = m["profile"]["tables"]
        print(f"{kind}: {m['rows']:,} rows, {t['late_share']:.1%} behind the running maximum "
              f"timestamp, {t['partitions']} {t['partition_by']} partition(s)")  # fmt: skip
    print(f"sort by DuckDB (memory limit {a.memory_limit}): {sort['sort_s']:.2f} s, apart\n")
    print(f"medians of {a.repeats} interleaved rounds\n")
    print(f"{'variant':<34}{'data':<10}{'rows/s':>11}{'client CPU':>12}{'server CPU':>12}"
          f"{'× unsorted':>12}")  # fmt: skip
    for v in variants:
        base = None
        for kind in files:
            rate, client, server = medians(runs[(v.name, kind)], jobs[(v.name, kind)].rows)
            base = base or rate
            print(f"{v.name:<34}{kind:<10}{rate:>11,.0f}{client:>12.2f}{server:>12.2f}"
                  f"{rate / base:>12.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
