"""A case's history and what it decides: whether its fault overlapped a request, when the table
settled, and the history file (each batch as the client saw it, with its attempts).

Overlapped, from each attempt's start and answer times: a kill inside an attempt; a pause that
intersects one; a relay that did cut; a kill just after an acknowledgement that was done; over
ILP/TCP (no answers), a fault between the first write and the moment the table showed every row.
A fault that overlapped nothing measured nothing: its case is `not measured`, never `exact`.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

from ingestbench.delivery.loaders import Batch
from ingestbench.server.handle import QuestDB
from ingestbench.server.table import wait_wal


def overlapped(
    fault: str,
    at: float | None,
    ended: float | None,
    batches: list[Batch],
    acknowledged: bool,
    visible_at: float | None,
) -> bool:
    """Whether the fault done at `at` (over at `ended`: a pause's end) met a request."""
    if at is None:
        return False
    attempts = [(start, end) for b in batches for start, end, _ in b.attempts]
    if not attempts:
        return False
    if not acknowledged:  # ILP/TCP: from the first write until every row was visible
        first = min(start for start, _ in attempts)
        return at >= first and (visible_at is None or at <= visible_at)
    if fault in ("cut_stream", "cut_response", "kill_after_ack"):
        return True  # done at bytes (an answer) of a request: it met one by construction
    until = at if ended is None or fault.startswith("kill") else ended
    return any(start <= until and at <= end for start, end in attempts)


def wal_applied(qdb: QuestDB, table: str) -> bool:
    """The writer has every transaction the sequencer has, and none waits in its buffer."""
    rows = qdb.rows(f"SELECT writerTxn, sequencerTxn, bufferedTxnSize FROM wal_tables() "
                    f"WHERE name = '{table}'")  # fmt: skip
    return bool(rows) and rows[0][0] == rows[0][1] and not rows[0][2]


def count_when_applied(qdb: QuestDB, table: str) -> int:
    while True:
        wait_wal(qdb, table)
        if wal_applied(qdb, table):
            return int(qdb.scalar(f"SELECT count() FROM {table}"))
        time.sleep(0.05)


def settle(qdb: QuestDB, table: str, stand_still_s: float | None) -> int:
    """Until the WAL is applied and the count has stood still, whatever it is: for
    `stand_still_s` (ILP/TCP, which commits on its own schedule and could add rows late), or
    for two equal counts in a row (None: HTTP and PGWire answer after their commit)."""
    last, since = -1, time.monotonic()
    while True:
        count = count_when_applied(qdb, table)
        now = time.monotonic()
        if count == last and (stand_still_s is None or now - since >= stand_still_s):
            return count
        if count != last:
            last, since = count, now
        time.sleep(0.1)


def visible_at(qdb: QuestDB, table: str, rows: int, give_up_s: float, busy: Any) -> float | None:
    """Over ILP/TCP: when the table first showed every row (time.monotonic()), polling while
    `busy()` (a fault under way: the server may not answer); None if its count stood still
    below `rows` for `give_up_s`."""
    last, since = -1, time.monotonic()
    while True:
        count = -1
        with contextlib.suppress(Exception):  # a killed or paused server: poll on
            count = int(qdb.scalar(f"SELECT count() FROM {table}"))
        now = time.monotonic()
        if count >= rows:
            return now
        if count != last or busy():
            last, since = count, now
        elif now - since >= give_up_s:
            return None
        time.sleep(0.05)


def write_history(
    folder: Path, name: str, row: dict[str, Any], batches: list[Batch], started: float
) -> None:
    """The case's history file: its delivery.csv row and each batch with its attempts (seconds
    from the load's start)."""

    def since(t: float) -> float:
        return round(t - started, 4)

    doc = {"case": row, "history": [
        {**b.as_json(), "attempts": [[since(s), since(e), err] for s, e, err in b.attempts]}
        for b in batches]}  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(doc, indent=1, default=str) + "\n")
