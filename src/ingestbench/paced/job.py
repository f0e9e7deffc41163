"""One paced job: a fresh server, then one path with one flush mode through its steps.

1. warm-up: `warmup_arrivals` arrivals as fast as the path goes (its rate sizes the next);
2. unpaced: back to back for a lead-in and `step_s`; the slope of rows visible over the window
   after the lead-in is the path's maximum;
3. `repeats` times: every rate (rates_of_max times that maximum, and rates_rows_per_s), slowest
   first, back to back on one connection and one fresh table, each step a lead-in, `step_s`
   measured and a tail of one flush period (schedule.plan), so neither a cold start nor the
   final flush falls in a measured window.

Each table is exported and compared row for row with the rows it was sent, as stamped (rows).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ingestbench.config import QuestDBSettings
from ingestbench.errors import UserError
from ingestbench.paced.latency import Window, step_figures, visible_at
from ingestbench.paced.names import PACED_FORMAT, PacedPath
from ingestbench.paced.paths import arrivals_of, open_path
from ingestbench.paced.producers import (
    Arrivals,
    first_visible,
    merged,
    producer_key,
    producers_p99,
    release_all,
    sent_rows_file,
    shares,
)
from ingestbench.paced.rows import reading, source_rows, stamped_rows
from ingestbench.paced.schedule import plan, release
from ingestbench.paced.settings import P999_ARRIVALS, PacedSettings
from ingestbench.readers.sampler import VisibilitySampler
from ingestbench.server.handle import QuestDB
from ingestbench.storage.files import load_json, write_json_atomic
from ingestbench.tables.spec import TableSpec

log = logging.getLogger(__name__)
RECORD_VERSION = 3  # 3: producers, each one's p99
#: The unpaced step's rows at most (cut before it starts, held in memory): a path faster than
#: this over lead-in and window ends its window early, and its record says how long it was.
MAX_UNPACED_ROWS = 3_000_000


class PacedError(UserError):
    pass


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
    fresh_dir(work_dir)
    with questdb_server(server, jar, server_log) as qdb:
        steps = run_steps(qdb, path, spec, parquet, paced, protocol, work_dir)
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
    source: Path,
    paced: PacedSettings,
    protocol: int,
    work_dir: Path,
) -> list[dict[str, Any]]:
    """The warm-up, the unpaced step, then each repeat's rates: a list of their records. A
    repeat runs only the rates up to the lowest one that failed so far (that one again, to see
    whether it fails in every repeat)."""
    source = source_rows(spec, Path(source))  # once: every step's rows are cut from it
    Path(work_dir).mkdir(parents=True, exist_ok=True)
    warmup = run_unpaced(qdb, path, spec, source, paced, protocol, work_dir, None)
    unpaced = run_unpaced(qdb, path, spec, source, paced, protocol, work_dir,
                          warmup["warm_rows_per_s"])  # fmt: skip
    maximum = unpaced["visible_rows_per_s"]
    if not maximum > 0:
        raise PacedError(
            f"{path.name}: no row became visible during the unpaced step's "
            f"{unpaced['measured_s']:.1f} s window, so it has no maximum to pace from; see the "
            f"server log, or lengthen paced.step_s."
        )
    rates = rate_list(paced, maximum)
    out, lowest_failed = [warmup, unpaced], math.inf
    for repeat in range(paced.repeats):
        ran = [r for r, _f in rates if r <= lowest_failed]
        steps = run_repeat(qdb, path, spec, source, paced, protocol, ran, repeat, work_dir)
        for step in steps:
            step["of_max"] = dict(rates).get(step["rows_per_s"])
        failed = [s["rows_per_s"] for s in steps if s.get("status") != "pass"]
        lowest_failed = min([lowest_failed, *failed])
        out += steps + [skipped(r, repeat, lowest_failed) for r, _f in rates if r not in ran]
    return out


def rate_list(paced: PacedSettings, maximum: float) -> list[tuple[float, float | None]]:
    """Each offered rate with its fraction of the maximum (None: given in rows/s), slowest first."""
    rates = [(f * maximum, f) for f in paced.rates_of_max]
    rates += [(r, None) for r in paced.rates_rows_per_s]
    return sorted(rates, key=lambda r: r[0])


def skipped(rate: float, repeat: int, failed: float) -> dict[str, Any]:
    why = f"a lower rate ({failed:,.0f} rows/s) failed before it"
    return {"name": f"{rate:.0f}", "kind": "paced", "repeat": repeat, "rows_per_s": rate,
            "status": "skipped", "skipped": why}  # fmt: skip


def run_unpaced(
    qdb: QuestDB,
    path: PacedPath,
    spec: TableSpec,
    source: Path | pa.Table,  # the dataset's Parquet, or its rows read once
    paced: PacedSettings,
    protocol: int,
    work_dir: Path,
    estimate_rows_per_s: float | None,
) -> dict[str, Any]:
    """Without an estimate, the warm-up: `warmup_arrivals` back to back, untimed but for its
    rate. With one, the unpaced step: back to back for its lead-in and `step_s`, on arrivals
    enough for twice the warm-up's rate; the slope of rows visible over the window after the
    lead-in is the path's maximum."""
    k = paced.arrival_rows
    if estimate_rows_per_s is None:
        name, count, until = "warmup", paced.warmup_arrivals, None
        offsets = np.arange(count) * 1e-3  # stamped a millisecond apart: any increasing time
    else:
        name, until = "unpaced", paced.lead_in_s + paced.step_s
        # twice the warm-up's rate (it ran cold), never fewer than ten warm-ups' arrivals
        most = int(min(MAX_UNPACED_ROWS, 2 * estimate_rows_per_s * until))
        count = max(10 * paced.warmup_arrivals, most // k + 1)
        offsets = np.arange(count) * (k / (2 * estimate_rows_per_s))
    rows = stamped_rows(source, spec, offsets, k, paced.cycled, work_dir / f"{name}.parquet")
    spec = reading(spec, rows)
    arrivals = arrivals_of(read_rows(rows, path, spec), path, k, count)
    table = fresh_table(qdb, spec, name)
    with sampler_on(qdb, table, paced) as sampler:
        with open_path(qdb, path, table, paced, protocol, columns_of(spec)) as sender:
            released = release(arrivals, sender.send, sender.finish, None, until_s=until)
        visible = seen_all(sampler, released.sent * k, paced, path, name)
    start = released.due[0]
    t0, t1 = (start, released.accepted[-1]) if until is None else (
        start + paced.lead_in_s, min(start + until, released.accepted[-1]))  # fmt: skip
    first, end = (int(i) for i in np.searchsorted(released.due, [t0, t1]))
    first = min(first, released.sent - 2)  # a pool spent before the lead-in ended: its end
    window = Window(first, max(end, first + 2), released.due[first], t1, None)
    figures = step_figures(window, released.due, released.started, released.accepted, visible,
                           sampler.samples, sampler.failed_at, k, paced.latency_bound_s,
                           P999_ARRIVALS)  # fmt: skip
    log.info("%s %s: %.0f rows/s sent, %.0f visible over %.1f s", path.name, name,
             figures.sent_rows_per_s, figures.visible_rows_per_s, figures.measured_s)  # fmt: skip
    doc = {
        "name": name,
        "kind": name,
        "repeat": None,
        "rows_per_s": None,
        "table": table.table,
        **figures.to_dict(),
        # the warm-up is not judged; the unpaced step is measured or not, never passed
        "status": "untimed"
        if until is None
        else "measured"
        if figures.measured
        else "not measured",
    }
    doc["validation"] = validate_step(qdb, table, rows, released.sent * k, work_dir)
    # the warm-up's second half, once the path is warm (a first call may compile or connect)
    half = released.sent // 2
    warm_s = released.accepted[-1] - released.started[half]
    doc["warm_rows_per_s"] = (released.sent - half) * k / warm_s if warm_s > 0 else math.inf
    return doc


def run_repeat(
    qdb: QuestDB,
    path: PacedPath,
    spec: TableSpec,
    source: pa.Table,  # the dataset's rows, read once
    paced: PacedSettings,
    protocol: int,
    rates: list[float],
    repeat: int,
    work_dir: Path,
) -> list[dict[str, Any]]:
    """Every rate's step back to back on one table (each lead-in after the previous step's
    tail), on one connection per producer, its rows cut and stamped before it starts. A step
    whose producer runs later than twice the bound, or whose backlog exceeds twice the bound's
    rows, has failed beyond doubt: the repeat stops there."""
    k, bound, n = paced.arrival_rows, paced.latency_bound_s, path.producers
    planned = plan(rates, k, paced.lead_in_s, paced.step_s,
                   lambda rate: paced.tail_s(rate, path.flush))  # fmt: skip
    key = producer_key(spec) if n > 1 else None
    sources = [source] if key is None else shares(source, key, n)
    files = [stamped_rows(rows, spec, planned.offsets[p::n], k, paced.cycled,
                          work_dir / f"repeat{repeat}{f'-p{p}' if n > 1 else ''}.parquet")
             for p, rows in enumerate(sources)]  # fmt: skip
    arrivals = [arrivals_of(read_rows(f, path, reading(spec, f)), path, k,
                            len(planned.offsets[p::n])) for p, f in enumerate(files)]  # fmt: skip
    table = fresh_table(qdb, reading(spec, files[0]), f"r{repeat}")
    pairs = zip(planned.segments[1:], planned.segments[:-1], strict=True)
    starts = {seg.first: before for seg, before in pairs}

    def go_on(i: int, late_s: float) -> bool:
        """Checked as each step starts, on the one before it (never mid-step)."""
        if (before := starts.get(i)) is None:
            return True
        seen = sampler.samples[-1].visible if sampler.samples else 0
        return late_s <= 2 * bound and i * k - seen <= 2 * bound * before.rows_per_s + k

    with sampler_on(qdb, table, paced, key) as sampler:
        with contextlib.ExitStack() as senders:
            columns = columns_of(spec)
            streams = [senders.enter_context(open_path(qdb, path, table, paced, protocol, columns))
                       for _ in files]  # fmt: skip
            if n == 1:
                released = release(arrivals[0], streams[0].send, streams[0].finish,
                                   planned.offsets, go_on=go_on)  # fmt: skip
                each = [released]
            else:
                each = release_all(arrivals, streams, planned.offsets, go_on)
                released = merged(each)
        sent_rows = sum(r.sent for r in each) * k
        wait_visible(sampler, sent_rows, paced, path, f"repeat {repeat}")
    if n == 1:
        visible = visible_at(sampler.samples, np.arange(1, released.sent + 1) * k)
        sent = files[0]
    else:
        assert key is not None  # several producers share out a key
        shown = [Arrivals.of_file(f, key, spec.timestamp, k) for f in files]
        visible = first_visible(sampler.samples, shown, released.sent)
        sent = sent_rows_file(
            files, [r.sent * k for r in each], work_dir / f"repeat{repeat}-sent.parquet"
        )
    validation = validate_step(qdb, reading(table, sent), sent, sent_rows, work_dir)
    out = []
    for seg in planned.segments:
        step = {"name": f"{seg.rows_per_s:.0f}", "kind": "paced", "repeat": repeat,
                "rows_per_s": seg.rows_per_s, "table": table.table}  # fmt: skip
        if seg.end > released.sent:
            out.append(step | {"status": "stopped", "skipped": "the repeat stopped after a "
                               "step that failed beyond doubt"})  # fmt: skip
            continue
        due = released.due
        window = Window(seg.window_first, seg.window_end, due[seg.window_first],
                        due[seg.window_end - 1] + k / seg.rows_per_s, seg.rows_per_s)  # fmt: skip
        figures = step_figures(window, due, released.started, released.accepted, visible,
                               sampler.samples, sampler.failed_at, k, bound,
                               P999_ARRIVALS)  # fmt: skip
        log.info("%s repeat %d at %.0f rows/s: visible %.0f, p99 %.3f s, %s", path.name,
                 repeat, seg.rows_per_s, figures.visible_rows_per_s, figures.latency["p99"],
                 figures.status)  # fmt: skip
        fairness = producers_p99(window, due, visible, n)
        out.append(step | figures.to_dict() | fairness | {"validation": validation})
    return out


def fresh_table(qdb: QuestDB, spec: TableSpec, name: str) -> TableSpec:
    from ingestbench.server.table import recreate_table

    table = dataclasses.replace(spec, table=qdb.table_name(f"paced_{name}"))
    recreate_table(qdb, table)
    return table


@contextlib.contextmanager
def sampler_on(
    qdb: QuestDB, table: TableSpec, paced: PacedSettings, key: str | None = None
) -> Iterator[VisibilitySampler]:
    """The visibility sampler on `table` (with each `key` value's latest timestamp, for several
    producers), its baseline taken before any row is sent."""
    # in a process of its own: the producers' threads hold the interpreter most of a step
    sampler = VisibilitySampler(qdb.url, qdb.access.http_kwargs(), table.table,
                                paced.sample_interval_s,
                                None if key is None else (key, table.timestamp),
                                own_process=True)  # fmt: skip
    with sampler:
        sampler.wait_for(0, paced.visible_timeout_s)
        yield sampler


def seen_all(sampler: VisibilitySampler, rows: int, paced: PacedSettings, path: PacedPath,
             what: str) -> np.ndarray:  # fmt: skip
    """Wait until every row sent is visible; when each arrival's last row first was."""
    wait_visible(sampler, rows, paced, path, what)
    return visible_at(sampler.samples, np.arange(1, rows // paced.arrival_rows + 1)
                      * paced.arrival_rows)  # fmt: skip


def wait_visible(sampler: VisibilitySampler, rows: int, paced: PacedSettings, path: PacedPath,
                 what: str) -> None:  # fmt: skip
    """Wait until every row sent is visible (the job fails after visible_timeout_s)."""
    if not sampler.wait_for(rows, paced.visible_timeout_s):
        seen = sampler.samples[-1].visible if sampler.samples else 0
        raise PacedError(
            f"{path.name}: {what} sent {rows} rows and {seen} were visible "
            f"{paced.visible_timeout_s:g} s after its last arrival; see the server log, or "
            f"raise paced.visible_timeout_s."
        )


def columns_of(spec: TableSpec) -> list[str]:
    return list(spec.columns)


def validate_step(
    qdb: QuestDB, table: TableSpec, sent: Path, rows: int, work_dir: Path
) -> dict[str, Any]:
    """The table exported and compared with the first `rows` rows of `sent` (the rows as
    stamped), row for row (DuckDB, both ways); a difference fails the job."""
    from ingestbench.validate import export_table, row_level_comparison

    export = Path(work_dir) / f"{table.table}.parquet"
    try:
        export_table(qdb, table.table, export)
        result = row_level_comparison(sent, export, rows, max_differences=3, spec=table)
    finally:
        export.unlink(missing_ok=True)
    ok = (not result.get("columns_missing_in_export") and result.get("missing") == 0
          and result.get("unexpected") == 0 and result.get("export_rows") == rows)  # fmt: skip
    if not ok:
        raise PacedError(
            f"table {table.table} does not hold the {rows} rows it was sent, row for row "
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


def read_rows(rows: Path, path: PacedPath, spec: TableSpec) -> Any:
    """The rows written for a step in the path's library (read before it starts)."""
    from ingestbench.ingest.frames.readers import read_frame

    return read_frame(rows, path.library, PACED_FORMAT, spec=spec)


def fresh_dir(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    Path(path).mkdir(parents=True)
    return Path(path)
