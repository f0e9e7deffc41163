"""Every repeat checked, cheaply, against its source: one DuckDB pass over the source before the
repeats, one SQL query over QuestDB after each.

Per table: the row count, the rows per value of the first tag (hostname, truck name), and the
sum, min and max of every numeric field and of the timestamp. Both sides group by the first tag
and are folded the same way here, so a repeat that lost, doubled, swapped or changed a row fails
its job, naming the table, the check and the difference, before its timing reaches a median. The
last repeat keeps the row-for-row check of the workflow's validation (validate.rows).

The timestamp's sum is taken of microseconds since the source's first timestamp, so it fits a
LONG per group however long the dataset.

Each table gets the check family its dataset's kind names (ingestbench.datasets: `checks`):
"tsbs", above, or "columns", per column as its kind allows (validate.own_checks, a user's file);
both are compared here the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from ingestbench.columnar.duckdb_sql import (
    check_name,
    duck,
    epoch_us,
    is_integer_type,
    source_relation,
    sql_str,
    unreadable,
)
from ingestbench.datasets import of_spec
from ingestbench.errors import UserError
from ingestbench.server.handle import QuestDB
from ingestbench.tables.spec import TableSpec
from ingestbench.validate.own_checks import (
    own_differences,
    own_questdb_checks,
    own_source_checks,
)

#: Differing keys named in a failure (the rest are counted).
SHOWN_KEYS = 3


class RepeatCheckFailed(UserError):
    """A repeat's table differs from its source."""


def _fold(groups: Iterable[Sequence[Any]], fields: Sequence[str], integer: dict[str, bool],
          ts_base: int) -> dict[str, Any]:  # fmt: skip
    """One table's checks from its rows grouped by the first tag: (key, count, ts sum, ts min,
    ts max, then sum, min, max per field)."""
    groups = list(groups)
    per_key = {("null" if g[0] is None else str(g[0])): int(g[1]) for g in groups}

    def stats(i: int, exact: bool) -> dict[str, Any]:
        sums = [g[i] for g in groups if g[i] is not None]
        lows = [g[i + 1] for g in groups if g[i + 1] is not None]
        highs = [g[i + 2] for g in groups if g[i + 2] is not None]
        total = sum(int(s) for s in sums) if exact else math.fsum(float(s) for s in sums)
        cast = int if exact else float
        return {"sum": total if sums else None,
                "min": cast(min(lows)) if lows else None,
                "max": cast(max(highs)) if highs else None}  # fmt: skip

    return {
        "row_count": sum(per_key.values()),
        "rows_per_key": per_key,
        "timestamp": {**stats(2, exact=True), "base": ts_base},
        "fields": {f: stats(5 + 3 * i, exact=integer[f]) for i, f in enumerate(fields)},
        "integer": integer,
    }


def _relation(path: Path, limit: int | None) -> str:
    """DuckDB SQL for a Parquet or CSV source, or its first `limit` rows in file order."""
    if Path(path).suffix != ".csv":
        return source_relation(path, limit)
    rows = f"read_csv({sql_str(path)}, header = true)"
    return rows if limit is None else f"(SELECT * FROM {rows} LIMIT {int(limit)})"


def source_checks(path: Path, spec: TableSpec, limit: int | None = None) -> dict[str, Any]:
    """The checks of a table's source (Parquet or CSV, or its first `limit` rows in file order),
    by DuckDB. A null field (NaN too: QuestDB stores a null DOUBLE as NaN) is left out, as
    QuestDB leaves it out."""
    con = duck()
    try:
        con.execute(f"CREATE TEMP VIEW src AS SELECT * FROM {_relation(path, limit)}")
        types = {name: str(t) for name, t, *_ in con.execute("DESCRIBE src").fetchall()}
        ts = epoch_us(spec.timestamp, types[spec.timestamp])
        (base,) = con.execute(f"SELECT coalesce(min({ts}), 0) FROM src").fetchone()
        integer = {f: is_integer_type(types[f]) for f in spec.fields}
        exprs = [f"sum({ts} - {base})", f"min({ts})", f"max({ts})"]
        for f in spec.fields:
            if integer[f]:
                exprs += [f"sum({f})", f"min({f})", f"max({f})"]
            else:
                v = f"(CASE WHEN isnan({f}) THEN NULL ELSE {f} END)"
                exprs += [f"fsum({v})", f"min({v})", f"max({v})"]
        key = spec.tags[0]
        groups = con.execute(
            f"SELECT {key}::VARCHAR, count(*), {', '.join(exprs)} FROM src GROUP BY 1"
        ).fetchall()
    except (duckdb.Error, KeyError) as exc:
        raise unreadable(path, exc) from None
    finally:
        con.close()
    return _fold(groups, spec.fields, integer, int(base))


def check_query(table: str, spec: TableSpec, expected: dict[str, Any]) -> str:
    """The one SQL query over QuestDB whose rows `_fold` turns into the table's checks."""
    ts, base = spec.timestamp, int(expected["timestamp"]["base"])
    exprs = [f"sum(cast({ts} AS long) - {base})", f"cast(min({ts}) AS long)",
             f"cast(max({ts}) AS long)"]  # fmt: skip
    for f in spec.fields:
        exact = expected["integer"][f]
        exprs += [f"sum({f})" if exact else f"ksum({f})", f"min({f})", f"max({f})"]
    key = spec.tags[0]
    return f"SELECT {key}, count(), {', '.join(exprs)} FROM {check_name(table)}"


def questdb_checks(qdb: QuestDB, table: str, spec: TableSpec, expected: dict[str, Any]):
    groups = qdb.exact_rows(check_query(table, spec, expected))
    return _fold(groups, spec.fields, expected["integer"], expected["timestamp"]["base"])


def _same(expected: Any, actual: Any, exact: bool, rel_tolerance: float) -> bool:
    if expected is None or actual is None:
        return expected is None and actual is None
    if exact:
        return float(expected) == float(actual)
    return math.isclose(float(expected), float(actual), rel_tol=rel_tolerance, abs_tol=0.0)


def _tolerant(rel_tolerance: float):
    """`_same` at this tolerance: (expected, actual, exact) -> bool."""
    return lambda e, a, exact: _same(e, a, exact, rel_tolerance)


def differences(
    expected: dict[str, Any], actual: dict[str, Any], rel_tolerance: float
) -> list[str]:
    """Each check that differs, as `name (expected E, found A)`; empty when all agree."""
    out = []
    if expected["row_count"] != actual["row_count"]:
        out.append(f"row_count (expected {expected['row_count']}, found {actual['row_count']})")
    e_keys, a_keys = expected["rows_per_key"], actual["rows_per_key"]
    differing = sorted(k for k in set(e_keys) | set(a_keys) if e_keys.get(k) != a_keys.get(k))
    if differing:
        shown = ", ".join(f"{k}: expected {e_keys.get(k, 0)}, found {a_keys.get(k, 0)}"
                          for k in differing[:SHOWN_KEYS])  # fmt: skip
        more = f" and {len(differing) - SHOWN_KEYS} more" if len(differing) > SHOWN_KEYS else ""
        out.append(f"rows_per_key ({shown}{more})")
    columns = {"timestamp": (expected["timestamp"], actual["timestamp"], True)}
    for f, e in expected["fields"].items():
        columns[f] = (e, actual["fields"][f], expected["integer"][f])
    for name, (e, a, exact) in columns.items():
        for stat in ("sum", "min", "max"):
            # Sums of doubles are summed in another order on each side: within the tolerance.
            if not _same(e[stat], a[stat], exact or stat != "sum", rel_tolerance):
                out.append(f"{stat}:{name} (expected {e[stat]!r}, found {a[stat]!r})")
    return out


@dataclass(frozen=True)
class CheckFamily:
    """One way of checking a table: its source's checks (file, spec, rows to check, whether
    they are all of the source's), the same checks over QuestDB, and what differs at a
    tolerance."""

    source: Callable[[Path, TableSpec, int, bool], dict[str, Any]]
    questdb: Callable[[QuestDB, str, TableSpec, dict[str, Any]], dict[str, Any]]
    differences: Callable[[dict[str, Any], dict[str, Any], TableSpec, float], list[str]]


#: The check families, by the name a dataset kind gives (DatasetKind.checks).
FAMILIES = {
    "tsbs": CheckFamily(
        source=lambda path, spec, rows, whole: source_checks(path, spec, rows),
        questdb=questdb_checks,
        differences=lambda e, a, spec, tolerance: differences(e, a, tolerance),
    ),
    "columns": CheckFamily(  # the file where it is (spec.source); a capped prefix or all of it
        source=lambda path, spec, rows, whole: own_source_checks(spec, None if whole else rows),
        questdb=own_questdb_checks,
        differences=lambda e, a, spec, tolerance: own_differences(e, a, spec, _tolerant(tolerance)),
    ),
}


def family(spec: TableSpec) -> CheckFamily:
    return FAMILIES[of_spec(spec).checks]


def table_source_checks(path: Path, spec: TableSpec, rows: int, whole: bool) -> dict[str, Any]:
    """A table's source checks, of its first `rows` rows in file order (`whole`: all it has)."""
    return family(spec).source(path, spec, rows, whole)


def check_repeat(
    qdb: QuestDB,
    parts: Iterable[tuple[str, TableSpec]],
    expected: dict[str, dict[str, Any]],
    label: str,
    rel_tolerance: float,
) -> None:
    """Raise RepeatCheckFailed naming the first table whose checks differ from its source."""
    for table, spec in parts:
        checks = family(spec)
        found = checks.questdb(qdb, table, spec, expected[table])
        differ = checks.differences(expected[table], found, spec, rel_tolerance)
        if differ:
            others = f" (and {len(differ) - 1} other checks)" if len(differ) > 1 else ""
            raise RepeatCheckFailed(
                f"{label}: table {table} differs from its source in {differ[0]}{others}, so this "
                f"run is no result: see the server log for what it did with the rows, then rerun."
            )
