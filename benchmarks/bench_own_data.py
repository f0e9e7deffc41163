"""Client peak RSS on your own data against the TSBS path: the example trades table and TSBS cpu.

Own files are streamed in chunks like the TSBS files (ingestbench.own.read), so a client's
memory should stay within the TSBS path's bound whatever the file's size. This checks it: the
example trades table (ingestbench.own.example: 11 columns, strings of three cardinalities,
nullable integers) and TSBS cpu of about the same rows, one client path (default: pandas
`dataframe()` over TCP, streamed) on both against one fresh QuestDB, each warmed up, then
--repeats interleaved rounds through the workflow's own `run_repeat`, each repeat checked against
its source as the workflow checks it (a DuckDB pass over the file in the client's process, whose
memory the later repeats' peak may hold; --unchecked leaves the checks out). Medians of rows/s
and the client's peak RSS; the last column is own over TSBS.

    .venv/bin/python benchmarks/bench_own_data.py   # or: make bench-own-data (10M rows)
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from _bench import TABLE, checked, dataset_and_server, warm_up_each

from ingestbench.ingest.methods import Job, cpu_job
from ingestbench.ingest.parts import job_parts
from ingestbench.ingest.runner import run_repeat
from ingestbench.own.dataset import OwnDataset
from ingestbench.own.example import write_example
from ingestbench.own.manifest import write_own_manifest
from ingestbench.variants import parse_variant_name

HOSTS = 4000


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=10_000_000, help="rows of each (default: 10M)")
    p.add_argument("--variant", default="pandas-dataframe-parquet-tcp")
    p.add_argument("--repeats", type=int, default=3, help="(default: 3)")
    p.add_argument("--unchecked", action="store_true", help="no per-repeat checks")
    a = p.parse_args()
    variant = parse_variant_name(a.variant)
    epochs = max(1, a.rows // HOSTS)
    with (
        tempfile.TemporaryDirectory(prefix="ingestbench-own-") as tmp,
        dataset_and_server(min(HOSTS, a.rows), epochs, (variant.format,)) as (
            params, paths, qdb, config,
        ),
    ):  # fmt: skip
        own_file = Path(tmp) / f"trades.{variant.format}"
        write_example(own_file, a.rows)
        entry = {"label": "trades", "path": str(own_file)}
        if variant.format == "csv":
            entry |= {"symbols": ["venue", "instrument", "side"], "csv": {"delimiter": ";",
                      "null_values": ["NA"]}}  # fmt: skip
        manifest = write_own_manifest(OwnDataset.from_config(entry), Path(tmp) / "m.json")
        parts = job_parts(variant, manifest, own_file, TABLE, None)
        protocol = config["ilp_protocol_version"]
        jobs = {  # an own table's columns come with its parts: field_type is TSBS's only
            "TSBS cpu": cpu_job(qdb, TABLE, variant, paths[variant.format], params.rows, protocol,
                                field_type=params.field_type),
            "own: trades": Job(qdb, variant, own_file, parts, protocol),
        }  # fmt: skip
        guards = {name: None if a.unchecked else checked(job, config) for name, job in jobs.items()}
        warm_up_each(list(jobs.values()), config["warmup_rows"])
        by_data: dict[str, list] = {name: [] for name in jobs}
        for i in range(a.repeats):  # round-robin: drift on the machine hits both alike
            for name, job in jobs.items():
                by_data[name].append(run_repeat(job, i, guards=guards[name]))
    checks = "unchecked" if a.unchecked else "each repeat checked as the workflow checks it"
    print(f"\n{a.variant}: medians of {a.repeats} interleaved rounds ({checks})\n")
    print(f"{'data':<14}{'rows':>12}{'rows/s':>12}{'peak RSS MiB':>14}{'RSS vs TSBS':>13}")
    tsbs_rss = None
    for name, job in jobs.items():
        rss = statistics.median(r["client_rss_bytes"] for r in by_data[name]) / 2**20
        rate = statistics.median(job.rows / r["end_to_end"] for r in by_data[name])
        tsbs_rss = tsbs_rss or rss
        print(f"{name:<14}{job.rows:>12,}{rate:>12,.0f}{rss:>14.0f}{rss / tsbs_rss:>13.2f}")


if __name__ == "__main__":
    main()
