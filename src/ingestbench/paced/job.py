"""One paced job: a fresh server, then one path with one flush mode through its steps.

The steps, each into a fresh table and each validated row for row (DuckDB, against the
dataset's first rows: every step starts at the first row, and the dataset holds the longest
step, so no timestamp repeats):

1. warm-up: `warmup_arrivals` arrivals as fast as the path goes, untimed;
2. unpaced: `step_arrivals` arrivals back to back; its rows over the time from the first send
   to the last row visible is the path's maximum;
3. paced: one step per rate (rates_of_max times that maximum, and rates_rows_per_s), slowest
   first, each `step_arrivals` arrivals on a fixed schedule.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from ingestbench.config import QuestDBSettings
from ingestbench.errors import UserError
from ingestbench.paced.latency import StepFigures, step_figures, visible_at
from ingestbench.paced.names import PACED_FORMAT, PacedPath
from ingestbench.paced.paths import arrivals_of, open_path
from ingestbench.paced.schedule import release
from ingestbench.paced.settings import P999_ARRIVALS, PacedSettings
from ingestbench.readers.sampler import VisibilitySampler
from ingestbench.server.handle import QuestDB
from ingestbench.storage.files import load_json, write_json_atomic
from ingestbench.tables.spec import TableSpec

log = logging.getLogger(__name__)
RECORD_VERSION = 1


class PacedError(UserError):
    pass


@dataclasses.dataclass(frozen=True)
class Step:
    """What one step runs: its name, arrivals and offered rate (None: unpaced)."""

    name: str
    kind: str  # warmup, unpaced, paced
    arrivals: int
    rows_per_s: float | None = None
    of_max: float | None = None


def paced_job(
    server: QuestDBSettings,
    table: str,
    protocol: int,
    paced: PacedSettings,
    path: PacedPath,
    parquet: Path,
    manifest_path: Path,
    record: Path,
    *,
    jar: Path | None = None,
    server_log: Path | None = None,
    work_dir: Path,
) -> dict[str, Any]:
    """Run every step of `path` on a fresh (or the external) server; write its record last."""
    from ingestbench.ingest.environment import host_info
    from ingestbench.server.configured import questdb_server

    manifest = load_json(manifest_path, "dataset manifest")
    spec = _spec(manifest, parquet, table)
    frame = _frame(parquet, path, spec, paced.step_rows)
    with questdb_server(server, jar, server_log) as qdb:
        steps = run_steps(qdb, path, spec, frame, paced, protocol, parquet, work_dir)
        version = qdb.version()
    doc = {
        "record_version": RECORD_VERSION,
        "dataset": manifest.get("name") or Path(parquet).stem,
        "variant": path.name,
        "path": path.path_name,
        **dataclasses.asdict(path),
        "settings": paced.to_dict(),
        "questdb": version,
        "steps": steps,
        "host": host_info(),
    }
    write_json_atomic(record, doc)
    return doc


def run_steps(
    qdb: QuestDB,
    path: PacedPath,
    spec: TableSpec,
    frame: Any,
    paced: PacedSettings,
    protocol: int,
    parquet: Path,
    work_dir: Path,
) -> list[dict[str, Any]]:
    """The warm-up, the unpaced step, then each rate's step: a list of their records."""
    out = []
    plan = [Step("warmup", "warmup", paced.warmup_arrivals),
            Step("unpaced", "unpaced", paced.step_arrivals)]  # fmt: skip
    for step in plan:
        out.append(run_step(qdb, path, spec, frame, paced, protocol, step, parquet, work_dir))
    maximum = out[-1]["achieved_rows_per_s"]
    for step in rate_steps(paced, maximum):
        planned_s = step.arrivals * paced.arrival_rows / step.rows_per_s
        if planned_s > paced.max_step_s:
            log.warning("%s: step %s skipped: it would last %.0f s (paced.max_step_s %.0f)",
                        path.name, step.name, planned_s, paced.max_step_s)  # fmt: skip
            why = f"it would last {planned_s:.0f} s, over paced.max_step_s ({paced.max_step_s:g})"
            out.append({**dataclasses.asdict(step), "skipped": why})
            continue
        out.append(run_step(qdb, path, spec, frame, paced, protocol, step, parquet, work_dir))
    return out


def rate_steps(paced: PacedSettings, maximum: float) -> list[Step]:
    """One step per offered rate, slowest first."""
    rates = [(f * maximum, f) for f in paced.rates_of_max]
    rates += [(r, None) for r in paced.rates_rows_per_s]
    rates.sort(key=lambda r: r[0])
    return [Step(f"rate{i + 1}", "paced", paced.step_arrivals, rate, f)
            for i, (rate, f) in enumerate(rates)]  # fmt: skip


def run_step(
    qdb: QuestDB,
    path: PacedPath,
    spec: TableSpec,
    frame: Any,
    paced: PacedSettings,
    protocol: int,
    step: Step,
    parquet: Path | None,
    work_dir: Path,
) -> dict[str, Any]:
    """One step into a fresh table, its figures, then its table validated row for row."""
    from ingestbench.server.table import recreate_table

    table = dataclasses.replace(spec, table=qdb.table_name(f"paced_{step.name}"))
    recreate_table(qdb, table)
    figures = measure_step(qdb, path, table, frame, paced, protocol, step)
    log.info("%s %s: offered %s rows/s, achieved %.0f, p99 %.3f s, max %.3f s%s",
             path.name, step.name, f"{step.rows_per_s:.0f}" if step.rows_per_s else "-",
             figures.achieved_rows_per_s, figures.latency["p99"], figures.latency["max"],
             "" if figures.sustained else " (not sustained)")  # fmt: skip
    doc = {**dataclasses.asdict(step), "table": table.table, **figures.to_dict()}
    if parquet is not None:
        doc["validation"] = validate_step(qdb, table, parquet, figures.rows, work_dir)
    return doc


def measure_step(
    qdb: QuestDB,
    path: PacedPath,
    table: TableSpec,
    frame: Any,
    paced: PacedSettings,
    protocol: int,
    step: Step,
    during=None,
) -> StepFigures:
    """Send the step's arrivals on schedule while the sampler watches the table; its figures.
    `during(start)` runs once the schedule starts (a test pauses the server there)."""
    k = paced.arrival_rows
    arrivals = arrivals_of(frame, path, k, step.arrivals)
    cumulative = (np.arange(step.arrivals) + 1) * k
    per_s = step.rows_per_s / k if step.rows_per_s else None
    columns = list(frame.columns)
    sampler = VisibilitySampler(qdb.url, qdb.access.http_kwargs(), table.table,
                                paced.sample_interval_s)  # fmt: skip
    with sampler:
        sampler.wait_for(0, paced.visible_timeout_s)  # the baseline sample, before any row
        with open_path(qdb, path, table, paced, protocol, columns) as sender:
            if during is not None:
                during()
            released = release(arrivals, sender.send, sender.finish, per_s)
        if not sampler.wait_for(int(cumulative[-1]), paced.visible_timeout_s):
            seen = sampler.samples[-1].visible if sampler.samples else 0
            raise PacedError(
                f"{path.name}: step {step.name} sent {cumulative[-1]} rows and {seen} were "
                f"visible {paced.visible_timeout_s:g} s after its last arrival; see the server "
                f"log, or raise paced.visible_timeout_s."
            )
    visible = visible_at(sampler.samples, cumulative)
    figures = step_figures(released.due, released.started, visible, released.service_s, k,
                           step.rows_per_s, paced.sample_interval_s, P999_ARRIVALS)  # fmt: skip
    if step.rows_per_s is None:  # unpaced: end to end, first send to last row visible
        span = float(np.nanmax(visible) - released.started[0])
        figures = dataclasses.replace(figures, achieved_rows_per_s=float(figures.rows / span))
    return figures


def validate_step(
    qdb: QuestDB, table: TableSpec, parquet: Path, rows: int, work_dir: Path
) -> dict[str, Any]:
    """The step's table exported and compared with the dataset's first `rows` rows, row for row
    (DuckDB, both ways); a difference fails the job."""
    from ingestbench.validate import export_table, row_level_comparison

    export = Path(work_dir) / f"{table.table}.parquet"
    try:
        export_table(qdb, table.table, export)
        result = row_level_comparison(parquet, export, rows, max_differences=3, spec=table)
    finally:
        export.unlink(missing_ok=True)
    ok = (not result.get("columns_missing_in_export") and result.get("missing") == 0
          and result.get("unexpected") == 0 and result.get("export_rows") == rows)  # fmt: skip
    if not ok:
        raise PacedError(
            f"table {table.table} does not hold the dataset's first {rows} rows row for row "
            f"({ {k: v for k, v in result.items() if not k.startswith('first_')} }); see the "
            f"server log and rerun the job."
        )
    return {"rows": int(result["export_rows"]), "missing": 0, "unexpected": 0, "ok": True}


def _spec(manifest: dict[str, Any], parquet: Path, table: str) -> TableSpec:
    from ingestbench.datasets import of_manifest
    from ingestbench.variants import Variant

    variant = Variant("pandas", "dataframe", PACED_FORMAT, "http")
    sources = of_manifest(manifest).table_sources(variant, manifest, Path(parquet), table)
    return sources[0].spec


def _frame(parquet: Path, path: PacedPath, spec: TableSpec, rows: int) -> Any:
    """The dataset's first `rows` rows in the path's library (read before the server starts)."""
    from ingestbench.ingest.frames.readers import head, read_frame

    return head(read_frame(Path(parquet), path.library, PACED_FORMAT, spec=spec), rows)


def fresh_dir(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    Path(path).mkdir(parents=True)
    return Path(path)
