"""SQL over PGWire (to_sql, executemany, asyncpg) against the best ILP paths: TSBS and strings.

The path most pandas and polars users write first is `df.to_sql(...)` into a PostgreSQL
connection; QuestDB takes it over PGWire. This measures it beside the ILP paths the workflow
runs, on the same rows: TSBS cpu (10 symbols, 10 doubles) and a generated string-heavy own table
(a symbol, five high-cardinality strings of 10-80 characters, one double), each --rows rows.
Every path runs through the workflow's own `run_repeat` against one fresh QuestDB, warmed up,
then --repeats interleaved rounds, each repeat checked against its source as the workflow checks
it. Medians of rows/s, client and server CPU-s per 1M rows, and each path's rate over to_sql's.

    .venv/bin/python benchmarks/bench_pgwire.py   # or: make bench-pgwire (50k rows each)
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from _bench import TABLE, checked, dataset_and_server, warm_up_each

from ingestbench.ingest.methods import Job, cpu_job
from ingestbench.ingest.parts import job_parts
from ingestbench.ingest.runner import run_repeat
from ingestbench.own.dataset import OwnDataset
from ingestbench.own.manifest import write_own_manifest
from ingestbench.variants import parse_variant_name

HOSTS = 4000
SQL_PATHS = (
    "pandas-to_sql-parquet-pg-b10000",
    "pandas-to_sql_multi-parquet-pg-b1000",
    "polars-write_database-parquet-pg-b10000",
    "pandas-executemany-parquet-pg-b10000",
    "pandas-asyncpg-parquet-pg-b10000",
)
#: The best ILP paths of the workflow's reference run on each table (the vectorized encoder
#: takes numbers only, so strings go through the client's dataframe()).
ILP_PATHS = {
    "TSBS cpu": ("pandas-dataframe-parquet-tcp", "pandas-vectorized-parquet-tcp-w2"),
    "own: strings": ("pandas-dataframe-parquet-tcp", "pandas-threads-parquet-tcp-w2"),
}
TO_SQL = SQL_PATHS[0]


def string_table(rows: int, seed: int = 11) -> pa.Table:
    """A log-like table: time, a service (a symbol), five strings of many values, a latency."""
    rng = np.random.default_rng(seed)
    stems = ("alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta", "zeta")
    words = np.array([f"{w}{i}" for i, w in enumerate(stems * 40)])

    def text(min_words: int, max_words: int) -> pa.Array:
        n = rng.integers(min_words, max_words + 1, rows)
        picks = rng.integers(0, len(words), (rows, max_words))
        return pa.array([" ".join(words[picks[i, : n[i]]]) for i in range(rows)], pa.string())

    return pa.table({
        "ts": pa.array(1_735_689_600_000_000 + np.arange(rows) * 1_000, pa.timestamp("us", "UTC")),
        "service": pa.array(rng.choice([f"svc-{i}" for i in range(12)], rows)).dictionary_encode(),
        "user_id": pa.array([f"user-{v:08d}" for v in rng.integers(0, 10**7, rows)]),
        "path": pa.array([f"/api/v{v % 3}/items/{v}" for v in rng.integers(0, 10**6, rows)]),
        "message": text(2, 8),
        "agent": text(1, 4),
        "trace": pa.array([f"{v:016x}" for v in rng.integers(0, 2**62, rows)]),
        "latency_ms": pa.array(rng.gamma(2.0, 20.0, rows)),
    })  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=50_000, help="rows of each table (default: 50k)")
    p.add_argument("--repeats", type=int, default=3, help="(default: 3)")
    a = p.parse_args()
    epochs = max(1, a.rows // HOSTS)
    with (
        tempfile.TemporaryDirectory(prefix="ingestbench-pgwire-") as tmp,
        dataset_and_server(min(HOSTS, a.rows), epochs) as (params, paths, qdb, config),
    ):
        own_file = Path(tmp) / "strings.parquet"
        pq.write_table(string_table(a.rows), own_file)
        entry = {"label": "strings", "path": str(own_file), "timestamp": "ts",
                 "symbols": ["service"]}  # fmt: skip
        manifest = write_own_manifest(OwnDataset.from_config(entry), Path(tmp) / "m.json")
        protocol = config["ilp_protocol_version"]
        jobs: dict[tuple[str, str], Job] = {}
        for data, ilp in ILP_PATHS.items():
            for name in (*SQL_PATHS, *ilp):
                v = parse_variant_name(name)
                if data == "TSBS cpu":
                    job = cpu_job(qdb, TABLE, v, paths["parquet"], params.rows, protocol,
                                  field_type=params.field_type)  # fmt: skip
                else:
                    parts = job_parts(v, manifest, own_file, TABLE, None)
                    job = Job(qdb, v, own_file, parts, protocol)
                jobs[data, name] = job
        guards = {key: checked(job, config) for key, job in jobs.items()}
        warm_up_each(list(jobs.values()), config["warmup_rows"])
        runs: dict[tuple[str, str], list] = {key: [] for key in jobs}
        for i in range(a.repeats):  # round-robin: drift on the machine hits every path alike
            for key, job in jobs.items():
                runs[key].append(run_repeat(job, i, guards=guards[key]))
    print(f"\nmedians of {a.repeats} interleaved rounds, every repeat checked as the workflow "
          f"checks it\n")  # fmt: skip
    for data in ILP_PATHS:
        rows = next(job.rows for (d, _), job in jobs.items() if d == data)
        print(f"{data}, {rows:,} rows")
        print(f"{'variant':<42}{'rows/s':>10}{'client CPU-s/1M':>17}{'server CPU-s/1M':>17}"
              f"{'x to_sql':>10}")  # fmt: skip
        base = None
        for (d, name), job in jobs.items():
            if d != data:
                continue
            rs = runs[d, name]
            rate = statistics.median(job.rows / r["end_to_end"] for r in rs)
            client = statistics.median(r["client_cpu_s"] for r in rs) * 1e6 / job.rows
            server = statistics.median(r["server_cpu_s"] for r in rs) * 1e6 / job.rows
            base = base or (rate if name == TO_SQL else None)
            print(f"{name:<42}{rate:>10,.0f}{client:>17.2f}{server:>17.2f}{rate / base:>10.1f}")
        print()


if __name__ == "__main__":
    main()
