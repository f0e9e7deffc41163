"""The field columns of a chunk as the encoder's compiled loop takes them: each column's kind
and its values as one plain array, decided by its Arrow type the way the client's
`dataframe()` decides by the pandas dtype.

- floats: DOUBLE, the float64 bytes (protocol 2 sends a double in binary);
- integers: INTEGER (`123i`), as int64;
- booleans: BOOLEAN (`t` or `f`), as 0 or 1;
- strings (and a dictionary column that is no symbol, decoded): STRING, quoted and escaped by
  the loop, which reads the Arrow offsets and bytes as they are (no copy of the text); RAW_STRING
  in a chunk where the column holds no byte to escape, each value then copied whole;
- times: TIME_NS (`123n`) for nanoseconds, TIME_US (`123t`) for every coarser unit, as UTC
  instants whatever the zone; dates as the time at midnight UTC (the workflow's readers turn
  dates into such times too, since the client takes no date column).

A null cell is left out of its line, as the client does; its value in the arrays is never read.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ingestbench.errors import UserError
from ingestbench.ingest.frames.ilp_kernel import (
    BOOLEAN,
    DOUBLE,
    INTEGER,
    RAW_STRING,
    STRING,
    TIME_NS,
    TIME_US,
    has_escapes,
)


class EncodeError(UserError):
    pass


def _is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def field_kind(name: str, t: pa.DataType) -> int:
    """The kind a column of Arrow type `t` is written as; EncodeError for a type ILP cannot
    carry here."""
    if pa.types.is_floating(t):
        return DOUBLE
    if pa.types.is_integer(t):
        if pa.types.is_unsigned_integer(t) and t.bit_width == 64:
            raise EncodeError(
                f"column {name!r} is uint64, and ILP's integers are signed 64-bit; convert it "
                f"to int64 or a float first."
            )
        return INTEGER
    if pa.types.is_boolean(t):
        return BOOLEAN
    if _is_string(t) or pa.types.is_dictionary(t) and _is_string(t.value_type):
        return STRING
    if pa.types.is_timestamp(t):
        return TIME_NS if t.unit == "ns" else TIME_US
    if pa.types.is_date(t):
        return TIME_US
    raise EncodeError(
        f"column {name!r} is {t}; the vectorized encoder writes numbers, booleans, strings, "
        f"times and dates, so convert it or use the dataframe method."
    )


def time_values(column: pa.Array) -> np.ndarray:
    """A time or date column as int64 in the unit it is sent in (nanoseconds as such, every
    other unit as microseconds; a date at midnight UTC); nulls as 0."""
    t = column.type
    if pa.types.is_date(t):
        column = column.cast(pa.timestamp("ms")).cast(pa.timestamp("us"))
    elif t.unit in ("s", "ms"):
        column = column.cast(pa.timestamp("us", tz=t.tz))
    return column.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)


def string_arrays(column: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(int64 offsets of the column's rows, the bytes they point into), Arrow's own buffers
    where it holds them as such."""
    if pa.types.is_dictionary(column.type):
        column = column.dictionary.take(column.indices)
    if pa.types.is_string_view(column.type):
        column = column.cast(pa.large_string())
    _, offsets, data = column.buffers()[:3]
    width = np.int64 if pa.types.is_large_string(column.type) else np.int32
    ends = np.frombuffer(offsets, width)[column.offset : column.offset + len(column) + 1]
    text = np.frombuffer(data, np.uint8) if data is not None else _EMPTY_BYTES
    return ends.astype(np.int64, copy=False), text


def text_bytes(offsets: np.ndarray) -> int:
    """The bytes a string column's rows hold (their offsets' span)."""
    return int(offsets[-1] - offsets[0]) if offsets.size else 0


def field_arrays(columns: list[pa.Array], kinds: list[int]) -> tuple[tuple, ...]:
    """(doubles, ints, offsets, strings): per field the arrays write_lines reads, an empty one
    where the field's kind takes none (every tuple of one array type, as numba types it)."""
    doubles, ints, offsets, strings = [], [], [], []
    for column, kind in zip(columns, kinds, strict=True):
        double = integer = offset = text = None
        # fill_null copies even a column without nulls, into a fresh 64-byte-aligned buffer:
        # the kernel reads that faster than a pandas block's column in place, by more than the
        # copy costs (TSBS's doubles encoded about 15 % slower without it).
        if kind == DOUBLE:
            double = column.cast(pa.float64()).fill_null(0).to_numpy().view(np.uint8)
        elif kind == INTEGER:
            integer = column.cast(pa.int64()).fill_null(0).to_numpy()
        elif kind == BOOLEAN:
            values = column.fill_null(False).to_numpy(zero_copy_only=False)
            integer = values.astype(np.int64)
        elif kind == STRING:
            offset, text = string_arrays(column)
        else:
            integer = time_values(column)
        doubles.append(_EMPTY_BYTES if double is None else plain(double))
        ints.append(_EMPTY_INTS if integer is None else plain(integer))
        offsets.append(_EMPTY_INTS if offset is None else plain(offset))
        strings.append(_EMPTY_BYTES if text is None else plain(text))
    return tuple(doubles), tuple(ints), tuple(offsets), tuple(strings)


def chunk_kinds(kinds: list[int], offsets: tuple, strings: tuple) -> np.ndarray:
    """The kinds as write_lines takes them for this chunk: a STRING column none of whose bytes
    needs escaping here is RAW_STRING, each value copied whole (one pass over the column's
    bytes decides it, cheaper than looking at each byte as it is copied)."""
    chunk = np.array(kinds, np.uint8)
    for f, kind in enumerate(kinds):
        if kind == STRING and not has_escapes(strings[f], offsets[f][0], offsets[f][-1]):
            chunk[f] = RAW_STRING
    return chunk


def plain(values: np.ndarray) -> np.ndarray:
    """A read-only view: write_lines takes the columns as one tuple type, whether Arrow lent
    them (read-only) or NumPy made them."""
    view = values.view()
    view.flags.writeable = False
    return view


_EMPTY_BYTES = plain(np.empty(0, np.uint8))  # a field of another kind
_EMPTY_INTS = plain(np.empty(0, np.int64))
