"""The readers' part of an ingestion job, after its plain repeats (the baseline, no sampler, no
readers, measured as in any run):

1. for each reader count of `readers.counts` (0: the sampler alone, which prices the sampling),
   the variant's repeats again, each with the sampler and that many readers beside it for its
   whole timed span (a fresh table each, as every repeat);
2. for each count above 0, the same queries against the finished table for `idle_s` seconds
   (query latency without ingestion);
3. the samples of every repeat into the series file beside the run file.

The ingestion's last repeat is the one with the most readers, so the table the job exports and
the validation checks row for row is one that was read while it was written.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ingestbench.config import ReadersSettings
from ingestbench.readers.load import QueryLoad
from ingestbench.readers.queries import QueryKind
from ingestbench.readers.series import write_series
from ingestbench.readers.worker import LoadPlan
from ingestbench.variants import SERVER_METHODS


def lag_basis(method: str, transport: str) -> str:
    """How the visibility lag is measured for a path (readers.stats): per acknowledged WAL
    transaction, as the sampled gap over ILP/TCP, or not at all for a server-side import."""
    if method in SERVER_METHODS:
        return "n/a"
    return "gap" if transport == "tcp" else "txn"


def beside_ingestion(
    job: Any,
    settings: ReadersSettings,
    repeat: Callable[..., dict[str, Any]],
    repeats: int,
    series_file: str | Path,
    kinds: tuple[QueryKind, ...],
) -> dict[str, Any]:
    """The run file's `readers` field. `repeat(index, beside=load)` runs one timed repeat (the
    runner's, with the job's guards); `repeats` is the plain repeats' count, which each reader
    count repeats too; `kinds` are the queries the readers send (the dataset kind's)."""
    spec = job.tables[0].spec  # a job of several tables (iot) is read on its first
    basis = lag_basis(job.variant.method, job.variant.transport)
    cores = (settings.pin_cores or {}).get("readers")

    def plan(readers: int, sampled: bool) -> LoadPlan:
        qdb = job.qdb
        return LoadPlan(url=qdb.url, http_kwargs=qdb.access.http_kwargs(), table=spec.table,
                        kinds=kinds, readers=readers, rate_per_s=settings.rate_per_s,
                        sample_interval_s=settings.sample_interval_s if sampled else None,
                        seed=readers, cores=tuple(cores) if cores else None)  # fmt: skip

    runs, series, index = [], [], repeats
    for count in settings.counts:
        done = []
        for _ in range(repeats):
            load = QueryLoad(plan(count, sampled=True), basis)
            result = repeat(index, beside=load)
            result.pop("ilp_bytes", None)  # the plain repeats' figure, the same every time
            figures = load.record()
            series += [(count, index, *sample) for sample in figures.pop("series", [])]
            done.append(result | {"cold": False, "load": figures})
            index += 1
        runs.append({"readers": count, "repeats": done})
    idle = [QueryLoad(plan(count, sampled=False)).run_for(settings.idle_s).record()
            for count in settings.counts if count > 0]  # fmt: skip
    write_series(series_file, series)
    return {
        "counts": list(settings.counts),
        "rate_per_s": settings.rate_per_s,
        "sample_interval_s": settings.sample_interval_s,
        "lag_basis": basis,
        "queries": {k.name: k.template for k in kinds},
        "runs": runs,
        "idle": idle,
        "series_file": Path(series_file).name,
    }
