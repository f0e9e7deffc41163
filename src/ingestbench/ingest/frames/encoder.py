"""ILP (protocol 2) encoded column by column with Arrow and NumPy: a whole chunk at a time.

The questdb client's `dataframe()` walks the frame cell by cell (about 60 ns a cell here), which
puts its serializer alone above 1 CPU-s per 1M TSBS rows. Here the work per column and per
distinct value is done first, and one compiled pass writes the lines:

- symbols: the rows' tag combinations are found from the dictionary codes, and the
  `table,tag=v,...` prefix is built once per distinct combination (escaped on the dictionary's
  few values) and kept from chunk to chunk; tags that barely repeat within a chunk (a
  dictionary, or combinations, of more than half its rows: SPARSE_SHARE) are written row by
  row instead, each value's `,tag=v` built once, so that they neither pay a prefix per row nor
  flood the kept combinations; a symbol given as strings (the readers' form of one that
  barely repeats) likewise, a `,tag=v` per row, without hashing its values;
- fields: each column as a plain array of its kind (ingestbench.ingest.frames.ilp_fields:
  doubles, integers, booleans, strings, times and dates), and each field's `name=` literal;
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

from ingestbench.columnar.arrow import SPARSE_SHARE
from ingestbench.ingest.frames.ilp_fields import (
    EncodeError,
    chunk_kinds,
    field_arrays,
    field_kind,
    plain,
    text_bytes,
    time_values,
)
from ingestbench.ingest.frames.ilp_kernel import (
    BOOLEAN,
    COPY_SLACK,
    DOUBLE,
    RAW_STRING,
    STRING,
    TIME_NS,
    bytes_present,
    row_bound,
    write_lines,
)

__all__ = ["EncodeError", "IlpEncoder", "as_record_batch", "escape_name"]

#: What a symbol value escapes (backslash first, so the others' backslashes stay single).
_SYMBOL_ESCAPES = ("\\", "\n", "\r", " ", ",", "=")
#: Column names: the client escapes these and refuses ',' and newlines.
_NAME_ESCAPES = ("\\", " ", "=")
_DOUBLE_TYPE = b"\x10"  # protocol 2's type byte for a binary double
_KEY_LIMIT = 1 << 62  # codes combined beyond this are renumbered first (int64 stays exact)
#: Tag sets whose prefixes an encoder keeps from chunk to chunk (while the dictionaries stay the
#: same); a chunk that would take it past this starts the kept sets over with its own.
_KNOWN_LIMIT = 1 << 16


def escape_name(name: str) -> str:
    if "," in name or "\n" in name:
        raise EncodeError(f"column name {name!r} has a ',' or a newline, which ILP cannot carry.")
    for ch in _NAME_ESCAPES:
        name = name.replace(ch, "\\" + ch)
    return name


def _escape_values(values: pa.Array) -> pa.Array:
    values = values.cast(pa.string())
    text, ends = _binary_arrays(values)  # a slice's own bytes: a piece's, not its chunk's
    present = bytes_present(text, ends[0], ends[-1])  # a replace pass costs more than this
    for ch in _SYMBOL_ESCAPES:
        if present[ord(ch)]:
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
        import polars as pl  # only a polars frame gets here

        # polars' own layout (strings as views): the default copies every string column into
        # large strings, which cost more than the encoder's cast of the views it writes.
        table = to_arrow(compat_level=pl.CompatLevel.newest())
        if table.num_rows == 0:
            return pa.RecordBatch.from_pylist([], schema=table.schema)
        return table.combine_chunks().to_batches()[0]
    # Column by column with from_pandas=False: NaN stays a NaN (the client sends it as one),
    # where RecordBatch.from_pandas would turn it into a null. In an object column (strings,
    # dates) a NaN or None is a null, as the client reads it.
    columns = [pa.array(frame[name], from_pandas=frame[name].dtype == object)
               for name in frame.columns]  # fmt: skip
    return pa.RecordBatch.from_arrays(columns, names=[str(name) for name in frame.columns])


class IlpEncoder:
    """Encodes record batches of one table's columns into ILP protocol 2 bytes."""

    def __init__(self, table: str, symbols: Sequence[str], fields: Sequence[str], at: str):
        if not fields:
            raise EncodeError("an ILP line needs at least one field; name the field columns.")
        self.table, self.symbols, self.fields, self.at = table, list(symbols), list(fields), at
        self._prefix_heads = [f",{escape_name(s)}=" for s in self.symbols]
        self._heads = [pa.array([h.encode()], pa.binary()) for h in self._prefix_heads]
        self._table = pa.array([escape_name(table).encode()], pa.binary())
        self._field_names = [escape_name(f) for f in self.fields]
        # The lines' buffer, reused chunk after chunk: a fresh one would cost a page fault
        # per 4 KiB (on TSBS rows, more than writing the lines into it).
        self._out = np.empty(0, np.uint8)
        # (dictionaries, sorted keys, their prefixes): the tag sets met so far (_prefixes).
        self._known: tuple[list, np.ndarray, pa.Array] | None = None
        # Each field layout's literals, made once.
        self._literal_cache: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}
        # Each symbol's last dictionary and its escaped values: chunks of one file mostly share
        # their dictionaries, and escaping them anew costs more than a small chunk's rows.
        self._escaped: dict[str, tuple[pa.Array, pa.Array]] = {}
        # Each symbol's last dictionary and its `,tag=value` segments, for tags written row by
        # row.
        self._segments: dict[str, tuple[pa.Array, pa.Array]] = {}

    def encode(self, batch: pa.RecordBatch) -> pa.Buffer:
        """The batch's rows as ILP lines, one contiguous buffer: the encoder's own, reused by
        the next call (send or copy it before that)."""
        rows = batch.num_rows
        if rows == 0:
            return pa.py_buffer(b"")
        self._check_nulls(batch)
        distinct, prefix_of_row, segments, tag_codes, segment_bytes = self._tags(batch)
        times, tail = self._timestamps(batch.column(self.at))
        kinds, literals, literal_ends, arrays, valid = self._fields(batch)
        prefix_data, prefix_ends = _binary_arrays(distinct)
        segment_data, segment_ends = _binary_arrays(segments)
        text = sum(text_bytes(o) for o, k in zip(arrays[2], kinds, strict=True)
                   if k in (STRING, RAW_STRING))  # fmt: skip
        need = (rows * row_bound(prefix_ends, literal_ends, tail)
                + segment_bytes + 2 * text + COPY_SLACK)  # fmt: skip
        if self._out.size < need:
            self._out = np.empty(need, np.uint8)
        size, empty_row = write_lines(
            self._out, prefix_data, prefix_ends, prefix_of_row, segment_data, segment_ends,
            tag_codes, literals, literal_ends, kinds, *arrays, valid, times, tail,
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

    def _tags(
        self, batch: pa.RecordBatch
    ) -> tuple[pa.Array, np.ndarray, pa.Array, np.ndarray, int]:
        """(distinct `table,tag=value...` prefixes, each row's index into them, the tags
        written row by row as `,tag=value` segments, each row's segment per such tag, the bytes
        of the rows' segments).

        The prefixes are kept from chunk to chunk while the symbols' dictionaries stay the
        same (the chunks of one file, as a rule): a chunk then only looks its rows' tag sets up,
        and builds the prefixes of those it has not met before. A chunk whose tags barely
        repeat writes them row by row instead (SPARSE_SHARE), and leaves the kept sets be; so
        does a symbol given as plain strings, not as a dictionary: the readers make a
        dictionary of every symbol that repeats, and hashing the others only to find that they
        do not would cost more than writing them."""
        rows = batch.num_rows
        if not self.symbols:  # every row's prefix is the table's name
            return self._table, np.zeros(rows, np.int64), _NO_SEGMENTS, _NO_TAGS, 0
        columns = [batch.column(name) for name in self.symbols]
        if not all(pa.types.is_dictionary(c.type) for c in columns):
            return self._row_segments(columns)
        codes, dictionaries = _codes(columns)
        known = self._known
        if known is not None and not _same(known[0], dictionaries):
            known = None
        sparse = rows * SPARSE_SHARE
        if known is None and any(len(d) > sparse for d in dictionaries):
            return self._row_segments(columns)
        key, stable = _row_keys(rows, codes, dictionaries)
        distinct_keys, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        if not stable:
            known = None
        if known is not None:
            _, known_keys, known_prefixes = known
            at = np.minimum(np.searchsorted(known_keys, distinct_keys), len(known_keys) - 1)
            new = known_keys[at] != distinct_keys
            if not new.any():
                return known_prefixes, at[inverse], _NO_SEGMENTS, _NO_TAGS, 0
            if len(known_keys) + int(new.sum()) > _KNOWN_LIMIT:
                known = None  # too many tag sets to keep: start over with this chunk's own
        if len(distinct_keys) > sparse:
            return self._row_segments(columns)
        prefixes = self._build_prefixes([code[first] for code in codes], dictionaries)
        if not stable:
            return prefixes, inverse, _NO_SEGMENTS, _NO_TAGS, 0
        if known is not None:
            keys = np.concatenate([known[1], distinct_keys[new]])
            order = np.argsort(keys, kind="stable")
            table = pa.concat_arrays([known[2], prefixes.filter(pa.array(new))]).take(order)
            self._known = (dictionaries, keys[order], table)
            of_row = np.searchsorted(keys[order], distinct_keys)[inverse]
            return table, of_row, _NO_SEGMENTS, _NO_TAGS, 0
        self._known = (dictionaries, distinct_keys, prefixes)
        return prefixes, inverse, _NO_SEGMENTS, _NO_TAGS, 0

    def _row_segments(self, columns: list):
        """The tags written row by row: the table's name as the one prefix, and segments each
        row takes one of per column of codes (-1 for a null): a dictionary symbol's
        `,tag=value` (made once per dictionary); a string symbol's `,tag=`, then its own
        escaped value (two columns of codes: no joined copy of every value). Last, the bytes
        the rows' segments take: a string symbol's from its lengths, with no lookup per row."""
        rows = len(columns[0])
        codes, parts, base, size = [], [], 0, 0
        for j, (name, column) in enumerate(zip(self.symbols, columns, strict=True)):
            if pa.types.is_dictionary(column.type):
                segments = self._dictionary_segments(name, self._prefix_heads[j], column.dictionary)
                (code,), _ = _codes([column])  # a null as the dictionary's length
                code = code.astype(np.int64, copy=False)  # polars' are unsigned
                lengths = np.append(np.diff(_binary_arrays(segments)[1]), 0)  # a null's: none
                size += int(lengths[code].sum())
                codes.append(np.where(code == len(segments), -1, code + base))
                parts.append(segments)
                base += len(segments)
                continue
            head = np.full(rows, base, np.int64)
            value = np.arange(base + 1, base + 1 + rows, dtype=np.int64)
            if column.null_count:
                null = column.is_null().to_numpy(zero_copy_only=False)
                head[null] = value[null] = -1
            values = _escape_values(column).cast(pa.binary())
            ends = _binary_arrays(values)[1]
            size += len(self._prefix_heads[j].encode()) * (rows - column.null_count)
            size += int(ends[-1] - ends[0])  # a null's value is empty
            codes += [head, value]
            parts += [self._heads[j], values]
            base += 1 + rows
        segments = parts[0] if len(parts) == 1 else pa.concat_arrays(parts)  # all binary
        return self._table, np.zeros(rows, np.int64), segments, np.stack(codes), size

    def _dictionary_segments(self, name: str, head: str, dictionary: pa.Array) -> pa.Array:
        """`,tag=value` for each value of a symbol's dictionary: the last dictionary's kept."""
        cached = self._segments.get(name)
        if cached is None or not _same([cached[0]], [dictionary]):
            segments = pc.binary_join_element_wise(head, self._escape(name, dictionary), "")
            segments = segments.cast(pa.binary())
            cached = self._segments[name] = (dictionary, segments)
        return cached[1]

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
        parts.append(pa.scalar(""))
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
        t = column.type
        if not (pa.types.is_timestamp(t) or pa.types.is_date(t)):
            raise EncodeError(f"column {self.at!r} is {t}, not a timestamp; convert it first.")
        values = time_values(column)
        if values.min() < 0:  # the client refuses these too
            raise EncodeError(
                f"column {self.at!r} holds a time before 1970, which ILP cannot carry; drop or "
                f"shift those rows."
            )
        suffix = "n" if field_kind(self.at, t) == TIME_NS else "t"
        return values, np.frombuffer(f"{suffix}\n".encode(), np.uint8)

    def _fields(self, batch: pa.RecordBatch) -> tuple:
        """The field columns as write_lines takes them: (kinds, literals, literal_ends,
        (doubles, ints, offsets, strings), valid)."""
        columns = [batch.column(name) for name in self.fields]
        kinds = [field_kind(n, c.type) for n, c in zip(self.fields, columns, strict=True)]
        for name, column, kind in zip(self.fields, columns, kinds, strict=True):
            if kind == BOOLEAN and column.null_count:  # the client refuses these too
                raise EncodeError(
                    f"column {name!r} has {column.null_count} null(s), and QuestDB's BOOLEAN has "
                    f"no null (it would store false); fill them or make the column a string."
                )
        literals, literal_ends = self._literals(tuple(kinds))
        arrays = field_arrays(columns, kinds)
        if any(column.null_count for column in columns):
            valid = np.column_stack(
                [c.is_valid().to_numpy(zero_copy_only=False) for c in columns]
            ).view(np.uint8)
        else:
            valid = _NO_NULLS
        return chunk_kinds(kinds, arrays[2], arrays[3]), literals, literal_ends, arrays, valid

    def _literals(self, kinds: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Each field's `name=` (`name==` and type 16 for a double), back to back, and where
        each ends."""
        cached = self._literal_cache.get(kinds)
        if cached is None:
            parts = [f"{name}=".encode() + (b"=" + _DOUBLE_TYPE if kind == DOUBLE else b"")
                     for name, kind in zip(self._field_names, kinds, strict=True)]  # fmt: skip
            ends = np.cumsum([0] + [len(part) for part in parts], dtype=np.int64)
            # COPY_SLACK zeros after the last: each literal is copied as 32 bytes in one go
            data = np.frombuffer(b"".join(parts) + bytes(COPY_SLACK), np.uint8)
            cached = self._literal_cache[kinds] = (data, ends)
        return cached


def _codes(columns: list) -> tuple[list, list]:
    """(each dictionary column's codes, its dictionary); a null is the dictionary's length."""
    codes, dictionaries = [], []
    for column in columns:
        if column.null_count:  # a null symbol is one more code: its `,tag=` is left out
            code = np.where(
                column.is_null().to_numpy(zero_copy_only=False),
                len(column.dictionary),
                column.indices.fill_null(0).to_numpy(zero_copy_only=False),
            )
        else:
            code = column.indices.to_numpy(zero_copy_only=False)
        codes.append(code)
        dictionaries.append(column.dictionary)
    return codes, dictionaries


def _row_keys(n: int, codes: list, dictionaries: list) -> tuple[np.ndarray, bool]:
    """(each row's tag set as one int64, whether the key depends on the dictionaries alone:
    False once codes had to be renumbered)."""
    key, bound, stable = np.zeros(n, dtype=np.int64), 1, True  # bound: more than any key
    for code, dictionary in zip(codes, dictionaries, strict=True):
        # one more code than the dictionary has values: the null one (absent or not)
        size = len(dictionary) + 1
        if bound * size >= _KEY_LIMIT:
            key = np.unique(key, return_inverse=True)[1].reshape(-1).astype(np.int64)
            bound, stable = int(key.max()) + 1, False
        key *= size  # in place: no fresh array per symbol
        key += code
        bound *= size
    return key, stable


def _binary_arrays(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A binary array's bytes and its int32 offsets, as NumPy views."""
    _, offsets, data = values.buffers()
    ends = np.frombuffer(offsets, np.int32)[values.offset : values.offset + len(values) + 1]
    return (np.frombuffer(data, np.uint8) if data is not None else _NO_BYTES), ends


def _same(known: list, dictionaries: list) -> bool:
    return all(a is b or a.equals(b) for a, b in zip(known, dictionaries, strict=True))


_NO_BYTES = plain(np.empty(0, np.uint8))
_NO_SEGMENTS = pa.array([], pa.binary())
_NO_TAGS = np.empty((0, 0), np.int64)  # every tag in the prefixes
_NO_NULLS = np.empty((0, 0), np.uint8)
