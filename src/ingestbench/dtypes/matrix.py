"""Run the dtype matrix against one server: every case through every chosen method and transport,
each into a table of its own; write `dtype_matrix.csv` and the readable table.

A cell ends `validated` (the check passed) or `unsupported`, with the reason kept: the client,
the encoder or the server refused the frame; the server dropped its rows over TCP; or the rows
arrived changed (another column type, changed values), a path that does not carry the dtype
although nothing complained, which its reason says ("arrived changed: ..."). Never a pass.
"""

from __future__ import annotations

import csv
import logging
import re
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from ingestbench.dtypes.cases import CASES, ROWS, Case
from ingestbench.dtypes.check import CellMismatch, RowsDropped, check_cell
from ingestbench.dtypes.senders import METHODS, SQL_METHODS, applies, send, sql_table
from ingestbench.errors import UserError
from ingestbench.server.handle import QuestDB
from ingestbench.storage.files import atomic_paths

log = logging.getLogger(__name__)

OUTCOMES = ("validated", "unsupported")
CHANGED = "arrived changed, without an error"  # the reason's start for a silent change
TRANSPORTS = ("http", "tcp", "pg")


class MatrixError(UserError):
    pass


@dataclass(frozen=True)
class Cell:
    library: str
    dtype: str
    method: str
    transport: str
    outcome: str  # one of OUTCOMES
    questdb_type: str  # the type the check expects
    rows: int
    reason: str  # why unsupported; empty when validated


def _reason(exc: BaseException, table: str) -> str:
    """One line: the server's own message out of the client's JSON, the cell's table unnamed
    (so that one cause reads the same in every cell)."""
    text = str(exc)
    if found := re.search(r'"message":"(.*?)","', text):
        text = found.group(1).encode().decode("unicode_escape")
        text = text.replace("failed to parse line protocol:errors encountered on line(s):", "")
    text = " ".join(text.replace(table, "<table>").split()) or type(exc).__name__
    return text[:300]


def run_cell(qdb: QuestDB, case: Case, method: str, transport: str, work: Path) -> Cell:
    table = qdb.table_name(f"dtypes_{CASES.index(case):02d}_{method}_{transport}")
    qdb.sql(f"DROP TABLE IF EXISTS {table}")
    if method in SQL_METHODS:
        sql_table(qdb, table, case.questdb_type)
    outcome, reason = "validated", ""
    try:
        with warnings.catch_warnings():
            # row() warns on every naive datetime that it reads it as UTC, which the case means
            warnings.simplefilter("ignore", UserWarning)
            send(qdb, method, transport, table, case.frame(), case.kind == "symbol")
    except Exception as exc:  # what the client, the encoder or the server said: the finding
        outcome, reason = "unsupported", f"{type(exc).__name__}: {_reason(exc, table)}"
    else:
        try:
            check_cell(qdb, table, case, work / f"{table}.parquet")
        except RowsDropped as exc:
            outcome = "unsupported"
            reason = f"QuestDB dropped the rows without an error over TCP ({exc})"
        except CellMismatch as exc:
            outcome, reason = "unsupported", f"{CHANGED}: {_reason(exc, table)}"
    qdb.sql(f"DROP TABLE IF EXISTS {table}")
    (work / f"{table}.parquet").unlink(missing_ok=True)
    log.info("%s %s %s: %s %s", case.name, method, transport, outcome, reason)
    return Cell(
        case.library, case.dtype, method, transport, outcome, case.questdb_type, ROWS, reason
    )


def run_matrix(
    qdb: QuestDB,
    work: Path,
    methods: Sequence[str] = METHODS,
    transports: Sequence[str] = TRANSPORTS,
    libraries: Sequence[str] = ("pandas", "polars"),
) -> list[Cell]:
    unknown = [m for m in methods if m not in METHODS] + [
        t for t in transports if t not in TRANSPORTS
    ]
    if unknown:
        raise MatrixError(
            f"the dtype matrix has no method or transport {unknown[0]!r}: choose methods from "
            f"{', '.join(METHODS)} and transports from {', '.join(TRANSPORTS)}."
        )
    work.mkdir(parents=True, exist_ok=True)
    return [
        run_cell(qdb, case, method, transport, work)
        for case in CASES
        if case.library in libraries
        for method in methods
        for transport in transports
        if applies(method, transport, case.library)
    ]


def write_csv(cells: Iterable[Cell], path: Path) -> None:
    with atomic_paths(path) as (tmp,), open(tmp, "w", newline="") as fh:
        writer = csv.DictWriter(fh, [f.name for f in fields(Cell)])
        writer.writeheader()
        writer.writerows(asdict(c) for c in cells)


def read_csv(path: Path) -> list[Cell]:
    with open(path, newline="") as fh:
        return [Cell(**{**row, "rows": int(row["rows"])}) for row in csv.DictReader(fh)]


_MARK = {"validated": "✓", "unsupported": "✗"}


def markdown(cells: Sequence[Cell]) -> str:
    """One row per dtype, one column per method and transport; each reason once, numbered."""
    columns = list(dict.fromkeys((c.method, c.transport) for c in cells))
    dtypes = list(dict.fromkeys((c.library, c.dtype, c.questdb_type) for c in cells))
    by_key = {(c.library, c.dtype, c.method, c.transport): c for c in cells}
    reasons: dict[str, int] = {}
    head = ["library", "dtype", "QuestDB type", *(f"{m} {t}" for m, t in columns)]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for library, dtype, qtype in dtypes:
        row = [library, f"`{dtype}`", qtype]
        for method, transport in columns:
            cell = by_key.get((library, dtype, method, transport))
            if cell is None:
                row.append("")
                continue
            mark = _MARK[cell.outcome]
            if cell.reason:
                mark += f" [{reasons.setdefault(cell.reason, len(reasons) + 1)}]"
            row.append(mark)
        lines.append("| " + " | ".join(row) + " |")
    counts = {o: sum(c.outcome == o for c in cells) for o in OUTCOMES}
    lines += [
        "",
        f"{len(cells)} cells: {counts['validated']} validated (✓: every row, value and column "
        f"type checked by DuckDB), {counts['unsupported']} unsupported (✗, the reason in "
        f"its note; {sum(c.reason.startswith(CHANGED) for c in cells)} of them {CHANGED}).",
        "",
    ]
    lines += [f"{n}. {reason}" for reason, n in reasons.items()]
    return "\n".join(lines) + "\n"


def write_markdown(cells: Sequence[Cell], path: Path, versions: str = "") -> None:
    with atomic_paths(path) as (tmp,):
        tmp.write_text((f"{versions}\n\n" if versions else "") + markdown(cells))
