"""Which methods can load an own table, decided before its job starts a server: a method that
cannot is `unsupported` with the reason, never a crash. What is known of the client paths comes
from the dtype matrix (docs/dtypes.md, `make run-dtypes`); what is known of the server's imports
from their options. A refusal only a real load reveals (the client or the server refusing a
value) is caught by the ingest job and recorded the same way.
"""

from __future__ import annotations

import re
from typing import Any

from ingestbench.catalogue import METHODS
from ingestbench.own.spec import OwnTableSpec
from ingestbench.tables.column_kinds import decimal_kinds
from ingestbench.variants import Variant

#: strptime directives -> QuestDB's timestamp pattern letters (its CSV import's `pattern`).
_PATTERN = {"%Y": "yyyy", "%m": "MM", "%d": "dd", "%H": "HH", "%M": "mm", "%S": "ss",
            "%f": "SSSUUU", "%z": "Z", "%%": "%"}  # fmt: skip


def questdb_pattern(strptime: str) -> str | None:
    """A strptime format as QuestDB's timestamp pattern; None when it has a directive with no
    equivalent here."""
    out, rest = [], strptime
    while rest:
        if rest.startswith("%"):
            token = rest[:2]
            if token not in _PATTERN:
                return None
            out.append(_PATTERN[token])
            rest = rest[2:]
        else:
            if re.match(r"[A-Za-z]", rest[0]) and rest[0] not in "TZ":
                return None  # a literal letter QuestDB would read as a pattern letter
            out.append(rest[0])
            rest = rest[1:]
    return "".join(out)


def why_cannot_load(variant: Variant, spec: OwnTableSpec, manifest: dict[str, Any]) -> str | None:
    """Why `variant` cannot load this table (one clause), or None when it applies. A row loop
    applies to any size: `rows_cap` caps it to the file's first rows, as on TSBS data. What a
    method cannot carry is its catalogue record's (`own_refusals`, `protocol_2`, `family`)."""
    src, method = spec.source, METHODS[variant.method]
    server_import = method.family == "server"  # QuestDB reads the file itself
    if variant.format not in ("ilp", src.format):
        return f"the file is {src.format} and this variant reads {variant.format}"
    empty = manifest.get("rows_without_values", 0)
    if empty and not server_import:
        return (
            f"{empty:,} row(s) have a null in every column besides the symbols and timestamp, "
            f"and an ILP line needs a value (the server's imports take such rows)"
        )
    if method.protocol_2 and (reason := _protocol_2(method.name, spec, manifest)):
        return reason
    for name in method.own_refusals:
        if name in REFUSALS and (reason := REFUSALS[name](method.name, spec, manifest)):
            return reason
    if server_import and variant.format == "csv":  # QuestDB's CSV imports: /imp and COPY
        return _csv_import_reason(spec, manifest, method.own_refusals)
    return None


def _protocol_1(method: str, spec: OwnTableSpec, manifest: dict[str, Any]) -> str | None:
    if decimal_kinds(spec.kinds):
        return "the ILP text is protocol 1, which carries no decimal (the client paths send 3)"
    return None


def _protocol_2(method: str, spec: OwnTableSpec, manifest: dict[str, Any]) -> str | None:
    if decimals := decimal_kinds(spec.kinds):
        return (
            f"the {method} method writes ILP protocol 2 itself, which carries no decimal, and the "
            f"table has a {decimals[0].upper()} column (the dataframe method sends 3)"
        )
    return None


def _one_file(method: str, spec: OwnTableSpec, manifest: dict[str, Any]) -> str | None:
    if spec.source.directory:
        return "QuestDB's read_parquet() reads one file, and this dataset is a directory of them"
    return None


def _small_int_nulls(method: str, spec: OwnTableSpec, manifest: dict[str, Any]) -> str | None:
    small = ("int8", "int16", "uint8", "uint16")
    nulls = manifest.get("nulls", {})
    if zeroed := [n for n, t in spec.source.types if t in small and nulls.get(n)]:
        return (
            f"QuestDB's read_parquet() reads an 8- or 16-bit integer column as BYTE or SHORT, "
            f"which have no null, so its nulls would arrive as 0 (column {zeroed[0]!r})"
        )
    return None


def _uint32(method: str, spec: OwnTableSpec, manifest: dict[str, Any]) -> str | None:
    if wrapped := [n for n, t in spec.source.types if t == "uint32"]:
        return (
            f"QuestDB's read_parquet() reads a uint32 column as a signed INT, so values from "
            f"2^31 on arrive negative (column {wrapped[0]!r})"
        )
    return None


#: The refusals a catalogue record can name in `own_refusals`, checked in its order; then, for
#: a server's CSV import, the import's own checks, among them the named CSV_IMPORT_REFUSALS.
REFUSALS = {
    "protocol_1": _protocol_1,
    "one_file": _one_file,
    "small_int_nulls": _small_int_nulls,
    "uint32": _uint32,
}
#: `copy_time_columns`: COPY guesses the format of a time column other than the designated one.
CSV_IMPORT_REFUSALS = ("copy_time_columns",)


def _time_columns(spec: OwnTableSpec) -> list[str]:
    return [c for c in spec.file_columns if spec.column_kind(c) == "timestamp"]


def _csv_import_reason(
    spec: OwnTableSpec, manifest: dict[str, Any], refusals: tuple[str, ...]
) -> str | None:
    csv = spec.source.csv
    if tuple(csv.null_values) != ("",):
        return (
            f"QuestDB's CSV import takes only empty fields as nulls, and this file marks them "
            f"{', '.join(repr(v) for v in csv.null_values)}"
        )
    if csv.timestamp_format and questdb_pattern(csv.timestamp_format) is None:
        return (
            f"the timestamp format {csv.timestamp_format!r} has no QuestDB pattern equivalent "
            f"(directives %Y %m %d %H %M %S %f %z)"
        )
    if manifest.get("skipped_columns"):
        return "QuestDB's CSV import loads every column of the file, and the table leaves some out"
    others = [c for c in _time_columns(spec) if c != spec.timestamp]
    if "copy_time_columns" in refusals and others:
        return (
            f"QuestDB's COPY takes a FORMAT for the designated timestamp only and guesses the "
            f"format of any other time column, storing null where the guess fails (column "
            f"{others[0]!r})"
        )
    for column in _time_columns(spec) if not csv.timestamp_format else ():
        found = spec.source.time_pattern(column)
        if found is not None and found.problem:
            return found.problem
    return None


def timestamp_pattern(spec: OwnTableSpec, column: str | None = None) -> str | None:
    """The pattern QuestDB's CSV imports read a time column with (the designated timestamp by
    default): the user's `csv.timestamp_format`, else the one found in the file's first rows;
    None when there is none (a manifest written before the file was checked)."""
    fmt = spec.source.csv.timestamp_format
    if fmt:
        return questdb_pattern(fmt)
    found = spec.source.time_pattern(column or spec.timestamp)
    return found.pattern if found is not None else None


def csv_import_schema(spec: OwnTableSpec) -> list[dict[str, str]]:
    """`/imp`'s schema for the time columns (the table gives every other column's type)."""
    schema = []
    for name in spec.file_columns:
        kind = spec.column_kind(name)
        pattern = timestamp_pattern(spec, name) if kind == "timestamp" else None
        if pattern:  # without one, the import detects ISO 8601 itself
            schema.append({"name": name, "type": "TIMESTAMP", "pattern": pattern})
        elif kind == "date":
            schema.append({"name": name, "type": "DATE", "pattern": "yyyy-MM-dd"})
    return schema


#: The ILP protocol version that carries decimals.
DECIMAL_PROTOCOL = 3


def protocol_for(spec: OwnTableSpec, configured: int) -> int:
    """The ILP protocol a client path sends this table with: the configured one, or 3 for a
    table with decimals (the only version that carries them)."""
    return max(configured, DECIMAL_PROTOCOL) if decimal_kinds(spec.kinds) else configured


def ilp_text_possible(spec: OwnTableSpec, manifest: dict[str, Any]) -> bool:
    """Whether the ILP text can be made: every row has a value, and no column is a decimal."""
    return not manifest.get("rows_without_values") and not decimal_kinds(spec.kinds)
