"""Every repeat of an own table checked, cheaply, against the user's file (validate.repeat_checks
does the same for TSBS tables): one DuckDB pass over the file (or the prefix a capped row loop
loaded) before the repeats, one SQL query over QuestDB after each.

Per column, what both SQL dialects compute exactly and alike:

- every column: its count of non-null values (NaN is a null, as QuestDB stores a null DOUBLE);
- numbers and the designated timestamp: sum, min and max (a sum of doubles, and the timestamp's,
  taken as a double so a long table cannot overflow it, within the tolerance);
- other times and dates: min and max, as epoch microseconds;
- strings and symbols: the count of distinct values (their lengths are counted differently by
  the two, bytes against characters);
- booleans: the count of true; decimals: the count alone (QuestDB aggregates no DECIMAL).
"""

from __future__ import annotations

from typing import Any

import duckdb

from ingestbench.columnar.duckdb_sql import (
    check_name,
    duck,
    epoch_us,
    ident,
    is_integer_type,
    own_relation,
    own_unreadable,
)
from ingestbench.own.spec import OwnTableSpec
from ingestbench.server.handle import QuestDB
from ingestbench.tables.column_kinds import NUMERIC_KINDS, STRING_KINDS


def _stats(kind: str, designated: bool) -> tuple[str, ...]:
    """A column's checks, by its kind (see the module's docstring)."""
    if designated or kind in NUMERIC_KINDS:
        return ("count", "sum", "min", "max")
    if kind in ("timestamp", "date"):
        return ("count", "min", "max")
    if kind in STRING_KINDS:
        return ("count", "distinct")
    if kind == "boolean":
        return ("count", "true")
    return ("count",)  # a decimal


def _columns(spec: OwnTableSpec) -> list[tuple[str, str, tuple[str, ...]]]:
    """(column, kind, its checks) in the file's order."""
    return [(c, spec.column_kind(c), _stats(spec.column_kind(c), c == spec.timestamp))
            for c in spec.file_columns]  # fmt: skip


def _fold(values: tuple, spec: OwnTableSpec, exact: dict[str, bool], base: int) -> dict[str, Any]:
    """The checks from one row of (count(*), then each column's stats in `_columns` order).
    `exact[column]`: its values are integers (compared exactly); the timestamp's sum is a
    double whatever its values."""
    out: dict[str, Any] = {"own": True, "row_count": int(values[0]), "base": base,
                           "exact": exact, "columns": {}}  # fmt: skip
    i = 1
    for name, _kind, stats in _columns(spec):
        column = {}
        for stat, v in zip(stats, values[i : i + len(stats)], strict=True):
            if v is not None:
                v = int(v) if _exact(stat, name, spec.timestamp, exact) else float(v)
            column[stat] = v
        i += len(stats)
        out["columns"][name] = column
    return out


def _exact(stat: str, column: str, timestamp: str, exact: dict[str, bool]) -> bool:
    if stat in ("count", "distinct", "true"):
        return True
    return exact[column] and not (stat == "sum" and column == timestamp)


def own_source_checks(spec: OwnTableSpec, limit: int | None = None) -> dict[str, Any]:
    """The checks of the user's file (or its first `limit` rows in file order), by DuckDB."""
    con = duck()
    try:
        con.execute(f"CREATE TEMP VIEW src AS SELECT * FROM {own_relation(spec, limit)}")
        types = {name: str(t) for name, t, *_ in con.execute("DESCRIBE src").fetchall()}
        ts = epoch_us(ident(spec.timestamp), types[spec.timestamp])
        (base,) = con.execute(f"SELECT coalesce(min({ts}), 0) FROM src").fetchone()
        exprs, exact = ["count(*)"], {}
        for name, kind, stats in _columns(spec):
            q = ident(name)
            if name == spec.timestamp:
                exact[name] = True
                exprs += [f"count({q})", f"fsum(({ts} - {base})::DOUBLE)", f"min({ts})",
                          f"max({ts})"]  # fmt: skip
            elif kind in NUMERIC_KINDS:
                exact[name] = is_integer_type(types[name]) and kind in ("int", "long")
                v = q if exact[name] else f"(CASE WHEN isnan({q}) THEN NULL ELSE {q} END)"
                if kind == "float":  # as QuestDB's FLOAT: its float value, as a double
                    v = f"CAST(CAST({v} AS FLOAT) AS DOUBLE)"
                total = f"sum({v})" if exact[name] else f"fsum({v})"
                exprs += [f"count({v})", total, f"min({v})", f"max({v})"]
            elif kind in ("timestamp", "date"):
                exact[name] = True
                v = epoch_us(q, types[name])
                exprs += [f"count({v})", f"min({v})", f"max({v})"]
            else:
                exact[name] = True
                exprs.append(f"count({q})")
                if "distinct" in stats:
                    exprs.append(f"count(DISTINCT CAST({q} AS VARCHAR))")
                if "true" in stats:
                    exprs.append(f"count(*) FILTER (WHERE CAST({q} AS BOOLEAN))")
        values = con.execute(f"SELECT {', '.join(exprs)} FROM src").fetchone()
    except (duckdb.Error, KeyError) as exc:
        raise own_unreadable(spec.source.path, exc) from None
    finally:
        con.close()
    return _fold(values, spec, exact, int(base))


def own_check_query(table: str, spec: OwnTableSpec, expected: dict[str, Any]) -> str:
    """The one SQL query over QuestDB whose row `_fold` turns into the table's checks."""
    base, exprs = int(expected["base"]), ["count()"]
    for name, kind, stats in _columns(spec):
        q = ident(name)  # QuestDB quotes a name as DuckDB does
        if name == spec.timestamp:
            exprs += [f"count({q})", f"ksum(cast(cast({q} AS long) - {base} AS double))",
                      f"cast(min({q}) AS long)", f"cast(max({q}) AS long)"]  # fmt: skip
        elif kind in NUMERIC_KINDS:
            v = f"cast({q} AS double)" if kind == "float" else q
            total = f"sum({v})" if expected["exact"][name] else f"ksum({v})"
            exprs += [f"count({v})", total, f"min({v})", f"max({v})"]
        elif kind in ("timestamp", "date"):
            # A DATE is milliseconds, a TIMESTAMP microseconds: both compared as microseconds.
            scale = " * 1000" if kind == "date" else ""
            exprs += [f"count({q})", f"cast(min({q}) AS long){scale}",
                      f"cast(max({q}) AS long){scale}"]  # fmt: skip
        else:
            exprs.append(f"count({q})" if kind != "boolean" else "count()")
            if "distinct" in stats:
                exprs.append(f"count_distinct({q})")
            if "true" in stats:
                exprs.append(f"sum(CASE WHEN {q} THEN 1 ELSE 0 END)")
    return f"SELECT {', '.join(exprs)} FROM {check_name(table)}"


def own_questdb_checks(
    qdb: QuestDB, table: str, spec: OwnTableSpec, expected: dict[str, Any]
) -> dict[str, Any]:
    (values,) = qdb.exact_rows(own_check_query(table, spec, expected))
    return _fold(tuple(values), spec, expected["exact"], expected["base"])


def own_differences(
    expected: dict[str, Any], actual: dict[str, Any], spec: OwnTableSpec, same
) -> list[str]:
    """Each check that differs, as `stat:column (expected E, found A)`; `same(e, a, exact)`
    compares two values (validate.repeat_checks)."""
    out = []
    if expected["row_count"] != actual["row_count"]:
        out.append(f"row_count (expected {expected['row_count']}, found {actual['row_count']})")
    for name, checks in expected["columns"].items():
        for stat, e in checks.items():
            a = actual["columns"][name][stat]
            if not same(e, a, _exact(stat, name, spec.timestamp, expected["exact"])):
                out.append(f"{stat}:{name} (expected {e!r}, found {a!r})")
    return out
