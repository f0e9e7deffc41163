"""What the QuestDB benchmarks share: a generated dataset and the workflow's server, temporary,
the common arguments, repeats of workflow variants run round-robin and checked as the workflow
checks them, and the CSV a benchmark keeps in its findings folder."""

from __future__ import annotations

import argparse
import contextlib
import csv
import functools
import statistics
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from findings import findings_file

from ingestbench.config import QuestDBSettings, load_config
from ingestbench.ingest.frames.readers import import_libraries
from ingestbench.ingest.methods import Job, cpu_job
from ingestbench.ingest.runner import RepeatGuards, run_repeat
from ingestbench.ingest.warmup import warm_up
from ingestbench.server.configured import questdb_server
from ingestbench.server.handle import QuestDB
from ingestbench.tsbs import DatasetParams, generate
from ingestbench.validate.repeat_checks import table_source_checks
from ingestbench.variants import parse_variant_name

REPO = Path(__file__).resolve().parents[1]
TABLE = "cpu"


def bench_parser(doc: str) -> argparse.ArgumentParser:
    """The benchmark's parser (its docstring's first line) with the dataset's size: 1M rows."""
    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    p.add_argument("--scale", type=int, default=4000, help="hosts (default: 4000)")
    p.add_argument("--epochs", type=int, default=250, help="readings per host (default: 250)")
    return p


@contextlib.contextmanager
def dataset_and_server(
    scale: int, epochs: int, formats: tuple[str, ...] = ("parquet",), field_type: str = "double"
) -> Iterator[tuple[DatasetParams, dict[str, Path], QuestDB, dict]]:
    """(params, {format: path}, server, config): TSBS cpu (seed 42) in a temporary directory and
    a QuestDB started as `config.yaml` says (a fresh embedded one by default); both go on exit."""
    config = load_config(REPO / "config.yaml")
    import_libraries("polars")  # imports are start-up cost, not part of any case
    with tempfile.TemporaryDirectory(prefix="ingestbench-bench-") as tmp:
        params = DatasetParams(scale=scale, epochs=epochs, seed=42, field_type=field_type)
        generate(params, tmp, formats=formats, progress=False)
        paths = {fmt: Path(tmp) / f"{params.name}.{fmt}" for fmt in formats}
        with questdb_server(QuestDBSettings.from_config(config)) as qdb:
            yield params, paths, qdb, config


def variant_arguments(p: argparse.ArgumentParser, repeats: int) -> None:
    """--variant (the fastest client path by default), --field-type and --repeats."""
    p.add_argument("--variant", default="pandas-vectorized-parquet-tcp-w2")
    p.add_argument("--field-type", choices=("double", "long"), default="double")
    p.add_argument("--repeats", type=int, default=repeats, help=f"(default: {repeats})")


@contextlib.contextmanager
def warm_job(a: argparse.Namespace) -> Iterator[tuple[DatasetParams, Job]]:
    """(params, the job of variant `a.variant`) on TSBS cpu of `a.field_type` and a fresh server
    (as dataset_and_server), warmed up as the workflow's jobs are."""
    variant = parse_variant_name(a.variant)
    formats = tuple(dict.fromkeys(("parquet", variant.format)))
    with dataset_and_server(a.scale, a.epochs, formats, a.field_type) as (
        params, paths, qdb, config,
    ):  # fmt: skip
        job = cpu_job(qdb, TABLE, variant, paths[variant.format], params.rows,
                  config["ilp_protocol_version"], field_type=params.field_type)  # fmt: skip
        warm_up_each([job], config["warmup_rows"])
        yield params, job


def medians(runs: list[dict[str, Any]], rows: int) -> tuple[float, float, float]:
    """(rows/s, client and server CPU-s per 1M rows) of `run_repeat` results, medians."""
    per_1m = 1e6 / rows
    return (statistics.median(rows / r["end_to_end"] for r in runs),
            statistics.median(r["client_cpu_s"] for r in runs) * per_1m,
            statistics.median(r["server_cpu_s"] for r in runs) * per_1m)  # fmt: skip


def warm_up_each(jobs: list[Job], warmup_rows: int) -> None:
    """The workflow's untimed warm-up (`warmup_rows` of config.yaml) once per job, before any
    measured run: so that no measured run meets a cold server, as in the workflow's jobs."""
    for job in jobs:
        warm_up(job, warmup_rows, job.rows)


def interleaved(
    jobs: list[Job], repeats: int, warmup_rows: int = 0
) -> dict[str, list[dict[str, Any]]]:
    """{variant name: its repeats}, run round-robin (A, B, C, A, B, C ...) so that drift on a
    noisy machine hits every variant alike; each through the workflow's own `run_repeat`, after
    one warm-up per variant."""
    warm_up_each(jobs, warmup_rows)
    results: dict[str, list[dict[str, Any]]] = {job.variant.name: [] for job in jobs}
    for i in range(repeats):
        for job in jobs:
            results[job.variant.name].append(run_repeat(job, i))
    return results


def checked(job: Job, config: dict) -> RepeatGuards:
    """The guards that check every repeat of `job` as the workflow does: against its tables'
    source checks (computed once, by DuckDB, on the first repeat), within config.yaml's tolerance
    and an hour's deadline."""
    return RepeatGuards(
        functools.partial(_source_checks, job), config["validation"]["rel_tolerance"], 3600.0
    )


def _source_checks(job: Job) -> dict:
    # the check family is the table's kind's
    return {
        p.spec.table: table_source_checks(p.path, p.spec, p.rows, whole=True) for p in job.tables
    }


def write_findings_csv(name: str, rows: list[dict[str, Any]]) -> None:
    """`rows` as the CSV `name` in the findings folder (when run through `make bench-…`), the
    first row's keys its header."""
    target = findings_file(name)
    if target is not None and rows:
        with open(target, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
