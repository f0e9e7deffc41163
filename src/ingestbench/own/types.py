"""The one type mapping of own data: an Arrow column type (as pyarrow reads the file) to the
QuestDB column type it lands in, or the reason QuestDB cannot take it. docs/own-data.md shows
this table; a test checks the two agree.
"""

from __future__ import annotations

import pyarrow as pa

from ingestbench.tables.column_kinds import NUMERIC_KINDS, QUESTDB_TYPES, STRING_KINDS  # noqa: F401

#: (Arrow types, kind, note) in the order docs/own-data.md lists them.
MAPPING = (
    ("bool", "boolean", "no nulls: QuestDB's BOOLEAN has no null"),
    ("int8, int16, int32, uint8, uint16", "int", "nullable; the value -2^31 reads as null"),
    ("int64, uint32", "long", "nullable; the value -2^63 reads as null"),
    ("float16, float32", "float", "NaN and null both land as null"),
    ("float64", "double", "NaN and null both land as null"),
    ("dictionary<string> (pandas category, polars Categorical)", "symbol", "the default rule"),
    ("string, large_string, string_view", "varchar", "the default rule; `symbols` overrides"),
    ("timestamp[s|ms|us|ns] with or without zone", "timestamp",
     "kept as UTC instants at microseconds (nanoseconds are truncated)"),
    ("date32, date64", "date", "midnight UTC of the day, milliseconds"),
    ("decimal128, decimal256 (precision up to 76)", "decimal",
     "the file's precision and scale; sent over ILP protocol 3"),
)  # fmt: skip
#: The most digits QuestDB's DECIMAL holds.
MAX_DECIMAL_PRECISION = 76


def _is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def kind_of(t: pa.DataType) -> str | None:
    """The kind an Arrow type maps to, None when QuestDB cannot take it (`why_no_column_type`)."""
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_integer(t):
        if t.bit_width <= 32 and pa.types.is_signed_integer(t) or t.bit_width <= 16:
            return "int"
        if t.bit_width == 64 and pa.types.is_unsigned_integer(t):
            return None
        return "long"
    if pa.types.is_floating(t):
        return "double" if t.bit_width == 64 else "float"
    if pa.types.is_dictionary(t):
        return "symbol" if _is_string(t.value_type) else None
    if _is_string(t):
        return "varchar"
    if pa.types.is_timestamp(t):
        return "timestamp"
    if pa.types.is_date(t):
        return "date"
    if pa.types.is_decimal(t) and t.precision <= MAX_DECIMAL_PRECISION:
        return f"decimal({t.precision},{t.scale})"
    return None


def why_no_column_type(t: pa.DataType) -> str:
    """Why a column of type `t` cannot be loaded, as the end of a sentence."""
    if pa.types.is_unsigned_integer(t):
        return "QuestDB has no unsigned 64-bit integer (LONG holds at most 2^63 - 1)"
    if pa.types.is_decimal(t):
        return f"QuestDB's DECIMAL holds at most {MAX_DECIMAL_PRECISION} digits"
    if pa.types.is_duration(t) or pa.types.is_interval(t):
        return "QuestDB has no duration or interval column"
    if pa.types.is_time(t):
        return "QuestDB has no time-of-day column"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return "QuestDB takes binary columns through neither ILP nor its imports"
    if pa.types.is_null(t):
        return "the column holds only nulls, so its type cannot be told"
    nested = pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_struct(t)
    if nested or pa.types.is_map(t) or pa.types.is_fixed_size_list(t):
        return "QuestDB has no nested (list, struct or map) columns"
    return "QuestDB has no column type for it"


#: Words QuestDB's SQL reserves: a column so named breaks the DDL and the queries unquoted.
RESERVED = frozenset(
    [
        "add",
        "align",
        "all",
        "alter",
        "and",
        "as",
        "asc",
        "between",
        "by",
        "case",
        "cast",
        "column",
        "copy",
        "create",
        "delete",
        "desc",
        "distinct",
        "drop",
        "else",
        "end",
        "except",
        "exists",
        "false",
        "fill",
        "from",
        "group",
        "having",
        "if",
        "in",
        "index",
        "insert",
        "intersect",
        "into",
        "is",
        "join",
        "latest",
        "limit",
        "not",
        "null",
        "offset",
        "on",
        "or",
        "order",
        "partition",
        "rename",
        "sample",
        "select",
        "set",
        "show",
        "table",
        "then",
        "to",
        "true",
        "truncate",
        "union",
        "update",
        "values",
        "when",
        "where",
        "with",
    ]
)


def arrow_type_text(t: pa.DataType) -> str:
    return str(t)


def arrow_type(text: str) -> pa.DataType:
    """The Arrow type from its text (what the manifest keeps of each column)."""
    text = text.strip()
    if text.startswith("timestamp["):
        inner = text[len("timestamp[") : -1]
        unit, _, tz = inner.partition(",")
        tz = tz.strip().removeprefix("tz=") or None
        return pa.timestamp(unit.strip(), tz=tz)
    if text.startswith("dictionary<"):
        return pa.dictionary(pa.int32(), pa.string())
    if text.startswith("decimal"):
        bits, _, rest = text.partition("(")
        precision, scale = (int(v) for v in rest.rstrip(")").split(","))
        return (pa.decimal256 if bits == "decimal256" else pa.decimal128)(precision, scale)
    aliases = {"date32[day]": pa.date32(), "date64[ms]": pa.date64(), "string_view": pa.string()}
    return aliases.get(text) or pa.type_for_alias(text)
