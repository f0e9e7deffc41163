"""The first row of a CSV that QuestDB's import could not read, found by DuckDB when an import
rejected rows: QuestDB counts the rows it rejects but does not say which (`/imp`), or stops
without the row itself (`COPY`), and a message that quotes the row says what to fix.

Each column is held to what QuestDB reads for its type: a time column to its pattern (the regex
of its letters, or the user's strptime format), a number to a number, a boolean to true or
false; strings read as they are.
"""

from __future__ import annotations

from pathlib import Path

from ingestbench.columnar.duckdb_sql import duck, ident, sql_str
from ingestbench.own.csv_times import pattern_regex
from ingestbench.tables.spec import TableSpec

#: QuestDB type -> a DuckDB predicate on the text `{c}` that holds when QuestDB reads it.
_READS = {
    "INT": "TRY_CAST({c} AS BIGINT) IS NOT NULL",
    "LONG": "TRY_CAST({c} AS BIGINT) IS NOT NULL",
    "FLOAT": "TRY_CAST({c} AS DOUBLE) IS NOT NULL",
    "DOUBLE": "TRY_CAST({c} AS DOUBLE) IS NOT NULL",
    "BOOLEAN": "lower({c}) IN ('true', 'false')",
    "DATE": "TRY_CAST({c} AS DATE) IS NOT NULL",
}
#: Characters of a row quoted in a message.
QUOTE_CHARS = 200


def _reads(spec: TableSpec, column: str, patterns: dict[str, str], strptime: str | None) -> str:
    c = ident(column)
    qtype = spec.questdb_type(column) if hasattr(spec, "questdb_type") else None
    if column == spec.timestamp or column in patterns or qtype == "TIMESTAMP":
        if strptime:
            ok = f"try_strptime({c}, {sql_str(strptime)}) IS NOT NULL"
        elif column in patterns:
            ok = f"regexp_full_match({c}, {sql_str(pattern_regex(patterns[column]))})"
        else:
            return "true"  # the import's own detection: no pattern to hold it to
        return ok if column == spec.timestamp else f"({c} IS NULL OR {ok})"
    if qtype is None:  # a TSBS table: symbols, then fields of its kinds
        qtype = "SYMBOL" if column in spec.tags else spec.kind(column).upper()
    rule = _READS.get(qtype.split("(")[0].replace("DECIMAL", "DOUBLE"))
    return f"({c} IS NULL OR {rule.format(c=c)})" if rule else "true"


def first_rejected_row(
    path: Path,
    spec: TableSpec,
    patterns: dict[str, str],
    delimiter: str = ",",
    null_values: tuple[str, ...] = ("",),
    strptime: str | None = None,
    columns: tuple[str, ...] | None = None,
) -> tuple[int, str, str] | None:
    """(row number from 1, column, the row as the file writes it) of the first row QuestDB's
    import cannot read, or None when every row reads (the import refused something else)."""
    columns = columns or getattr(spec, "file_columns", None) or spec.columns
    checks = {c: _reads(spec, c, patterns, strptime) for c in columns}
    failing = " OR ".join(f"NOT ({p})" for p in checks.values() if p != "true") or "false"
    which = " ".join(f"WHEN NOT ({p}) THEN {sql_str(c)}" for c, p in checks.items() if p != "true")
    nulls = ", ".join(sql_str(v) for v in null_values)
    rows = (f"read_csv({sql_str(path)}, header = true, all_varchar = true, parallel = false, "
            f"delim = {sql_str(delimiter)}, nullstr = [{nulls}])")  # fmt: skip
    con = duck()
    try:
        row = con.execute(
            f"SELECT n, CASE {which or 'WHEN true THEN NULL'} END, * EXCLUDE (n) FROM "
            f"(SELECT row_number() OVER () AS n, * FROM {rows}) WHERE {failing} ORDER BY n LIMIT 1"
        ).fetchone()
    except Exception:  # noqa: BLE001 (a file DuckDB cannot read: the import's words stand alone)
        return None
    finally:
        con.close()
    if row is None:
        return None
    text = delimiter.join("" if v is None else str(v) for v in row[2:])
    return int(row[0]), str(row[1]), text[:QUOTE_CHARS]
