"""ILP (protocol 2) encoded column by column with Arrow and NumPy: a whole chunk at a time.

The questdb client's `dataframe()` walks the frame cell by cell (about 60 ns a cell here), which
puts its serializer alone above 1 CPU-s per 1M TSBS rows. Here the work per column and per
distinct value is done first, and one compiled pass writes the lines:

- symbols: the rows' tag combinations are found from the dictionary codes, and the
  `table,tag=v,... ` prefix is built once per distinct combination (escaped on the dictionary's
  few values);
- fields: each column as a plain array (a double's 8 bytes as they go on the wire in protocol
  2, after ``name==`` and type 16; an integer as int64, written as ``123i``), and each field's
  `name=` literal;
- the timestamp as int64 in the unit it is sent in (nanoseconds as such, every other unit as
  microseconds);
- then ingestbench.ingest.frames.ilp_kernel.write_lines (numba) writes each row's prefix, fields and
  time into one buffer the encoder reuses from chunk to chunk.

The output is byte for byte what the client writes for the same frame (a test compares them),
so the server sees exactly the same lines. A null field cell is left out of its line and a null
symbol's `,tag=value` likewise, as the client does; a null timestamp is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ingestbench.errors import UserError
from ingestbench.ingest.frames.ilp_kernel import row_bound, write_lines

#: What a symbol value escapes (backslash first, so the others' backslashes stay single).
_SYMBOL_ESCAPES = ("\\", "\n", " ", ",", "=")
#: Column names: the client escapes these and refuses ',' and newlines.
_NAME_ESCAPES = ("\\", " ", "=")
_DOUBLE_TYPE = b"\x10"  # protocol 2's type byte for a binary double
_TIME_SUFFIX = {"ns": "n", "us": "t"}  # nanoseconds as such; every other unit as microseconds
_KEY_LIMIT = 1 << 62  # codes combined beyond this are renumbered first (int64 stays exact)
_KNOWN_LIMIT = 1 << 16  # tag sets whose prefixes an encoder keeps from chunk to chunk


class EncodeError(UserError):
    pass


def escape_name(name: str) -> str:
    if "," in name or "\n" in name:
        raise EncodeError(f"column name {name!r} has a ',' or a newline, which ILP cannot carry.")
    for ch in _NAME_ESCAPES:
        name = name.replace(ch, "\\" + ch)
    return name


def _escape_values(values: pa.Array) -> pa.Array:
    values = values.cast(pa.string())
    for ch in _SYMBOL_ESCAPES:
        values = pc.replace_substring(values, ch, "\\" + ch)
    return values


def as_record_batch(frame: Any) -> pa.RecordBatch:
    """A pandas or polars frame (or Arrow already) as one Arrow record batch, zero-copy where
    the library allows (polars always; pandas for numeric, categorical and datetime columns)."""
    if isinstance(frame, pa.RecordBatch):
        return frame
    if isinstance(frame, pa.Table):
        return frame.combine_chunks().to_batches()[0]
    to_arrow = getattr(frame, "to_arrow", None)  # polars
    if to_arrow is not None:
        table = to_arrow()
        if table.num_rows == 0:
            return pa.RecordBatch.from_pylist([], schema=table.schema)
        return table.combine_chunks().to_batches()[0]
    # Column by column with from_pandas=False: NaN stays a NaN (the client sends it as one),
    # where RecordBatch.from_pandas would turn it into a null.
    columns = [pa.array(frame[name], from_pandas=False) for name in frame.columns]
    return pa.RecordBatch.from_arrays(columns, names=[str(name) for name in frame.columns])


class IlpEncoder:
    """Encodes record batches of one table's columns into ILP protocol 2 bytes."""

    def __init__(self, table: str, symbols: Sequence[str], fields: Sequence[str], at: str):
        if not fields:
            raise EncodeError("an ILP line needs at least one field; name the field columns.")
        self.table, self.symbols, self.fields, self.at = table, list(symbols), list(fields), at
        self._prefix_heads = [f",{escape_name(s)}=" for s in self.symbols]
        self._field_names = [escape_name(f) for f in self.fields]
        # The lines' buffer, reused chunk after chunk: a fresh one would cost a page fault
        # per 4 KiB (on TSBS rows, more than writing the lines into it).
        self._out = np.empty(0, np.uint8)
        # (dictionaries, sorted keys, their prefixes): the tag sets met so far (_prefixes).
        self._known: tuple[list, np.ndarray, pa.Array] | None = None
        # Each field layout's literals (integer or double fields), made once.
        self._literal_cache: dict[tuple[bool, ...], tuple[np.ndarray, np.ndarray]] = {}
        # Each symbol's last dictionary and its escaped values: chunks of one file mostly share
        # their dictionaries, and escaping them anew costs more than a small chunk's rows.
        self._escaped: dict[str, tuple[pa.Array, pa.Array]] = {}

    def encode(self, batch: pa.RecordBatch) -> pa.Buffer:
        """The batch's rows as ILP lines, one contiguous buffer: the encoder's own, reused by
        the next call (send or copy it before that)."""
        if batch.num_rows == 0:
            return pa.py_buffer(b"")
        self._check_nulls(batch)
        distinct, prefix_of_row = self._prefixes(batch)
        times, tail = self._timestamps(batch.column(self.at))
        is_int, literals, literal_ends, doubles, ints, valid = self._fields(batch)
        _, prefix_offsets, prefix_data = distinct.buffers()
        prefix_ends = np.frombuffer(prefix_offsets, np.int32)[
            distinct.offset : distinct.offset + len(distinct) + 1
        ]
        need = batch.num_rows * row_bound(prefix_ends, literal_ends, tail)
        if self._out.size < need:
            self._out = np.empty(need, np.uint8)
        size, empty_row = write_lines(
            self._out, np.frombuffer(prefix_data, np.uint8), prefix_ends, prefix_of_row,
            literals, literal_ends, is_int, doubles, ints, valid, times, tail,
        )  # fmt: skip
        if empty_row >= 0:
            raise EncodeError(
                f"row {empty_row} of the chunk has a null in every field, and an ILP line needs "
                f"one; drop such rows or use the dataframe method."
            )
        return pa.py_buffer(self._out[:size])

    def _check_nulls(self, batch: pa.RecordBatch) -> None:
        """Null symbols and fields are left out of their lines, as the client does; a null
        time has no such place."""
        column = batch.column(self.at)
        if column.null_count:
            raise EncodeError(
                f"column {self.at!r} has {column.null_count} null(s); the vectorized encoder "
                f"writes every row's timestamp, so fill them or use the dataframe method."
            )

    def _prefixes(self, batch: pa.RecordBatch) -> tuple[pa.Array, np.ndarray]:
        """(distinct `table,tag=value,... ` prefixes, each row's index into them).

        The prefixes are kept from chunk to chunk while the symbols' dictionaries stay the
        same (the chunks of one file, as a rule): a chunk then only looks its rows' tag sets up,
        and builds the prefixes of those it has not met before."""
        key, codes, dictionaries, stable = self._row_keys(batch)
        distinct_keys, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        known = self._known
        if not stable or known is None or not _same(known[0], dictionaries):
            known = None
        if known is not None:
            _, known_keys, known_prefixes = known
            at = np.minimum(np.searchsorted(known_keys, distinct_keys), len(known_keys) - 1)
            new = known_keys[at] != distinct_keys
            if not new.any():
                return known_prefixes, at[inverse]
            if len(known_keys) + int(new.sum()) > _KNOWN_LIMIT:
                known = None  # too many tag sets to keep: this chunk's own will do
        prefixes = self._build_prefixes([code[first] for code in codes], dictionaries)
        if not stable:
            return prefixes, inverse
        if known is not None:
            keys = np.concatenate([known[1], distinct_keys[new]])
            order = np.argsort(keys, kind="stable")
            table = pa.concat_arrays([known[2], prefixes.filter(pa.array(new))]).take(order)
            self._known = (dictionaries, keys[order], table)
            return table, np.searchsorted(keys[order], distinct_keys)[inverse]
        self._known = (dictionaries, distinct_keys, prefixes)
        return prefixes, inverse

    def _row_keys(self, batch: pa.RecordBatch) -> tuple[np.ndarray, list, list, bool]:
        """(each row's tag set as one int64, each symbol's codes and dictionary, whether the
        key depends on the dictionaries alone: False once codes had to be renumbered)."""
        n = batch.num_rows
        codes, dictionaries, stable = [], [], True
        key, bound = np.zeros(n, dtype=np.int64), 1  # bound: more than any key can be
        for name in self.symbols:
            column = batch.column(name)
            if not pa.types.is_dictionary(column.type):
                column = pc.dictionary_encode(column)
            if column.null_count:  # a null symbol is one more code: its `,tag=` is left out
                code = np.where(
                    column.is_null().to_numpy(zero_copy_only=False),
                    len(column.dictionary),
                    column.indices.fill_null(0).to_numpy(zero_copy_only=False),
                )
            else:
                code = column.indices.to_numpy(zero_copy_only=False)
            # one more code than the dictionary has values: the null one (absent or not)
            size = len(column.dictionary) + 1
            if bound * size >= _KEY_LIMIT:
                key = np.unique(key, return_inverse=True)[1].reshape(-1).astype(np.int64)
                bound, stable = int(key.max()) + 1, False
            key *= size  # in place: no fresh array per symbol
            key += code
            bound *= size
            codes.append(code)
            dictionaries.append(column.dictionary)
        return key, codes, dictionaries, stable

    def _build_prefixes(self, distinct_codes: list, dictionaries: list) -> pa.Array:
        """The prefix of each tag set, given as each symbol's code (its dictionary's length for
        a null, whose `,tag=` is left out)."""
        parts: list[Any] = [pa.scalar(escape_name(self.table))]
        for name, head, code, dictionary in zip(
            self.symbols, self._prefix_heads, distinct_codes, dictionaries, strict=True
        ):
            escaped = self._escape(name, dictionary)
            present = code < len(dictionary)
            if present.all():
                parts += [pa.scalar(head), escaped.take(pa.array(code))]
                continue
            taken = escaped.take(pa.array(np.where(present, code, 0)))
            pair = pc.binary_join_element_wise(pa.scalar(head), taken, "")
            parts.append(pc.if_else(pa.array(present), pair, pa.scalar("")))
        parts.append(pa.scalar(" "))
        distinct = pc.binary_join_element_wise(*parts, "").cast(pa.binary())
        if isinstance(distinct, pa.Scalar):  # no symbols: every part was a scalar
            count = len(distinct_codes[0]) if distinct_codes else 1
            distinct = pa.array([distinct.as_py()] * count, pa.binary())
        return distinct

    def _escape(self, name: str, dictionary: pa.Array) -> pa.Array:
        cached = self._escaped.get(name)
        if cached is None or not cached[0].equals(dictionary):
            cached = self._escaped[name] = (dictionary, _escape_values(dictionary))
        return cached[1]

    def _timestamps(self, column: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """(each row's time as int64 in the unit it is sent in, that unit's suffix and the
        newline as bytes)."""
        unit = column.type.unit if pa.types.is_timestamp(column.type) else None
        if unit is None:
            raise EncodeError(
                f"column {self.at!r} is {column.type}, not a timestamp; convert it first."
            )
        suffix = _TIME_SUFFIX.get(unit, "t")
        if unit not in _TIME_SUFFIX:
            column = column.cast(pa.timestamp("us", tz=column.type.tz))
        values = column.cast(pa.int64()).to_numpy()
        if values.min() < 0:  # the client refuses these too
            raise EncodeError(
                f"column {self.at!r} holds a time before 1970, which ILP cannot carry; drop or "
                f"shift those rows."
            )
        return values, np.frombuffer(f"{suffix}\n".encode(), np.uint8)

    def _fields(self, batch: pa.RecordBatch) -> tuple:
        """The field columns as write_lines takes them: (is_int, literals, literal_ends,
        doubles, ints, valid)."""
        columns = [batch.column(name) for name in self.fields]
        for name, column in zip(self.fields, columns, strict=True):
            if not (pa.types.is_floating(column.type) or pa.types.is_integer(column.type)):
                raise EncodeError(
                    f"column {name!r} is {column.type}; the vectorized encoder writes floats "
                    f"and integers only, so convert it or use the dataframe method."
                )
        is_int = np.array([pa.types.is_integer(c.type) for c in columns])
        literals, literal_ends = self._literals(tuple(is_int))
        doubles, ints = [], []
        for column, integer in zip(columns, is_int, strict=True):
            arrow_type = pa.int64() if integer else pa.float64()
            values = _plain(column.cast(arrow_type).fill_null(0).to_numpy())
            doubles.append(_EMPTY_BYTES if integer else values.view(np.uint8))
            ints.append(values if integer else _EMPTY_INTS)
        if any(column.null_count for column in columns):
            valid = np.column_stack(
                [c.is_valid().to_numpy(zero_copy_only=False) for c in columns]
            ).view(np.uint8)
        else:
            valid = _NO_NULLS
        return is_int, literals, literal_ends, tuple(doubles), tuple(ints), valid

    def _literals(self, is_int: tuple[bool, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Each field's `name=` (an integer) or `name==` and type 16 (a double), back to back,
        and where each ends."""
        cached = self._literal_cache.get(is_int)
        if cached is None:
            parts = [f"{name}=".encode() + (b"" if integer else b"=" + _DOUBLE_TYPE)
                     for name, integer in zip(self._field_names, is_int, strict=True)]  # fmt: skip
            ends = np.cumsum([0] + [len(part) for part in parts], dtype=np.int64)
            cached = self._literal_cache[is_int] = (np.frombuffer(b"".join(parts), np.uint8), ends)
        return cached


def _same(known: list, dictionaries: list) -> bool:
    return all(a is b or a.equals(b) for a, b in zip(known, dictionaries, strict=True))


def _plain(values: np.ndarray) -> np.ndarray:
    """A read-only view: write_lines takes the columns as one tuple type, whether Arrow lent
    them (read-only) or NumPy made them."""
    view = values.view()
    view.flags.writeable = False
    return view


_EMPTY_BYTES = _plain(np.empty(0, np.uint8))  # a field of the other kind
_EMPTY_INTS = _plain(np.empty(0, np.int64))
_NO_NULLS = np.empty((0, 0), np.uint8)
