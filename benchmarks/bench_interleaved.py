"""Compare a few workflow variants fairly on a noisy machine: interleaved repeats on one server.

The workflow runs each variant as its own job, minutes apart, so on a shared machine a 15 %
difference between two variants can be drift. This runs the named variants round-robin (variant
A, B, C, then A, B, C again ...) against one QuestDB, with the workflow's own methods, warm-up
and timing boundaries, and prints medians of end to end and of the send phase, each as a ratio
to the first variant. pandas against polars is measured this way (`make bench-libraries`):

    make bench-interleaved ARGS="pandas-dataframe-parquet-http polars-dataframe-parquet-http"
"""

from __future__ import annotations

import statistics

from _bench import TABLE, bench_parser, dataset_and_server, interleaved

from ingestbench.ingest.methods import Job, cpu_job
from ingestbench.ingest.parts import rows_to_ingest
from ingestbench.variants import parse_variant_name


def main(variants: list[str] | None = None, repeats: int = 5) -> None:
    """`variants` and `repeats` are the defaults of a benchmark built on this one."""
    parser = bench_parser(__doc__)
    parser.add_argument("variants", nargs="*" if variants else "+", default=variants,
                        help="variant names, e.g. polars-dataframe-csv-http")  # fmt: skip
    parser.add_argument("--repeats", type=int, default=repeats)
    args = parser.parse_args()
    try:
        variants = [parse_variant_name(name) for name in args.variants]
    except ValueError as exc:
        parser.error(f"{exc}; `ingestbench variants` lists valid names")

    formats = tuple(sorted({v.format for v in variants}))
    with dataset_and_server(args.scale, args.epochs, formats) as (params, paths, qdb, config):
        jobs = [
            cpu_job(qdb, TABLE, v, paths[v.format],
                    rows_to_ingest(v, params.rows, config["rows_cap"]),
                    config["ilp_protocol_version"], field_type=params.field_type)
            for v in variants
        ]  # fmt: skip
        results = interleaved(jobs, args.repeats, config["warmup_rows"])

    def medians(job: Job) -> tuple[float, float]:
        runs = results[job.variant.name]
        end_to_end = statistics.median(r["end_to_end"] for r in runs)
        send_rate = statistics.median(job.rows / r["phases"]["send"] for r in runs)
        return end_to_end, send_rate

    base_e2e, base_send = medians(jobs[0])
    print(f"\n{params.rows:,} rows, medians of {args.repeats} interleaved repeats (cold included)")
    header = f"{'variant':<38} {'end to end s':>12} {'ratio':>6} {'rows/s':>9} {'send rows/s':>11}"
    print(f"{header} {'ratio':>6}")
    for job in jobs:
        e2e, send = medians(job)
        print(f"{job.variant.name:<38} {e2e:>12.3f} {e2e / base_e2e:>6.2f} "
              f"{job.rows / e2e:>9,.0f} {send:>11,.0f} {send / base_send:>6.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
