"""Sweep chunk_rows for the streamed pipeline: end-to-end rate, overlap and client memory.

Runs one client variant (default pandas dataframe, Parquet -> TCP) with each chunk size and the
whole-file mode interleaved round-robin on one QuestDB (so drift hits every size alike), with the
workflow's own methods and timing, and prints medians. READ_CHUNK_ROWS is chosen from it
(`make bench-chunks`; the machine is shared and noisy, so compare within one run):

    .venv/bin/python benchmarks/bench_chunks.py --chunks 50000 100000 250000 500000 1000000
"""

from __future__ import annotations

import dataclasses
import statistics

from _bench import TABLE, bench_parser, dataset_and_server, interleaved

from ingestbench.ingest.methods import cpu_job
from ingestbench.variants import parse_variant_name

MIB = 2**20


def main() -> None:
    parser = bench_parser(__doc__)
    parser.add_argument("--variant", default="pandas-dataframe-parquet-tcp")
    parser.add_argument("--chunks", type=int, nargs="+",
                        default=[50_000, 100_000, 250_000, 500_000, 1_000_000])  # fmt: skip
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    base = parse_variant_name(args.variant)
    variants = [dataclasses.replace(base, chunk_rows=c) for c in args.chunks]
    variants.append(dataclasses.replace(base, chunk_rows=None))  # whole-file mode, for scale

    with dataset_and_server(args.scale, args.epochs, (base.format,)) as (params, paths, qdb, cfg):
        jobs = [cpu_job(qdb, TABLE, v, paths[v.format], params.rows, cfg["ilp_protocol_version"],
                    field_type=params.field_type) for v in variants]  # fmt: skip
        results = interleaved(jobs, args.repeats, cfg["warmup_rows"])

    print(f"\n{params.rows:,} rows, {args.variant}, medians of {args.repeats} interleaved repeats")
    print(f"{'chunk_rows':>10} {'rows/s':>9} {'e2e s':>7} {'overlap':>7} {'read s':>7} "
          f"{'send s':>7} {'client MiB':>10} {'CPU-s/1M':>8}")  # fmt: skip
    for job in jobs:
        runs = results[job.variant.name]

        def med(key, runs=runs):
            return statistics.median(key(r) for r in runs)

        e2e = med(lambda r: r["end_to_end"])
        print(f"{job.variant.chunk_rows or 'all':>10} {params.rows / e2e:>9,.0f} {e2e:>7.2f} "
              f"{med(lambda r: r['overlap']):>7.2f} {med(lambda r: r['phases']['read']):>7.2f} "
              f"{med(lambda r: r['phases']['send']):>7.2f} "
              f"{max(r['client_rss_bytes'] for r in runs) / MIB:>10,.0f} "
              f"{med(lambda r: r['client_cpu_s']) / params.rows * 1e6:>8.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
