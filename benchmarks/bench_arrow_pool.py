"""Arrow's memory pool for the client: the C library's allocator against mimalloc, interleaved.

The client processes give Arrow the C library's allocator (ingestbench.ingest.frames.readers
.import_libraries) instead of pyarrow's default, mimalloc. This checks that choice: one client
path (default: pandas `vectorized` over 2 TCP connections) end to end against a fresh QuestDB,
warmed up, then --repeats rounds that run it once per pool in turn, each through the workflow's
own `run_repeat`; the pool is switched between repeats, so both meet the same server and drift.
Medians of rows/s, client CPU-s per 1M rows, and the client's peak RSS.

    .venv/bin/python benchmarks/bench_arrow_pool.py   # or: make bench-arrow-pool
"""

from __future__ import annotations

import statistics

import pyarrow as pa
from _bench import bench_parser, medians, variant_arguments, warm_job

from ingestbench.ingest.runner import run_repeat

POOLS = {"mimalloc (pyarrow's default)": pa.mimalloc_memory_pool,
         "system (the C library's)": pa.system_memory_pool}  # fmt: skip


def main() -> None:
    p = bench_parser(__doc__)
    variant_arguments(p, repeats=5)
    a = p.parse_args()
    results: dict[str, list[dict]] = {name: [] for name in POOLS}
    with warm_job(a) as (params, job):
        for i in range(a.repeats):
            for name, pool in POOLS.items():
                pa.set_memory_pool(pool())
                results[name].append(run_repeat(job, i))
    print(f"\n{a.variant}, {a.field_type} fields, {params.rows:,} rows: medians of {a.repeats} "
          f"interleaved rounds\n")  # fmt: skip
    print(f"{'Arrow memory pool':<30}{'rows/s':>10}{'client CPU-s/1M':>17}{'peak RSS MiB':>14}")
    for name, runs in results.items():
        rate, cpu, _ = medians(runs, params.rows)
        rss = statistics.median(r["client_rss_bytes"] for r in runs) / 2**20
        print(f"{name:<30}{rate:>10,.0f}{cpu:>17.2f}{rss:>14.0f}")


if __name__ == "__main__":
    main()
