"""The delivery experiment: every path × fault × point on one restartable server, each case
checked row for row; delivery.csv, the histories and the matrix.

A path first loads once to warm up, then twice as its controls: their median time (over
ILP/TCP, until the table showed every row) is the window each fault point is drawn from,
uniformly, from the seed. Points are drawn until `points` of them overlapped a request (at most
`max_points`). A case: a fresh table (with DEDUP for a `-dedup` path), a relay in front of the
server for the relay's control and the cuts, the load with the fault done on its own clock, then
the fault's end awaited (the restart, the resumption), the table settled (history.settle),
exported and compared with the source, each missing row by what its batch's client was told.
What a case finds is recorded, never raised: a case that fails outright is a row with its error.
Every relay ends with its case, and the server and its data directory with the experiment, also
on failure.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import logging
import statistics
import time
from pathlib import Path
from typing import Any

from ingestbench.config import QuestDBSettings
from ingestbench.delivery.check import check_table
from ingestbench.delivery.faults import CUTS, Injector, Point
from ingestbench.delivery.history import overlapped, settle, visible_at, write_history
from ingestbench.delivery.loaders import Load, run_load
from ingestbench.delivery.matrix import position
from ingestbench.delivery.paths import CONTROLS, DeliveryPath, by_name
from ingestbench.delivery.relay import Relay
from ingestbench.delivery.settings import DeliverySettings
from ingestbench.delivery.source import DeliverySource, delivery_source, why_unsupported
from ingestbench.server.restartable import RestartableServer, restartable_server
from ingestbench.server.table import recreate_table
from ingestbench.tables.spec import TableSpec
from ingestbench.tsbs.columns import cpu_spec

log = logging.getLogger(__name__)
TABLE = "delivery"
#: delivery.csv's record version: 2 has the fault's own clock, `overlapped` and the losses by
#: what the client was told; 3 the distinct positions a cell needs (`points_wanted`).
RECORD_VERSION = 3

#: delivery.csv's columns, one row per case.
COLUMNS = (
    "version", "path", "method", "transport", "dedup", "fault", "point", "fault_s",
    "fault_at_s", "overlapped", "source_rows", "table_rows", "lost", "lost_acknowledged",
    "lost_unknown", "lost_reported", "duplicated", "altered", "errors_seen", "first_error",
    "reported", "claimed_success", "recovery_s", "load_s", "visible_s", "not_applicable",
    "unsupported", "case_error", "points_wanted",
)  # fmt: skip


def _through(server: RestartableServer, relay: Relay | None, path: DeliveryPath):
    """The server's handle, with the path's port replaced by the relay's."""
    qdb = server.qdb
    if relay is None:
        return qdb
    return dataclasses.replace(qdb, **{_port_of(path): relay.port})


def _relay_mode(fault: str) -> str | None:
    return CUTS.get(fault, "stream" if fault == "relay" else None)  # the control never arms


def base_row(path: DeliveryPath, fault: str, point: int = 0) -> dict[str, Any]:
    return {"version": RECORD_VERSION, "path": path.name, "method": path.method,
            "transport": path.transport, "dedup": path.dedup, "fault": fault,
            "point": point}  # fmt: skip


def run_case(
    server: RestartableServer,
    path: DeliveryPath,
    fault: str,
    fault_s: float,
    frame: Any,
    parquet: Path,
    settings: DeliverySettings,
    work: Path,
    spec: TableSpec | None = None,
    histories: Path | None = None,
    point: int = 0,
    relay_mode: str | None = None,
) -> dict[str, Any]:
    """One load with `fault` done `fault_s` seconds into it, checked; its delivery.csv row (its
    history file in `histories`). `spec` is the table's (TSBS's cpu table by default); `frame`
    and `parquet` hold its rows. `relay_mode`: a relay of that mode armed from the start (the
    tests' fake servers)."""
    row = {**base_row(path, fault, point), "fault_s": round(fault_s, 3)}
    if (reason := path.not_applicable(fault)) is not None:
        return {**row, "not_applicable": reason}
    spec = spec or cpu_spec(table=TABLE)
    recreate_table(server.qdb, spec, dedup=path.dedup)
    mode = relay_mode or _relay_mode(fault)
    relay = Relay(getattr(server.qdb, _port_of(path)), mode) if mode else None
    injector, visible = None, None
    try:
        if relay_mode:
            relay.arm()
        injector = Injector(fault, Point(fault_s), server, relay, settings)
        load = Load(path, _through(server, relay, path), spec, frame, parquet, settings,
                    on_ack=injector.on_ack)  # fmt: skip
        injector.start()
        outcome = run_load(load)
        load_s = time.monotonic() - injector.started
        if not path.acknowledged:  # the window runs until every row is visible
            visible = visible_at(server.qdb, spec.table, len(frame), settings.settle_s,
                                 injector.under_way)  # fmt: skip
    finally:
        if injector is not None:
            injector.finish()
        if relay is not None:
            relay.close()
    if injector.error is not None:
        raise injector.error
    fault_at = relay.cut_time() if relay is not None and fault in CUTS else injector.at
    hit = overlapped(fault, fault_at, injector.ended, outcome.history, path.acknowledged,
                     visible)  # fmt: skip
    settle(server.qdb, spec.table, None if path.acknowledged else settings.settle_s)
    found = check_table(server.qdb, spec, parquet, work, _statuses(outcome))
    started = injector.started
    row = {
        **row,
        **dataclasses.asdict(found),
        "overlapped": hit if fault not in CONTROLS else "",
        "errors_seen": len(outcome.errors),
        "first_error": outcome.errors[0] if outcome.errors else "",
        "reported": outcome.gave_up is not None,
        "claimed_success": outcome.claimed_success,
        "fault_at_s": None if fault_at is None else round(fault_at - started, 3),
        "recovery_s": outcome.recovery_s(fault_at),
        "load_s": round(load_s, 3),
        "visible_s": None if visible is None else round(visible - started, 3),
    }
    if histories is not None:
        write_history(histories, f"{path.name}.{fault}.{point}", row, outcome.history, started)
    return row


def _statuses(outcome) -> list[tuple[int, int, str]]:
    return [(b.first_row, b.rows, b.status) for b in outcome.history]


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
    histories: Path | None = None,
) -> list[dict[str, Any]]:
    """Every configured path × fault × point, in that order, on a server of the `questdb`
    settings; each path's warm-up and controls first (they set its window). A path that cannot
    run on the dataset's table is one row per fault, `unsupported` with its reason."""
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
            cases = PathCases(server, path, source, frame, settings, work, histories)
            rows += cases.run()
    return rows


def unsupported_rows(
    path: DeliveryPath, settings: DeliverySettings, reason: str
) -> list[dict[str, Any]]:
    """A path that cannot run on the table: one row per configured fault, with the reason."""
    return [{**base_row(path, fault), "unsupported": reason} for fault in settings.faults]


@dataclasses.dataclass
class PathCases:
    """One path's cases: warm-up, controls, then each fault's points."""

    server: RestartableServer
    path: DeliveryPath
    source: DeliverySource
    frame: Any
    settings: DeliverySettings
    work: Path
    histories: Path | None

    def case(self, fault: str, fault_s: float, point: int) -> dict[str, Any]:
        log.info("delivery: %s under %s at %.3f s", self.path.name, fault, fault_s)
        try:
            return run_case(self.server, self.path, fault, fault_s, self.frame, self.source.path,
                            self.settings, self.work, self.source.spec,
                            self.histories if point >= 0 else None, point)  # fmt: skip
        except Exception as exc:  # noqa: BLE001 (recorded: the job goes on)
            log.exception("delivery case %s/%s/%s failed", self.path.name, fault, point)
            _healthy(self.server)
            return {**base_row(self.path, fault, point), "fault_s": round(fault_s, 3),
                    "case_error": f"{type(exc).__name__}: {exc}"[:300]}  # fmt: skip

    def window_s(self, controls: list[dict[str, Any]]) -> float:
        """The median of the controls' times (over ILP/TCP until every row was visible)."""
        key = "load_s" if self.path.acknowledged else "visible_s"
        times = [float(c[key]) for c in controls if c.get(key) not in (None, "")]
        return statistics.median(times) if times else 1.0

    def run(self) -> list[dict[str, Any]]:
        s = self.settings
        self.case("none", 0.0, -1)  # the warm-up, not recorded
        controls = [self.case("none", 0.0, k) for k in range(2)]
        window = self.window_s(controls)
        rows = controls if "none" in s.faults else []
        for fault in (f for f in s.faults if f != "none"):
            if fault in CONTROLS or self.path.not_applicable(fault):
                rows.append(self.case(fault, 0.0, 0))
                continue
            positions: set[int] = set()  # of the points that overlapped a request (matrix)
            for point, fault_s in enumerate(s.fault_times(self.path.name, fault, window)):
                if len(positions) >= s.points:
                    break
                rows.append(row := self.case(fault, fault_s, point))
                if row.get("overlapped") is True and row.get("fault_at_s") is not None:
                    positions.add(position(row["fault_at_s"]))
        # an exact cell needs this many distinct positions (delivery.matrix)
        return [r | {"points_wanted": s.points} for r in rows]


def to_csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, extrasaction="raise")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: row.get(c) for c in COLUMNS})
    return out.getvalue()
