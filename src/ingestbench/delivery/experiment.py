"""The delivery experiment: every path × fault × point on one restartable server, each case
checked row for row; delivery.csv and the matrix.

A case: a fresh table (with DEDUP for a `-dedup` path), a relay in front of the server for the
cuts, the load with the fault injected at its point, then the fault's end awaited (the restart,
the resumption), the WAL applied, the table exported and compared with the source. What a case
finds is recorded, never raised: a case that fails outright is a row with its error. Every relay
ends with its case, and the server and its data directory with the experiment, also on failure.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import logging
import time
from pathlib import Path
from typing import Any

from ingestbench.catalogue import METHODS
from ingestbench.config import QuestDBSettings
from ingestbench.delivery.check import check_table
from ingestbench.delivery.faults import CUTS, Injector, Point
from ingestbench.delivery.loaders import Load, run_load
from ingestbench.delivery.paths import DeliveryPath, by_name
from ingestbench.delivery.relay import Relay
from ingestbench.delivery.settings import DeliverySettings
from ingestbench.delivery.source import DeliverySource, delivery_source, why_unsupported
from ingestbench.server.restartable import RestartableServer, restartable_server
from ingestbench.server.table import recreate_table, wait_wal
from ingestbench.tables.spec import TableSpec
from ingestbench.tsbs.columns import cpu_spec

log = logging.getLogger(__name__)
TABLE = "delivery"

#: delivery.csv's columns, one row per path × fault × point.
COLUMNS = (
    "path", "method", "transport", "dedup", "fault", "point", "source_rows", "table_rows",
    "lost", "duplicated", "altered", "errors_seen", "first_error", "reported", "claimed_success",
    "fault_at_s", "recovery_s", "load_s", "not_applicable", "unsupported", "case_error",
)  # fmt: skip


def _through(server: RestartableServer, relay: Relay | None, path: DeliveryPath):
    """The server's handle, with the path's port replaced by the relay's."""
    qdb = server.qdb
    if relay is None:
        return qdb
    port = {"http": "http_port", "tcp": "ilp_port", "pg": "pg_port"}[path.transport]
    return dataclasses.replace(qdb, **{port: relay.port})


def _point(path: DeliveryPath, fault: str, share: float, rows: int, baseline_s: float) -> Point:
    if METHODS[path.method].one_statement:  # no batches to count: a share of its time
        return Point(seconds=None if fault in CUTS else share * baseline_s)
    return Point(rows=max(1, int(share * rows)))


def run_case(
    server: RestartableServer,
    path: DeliveryPath,
    fault: str,
    share: float,
    frame: Any,
    parquet: Path,
    settings: DeliverySettings,
    work: Path,
    baseline_s: float = 1.0,
    spec: TableSpec | None = None,
) -> dict[str, Any]:
    """One load under one fault, checked; its delivery.csv row. `spec` is the table's (TSBS's
    cpu table by default); `frame` and `parquet` hold its rows."""
    row: dict[str, Any] = {"path": path.name, "method": path.method,
                           "transport": path.transport, "dedup": path.dedup, "fault": fault,
                           "point": share}  # fmt: skip
    if (reason := path.not_applicable(fault)) is not None:
        return {**row, "not_applicable": reason}
    spec = spec or cpu_spec(table=TABLE)
    recreate_table(server.qdb, spec, dedup=path.dedup)
    relay = Relay(getattr(server.qdb, _port_of(path)), CUTS[fault]) if fault in CUTS else None
    injector = None
    try:
        point = _point(path, fault, share, len(frame), baseline_s)
        injector = Injector(fault, point, server, relay, settings)
        load = Load(path, _through(server, relay, path), spec, frame, parquet, settings,
                    progress=injector.progress)  # fmt: skip
        started = time.monotonic()
        injector.start()
        outcome = run_load(load)
        load_s = time.monotonic() - started
    finally:
        if injector is not None:
            injector.finish()
        if relay is not None:
            relay.close()
    if injector.error is not None:
        raise injector.error
    fault_at = relay.cut_time() if relay is not None else injector.at
    settle(server, spec.table, len(frame), settings.settle_s)
    found = check_table(server.qdb, spec, parquet, work)
    return {
        **row,
        **dataclasses.asdict(found),
        "errors_seen": len(outcome.errors),
        "first_error": outcome.errors[0] if outcome.errors else "",
        "reported": outcome.gave_up is not None,
        "claimed_success": outcome.claimed_success,
        "fault_at_s": None if fault_at is None else round(fault_at - started, 3),
        "recovery_s": outcome.recovery_s(fault_at),
        "load_s": round(load_s, 3),
    }


def settle(server: RestartableServer, table: str, expected: int, settle_s: float) -> None:
    """Until the table holds `expected` rows, or its count has stood still for `settle_s`: over
    ILP/TCP nothing says when the server has the rows, which it commits on its own schedule."""
    last, since = -1, time.monotonic()
    while True:
        wait_wal(server.qdb, table)
        count = int(server.qdb.scalar(f"SELECT count() FROM {table}"))
        if count == expected:
            return
        if count != last:
            last, since = count, time.monotonic()
        elif time.monotonic() - since >= settle_s:
            return
        time.sleep(0.1)


def _port_of(path: DeliveryPath) -> str:
    return {"http": "http_port", "tcp": "ilp_port", "pg": "pg_port"}[path.transport]


def _healthy(server: RestartableServer) -> None:
    """A case that failed may leave the server down: start it again on its directory."""
    try:
        server.qdb.sql("SELECT 1", timeout=5)
    except Exception:  # noqa: BLE001 (any failure: restart it)
        log.warning("the server does not answer after a failed case; restarting it")
        server.restart()


def run_experiment(
    settings: DeliverySettings,
    manifest: dict[str, Any],
    data: Path,
    questdb: QuestDBSettings,
    jar: Path,
    work: Path,
    server_log: Path | None = None,
) -> list[dict[str, Any]]:
    """Every configured path × fault × point, in that order, on a server of the `questdb`
    settings; the `none` control first for each path (its time sets a one-statement path's
    points). A path that cannot run on the dataset's table is one row per fault, `unsupported`
    with its reason, and never runs."""
    from ingestbench.ingest.frames.readers import read_frame

    source = delivery_source(manifest, data, TABLE)
    frame = read_frame(source.path, "pandas", "parquet", spec=source.spec)
    rows: list[dict[str, Any]] = []
    work.mkdir(parents=True, exist_ok=True)
    with restartable_server(questdb, jar, server_log) as server:
        for name in settings.paths:
            path = by_name(name)
            if (reason := why_unsupported(path, source)) is not None:
                rows += unsupported_rows(path, settings, reason)
                continue
            rows += _path_cases(server, path, source, frame, settings, work)
    return rows


def unsupported_rows(
    path: DeliveryPath, settings: DeliverySettings, reason: str
) -> list[dict[str, Any]]:
    """A path that cannot run on the table: one row per configured fault, with the reason."""
    return [{"path": path.name, "method": path.method, "transport": path.transport,
             "dedup": path.dedup, "fault": fault, "unsupported": reason}
            for fault in settings.faults]  # fmt: skip


def _path_cases(
    server: RestartableServer,
    path: DeliveryPath,
    source: DeliverySource,
    frame: Any,
    settings: DeliverySettings,
    work: Path,
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    baseline_s = 1.0
    for fault in ("none", *(f for f in settings.faults if f != "none")):
        shares = [0.0] if fault == "none" else settings.fault_points(path.name, fault)
        for share in shares:
            log.info("delivery: %s under %s at %.3f", path.name, fault, share)
            try:
                row = run_case(server, path, fault, share, frame, source.path, settings, work,
                               baseline_s, spec=source.spec)  # fmt: skip
            except Exception as exc:  # noqa: BLE001 (recorded: the job goes on)
                log.exception("delivery case %s/%s/%s failed", path.name, fault, share)
                row = {"path": path.name, "method": path.method, "dedup": path.dedup,
                       "transport": path.transport, "fault": fault, "point": share,
                       "case_error": f"{type(exc).__name__}: {exc}"[:300]}  # fmt: skip
                _healthy(server)
            if fault == "none" and row.get("load_s"):
                baseline_s = float(row["load_s"])
            if fault in settings.faults:
                rows.append(row)
    return rows


def to_csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, extrasaction="raise")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: row.get(c) for c in COLUMNS})
    return out.getvalue()
