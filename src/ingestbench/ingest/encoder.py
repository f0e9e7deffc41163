"""ILP (protocol 2) encoded column by column with Arrow and NumPy: a whole chunk at a time.

The questdb client's `dataframe()` walks the frame cell by cell (about 60 ns a cell here), which
puts its serializer alone above 1 CPU-s per 1M TSBS rows. Here the work is per column and per
distinct value instead:

- symbols: the rows' tag combinations are found from the dictionary codes, the `table,tag=v,...`
  prefix is built once per distinct combination (escaped on the dictionary's few values), then
  taken for every row;
- doubles (binary in protocol 2: ``name==`` type 16 and 8 little-endian bytes), the separators
  and the timestamp are fixed-width, so a NumPy structured array writes them in place; the
  timestamp's digits are computed once per run of equal values (TSBS: one run per epoch);
- integers (``123i``) are the one variable-width part besides the prefix: each run of
  consecutive integer fields becomes one segment per row, written by a compiled loop
  (ingestbench.ingest.ilp_kernel, numba) instead of a cast to text and a join per column;
- one Arrow `binary_join_element_wise` glues the parts into the chunk's contiguous ILP bytes.

The output is byte for byte what the client writes for the same frame (a test compares them),
so the server sees exactly the same lines. A chunk with a null field cell has its fields written
row by row by a compiled loop that leaves the cell out, as the client does (slower, and only for
such chunks); a null symbol leaves its `,tag=value` out the same way, and a null timestamp
is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ingestbench.errors import UserError
from ingestbench.ingest.ilp_kernel import write_int_fields, write_nullable_fields

#: What a symbol value escapes (backslash first, so the others' backslashes stay single).
_SYMBOL_ESCAPES = ("\\", "\n", " ", ",", "=")
#: Column names: the client escapes these and refuses ',' and newlines.
_NAME_ESCAPES = ("\\", " ", "=")
_DOUBLE_TYPE = b"\x10"  # protocol 2's type byte for a binary double
_TIME_SUFFIX = {"ns": "n", "us": "t"}  # nanoseconds as such; every other unit as microseconds
_EMPTY = pa.scalar(b"", pa.binary())
_KEY_LIMIT = 1 << 40  # codes combined beyond this are renumbered first (int64 stays exact)


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


def _fixed_digits(values: np.ndarray) -> np.ndarray | None:
    """Positive integers of one digit count as their ASCII digits (a row each); else None."""
    low, high = int(values.min()), int(values.max())
    if low < 1:
        return None
    width = len(str(high))
    if len(str(low)) != width:
        return None
    powers = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
    return (values[:, None] // powers % 10 + 48).astype(np.uint8)


class IlpEncoder:
    """Encodes record batches of one table's columns into ILP protocol 2 bytes."""

    def __init__(self, table: str, symbols: Sequence[str], fields: Sequence[str], at: str):
        if not fields:
            raise EncodeError("an ILP line needs at least one field; name the field columns.")
        self.table, self.symbols, self.fields, self.at = table, list(symbols), list(fields), at
        self._prefix_heads = [f",{escape_name(s)}=" for s in self.symbols]
        self._field_names = [escape_name(f) for f in self.fields]
        # Each fixed-width block's buffer, its literals written once and reused chunk after
        # chunk (writing a template row by row costs more than the whole rest of a block).
        self._blocks: dict[int, tuple[bytes, np.ndarray]] = {}
        # Each symbol's last dictionary and its escaped values: chunks of one file mostly share
        # their dictionaries, and escaping them anew costs more than a small chunk's rows.
        self._escaped: dict[str, tuple[pa.Array, pa.Array]] = {}

    def encode(self, batch: pa.RecordBatch) -> pa.Buffer:
        """The batch's rows as ILP lines, one contiguous buffer."""
        if batch.num_rows == 0:
            return pa.py_buffer(b"")
        self._check_nulls(batch)
        prefixes = self._prefixes(batch)
        segments = self._fields_and_time(batch, self._timestamps(batch.column(self.at)))
        rows = pc.binary_join_element_wise(prefixes, *segments, _EMPTY)
        _, ends, data = rows.buffers()
        ends = np.frombuffer(ends, np.int32)[rows.offset : rows.offset + len(rows) + 1]
        return data.slice(int(ends[0]), int(ends[-1] - ends[0]))

    def _check_nulls(self, batch: pa.RecordBatch) -> None:
        """Null symbols and fields are left out of their lines, as the client does; a null
        time has no such place."""
        column = batch.column(self.at)
        if column.null_count:
            raise EncodeError(
                f"column {self.at!r} has {column.null_count} null(s); the vectorized encoder "
                f"writes every row's timestamp, so fill them or use the dataframe method."
            )

    def _prefixes(self, batch: pa.RecordBatch) -> pa.Array:
        """`table,tag=value,...` then a space, for every row (built once per distinct tag set)."""
        n = batch.num_rows
        codes, values = [], []
        key = np.zeros(n, dtype=np.int64)
        for name in self.symbols:
            column = batch.column(name)
            if not pa.types.is_dictionary(column.type):
                column = pc.dictionary_encode(column)
            if column.null_count:  # a null symbol is one more code: its `,tag=` is left out
                code = np.where(
                    column.is_null().to_numpy(zero_copy_only=False),
                    len(column.dictionary),
                    column.indices.fill_null(0).to_numpy(zero_copy_only=False),
                ).astype(np.int64)
            else:
                code = column.indices.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
            size = max(len(column.dictionary) + (column.null_count > 0), 1)
            if int(key.max()) * size >= _KEY_LIMIT:
                key = np.unique(key, return_inverse=True)[1].astype(np.int64)
            key = key * size + code
            codes.append(code)
            values.append(column.dictionary)
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        parts: list[Any] = [pa.scalar(escape_name(self.table))]
        for name, head, code, dictionary in zip(
            self.symbols, self._prefix_heads, codes, values, strict=True
        ):
            escaped = self._escape(name, dictionary)
            distinct_codes = code[first]
            present = distinct_codes < len(dictionary)
            if present.all():
                parts += [pa.scalar(head), escaped.take(pa.array(distinct_codes))]
                continue
            taken = escaped.take(pa.array(np.where(present, distinct_codes, 0)))
            pair = pc.binary_join_element_wise(pa.scalar(head), taken, "")
            parts.append(pc.if_else(pa.array(present), pair, pa.scalar("")))
        parts.append(pa.scalar(" "))
        distinct = pc.binary_join_element_wise(*parts, "").cast(pa.binary())
        if isinstance(distinct, pa.Scalar):  # no symbols: every part was a scalar
            distinct = pa.array([distinct.as_py()], pa.binary())
        return distinct.take(pa.array(inverse.reshape(-1)))

    def _escape(self, name: str, dictionary: pa.Array) -> pa.Array:
        cached = self._escaped.get(name)
        if cached is None or not cached[0].equals(dictionary):
            cached = self._escaped[name] = (dictionary, _escape_values(dictionary))
        return cached[1]

    def _timestamps(self, column: pa.Array) -> np.ndarray | pa.Array:
        """Each row's timestamp with the unit suffix and the newline: fixed-width ASCII rows
        (NumPy) when every value has as many digits, else an Arrow binary array."""
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
        heads = np.flatnonzero(np.diff(values, prepend=values[0] - 1))  # runs of one value
        run = np.repeat(np.arange(len(heads)), np.diff(np.append(heads, len(values))))
        digits = _fixed_digits(values[heads])
        if digits is not None:
            tail = np.frombuffer(f"{suffix}\n".encode(), np.uint8)
            return np.concatenate([digits, np.broadcast_to(tail, (len(heads), 2))], axis=1)[run]
        text = pc.binary_join_element_wise(
            pa.array(values).cast(pa.string()), pa.scalar(f"{suffix}\n"), ""
        )
        return text.cast(pa.binary())

    def _fields_and_time(self, batch: pa.RecordBatch, times: np.ndarray | pa.Array) -> list:
        """The line after the prefix as join segments: fixed-width blocks and text columns."""
        segments: list[Any] = []
        layout: list[tuple[str, Any]] = []  # ("lit", bytes) | ("f64", array) | ("ts", digits)
        ints: list[tuple[bytes, pa.Array]] = []  # the run of integer fields being gathered
        columns = [batch.column(name) for name in self.fields]
        for name, column in zip(self.fields, columns, strict=True):
            if not (pa.types.is_floating(column.type) or pa.types.is_integer(column.type)):
                raise EncodeError(
                    f"column {name!r} is {column.type}; the vectorized encoder writes floats "
                    f"and integers only, so convert it or use the dataframe method."
                )
        if any(column.null_count for column in columns):
            segments.append(self._nullable_segment(columns, batch.num_rows))
            columns = []  # every field is in that segment
        for i, (column, escaped) in enumerate(zip(columns, self._field_names, strict=False)):
            sep = "," if i else ""
            if not pa.types.is_integer(column.type) and ints:
                segments += self._int_segment(layout, segments, ints, batch.num_rows)
                layout, ints = [], []
            if pa.types.is_floating(column.type):
                layout += [("lit", f"{sep}{escaped}=={_DOUBLE_TYPE.decode()}".encode())]
                layout += [("f64", column.cast(pa.float64()).to_numpy())]
            else:
                ints.append((f"{sep}{escaped}=".encode(), column))
        if ints:
            segments += self._int_segment(layout, segments, ints, batch.num_rows)
            layout = []
        layout.append(("lit", b" "))
        fixed_times = isinstance(times, np.ndarray)
        if fixed_times:
            layout.append(("ts", times))
        segments.append(self._block(len(segments), layout, batch.num_rows))
        if not fixed_times:
            segments.append(times)
        return segments

    def _nullable_segment(self, columns: list[pa.Array], n: int) -> pa.Array:
        """Every field of a batch with null cells as one variable-width segment per row, each
        null cell left out (ingestbench.ingest.ilp_kernel.write_nullable_fields)."""
        is_int = np.array([pa.types.is_integer(c.type) for c in columns])
        literals = [
            f"{name}=".encode() if integer else f"{name}=={_DOUBLE_TYPE.decode()}".encode()
            for name, integer in zip(self._field_names, is_int, strict=True)
        ]
        ends = np.cumsum([0] + [len(literal) for literal in literals], dtype=np.int64)
        ints = np.zeros((n, len(columns)), np.int64)
        doubles = np.zeros((n, len(columns)), np.float64)
        valid = np.empty((n, len(columns)), np.bool_)
        for f, column in enumerate(columns):
            valid[:, f] = column.is_valid().to_numpy(zero_copy_only=False)
            target, arrow_type = (ints, pa.int64()) if is_int[f] else (doubles, pa.float64())
            target[:, f] = column.cast(arrow_type).fill_null(0).to_numpy()
        offsets, data, empty_row = write_nullable_fields(
            np.frombuffer(b"".join(literals), np.uint8), ends, is_int, ints,
            doubles.view(np.uint8), valid,
        )  # fmt: skip
        if empty_row >= 0:
            raise EncodeError(
                f"row {empty_row} of the chunk has a null in every field, and an ILP line needs "
                f"one; drop such rows or use the dataframe method."
            )
        return pa.BinaryArray.from_buffers(
            pa.binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
        )

    def _int_segment(self, layout: list, segments: list, ints: list, n: int) -> list[pa.Array]:
        """The fixed-width block gathered so far (if any), then the run of integer fields as
        one variable-width segment per row."""
        before = [self._block(len(segments), layout, n)] if layout else []
        literals = [literal for literal, _ in ints]
        ends = np.cumsum([0] + [len(literal) for literal in literals], dtype=np.int64)
        values = np.empty((n, len(ints)), np.int64)  # a row's values side by side
        for f, (_, column) in enumerate(ints):
            values[:, f] = column.cast(pa.int64()).to_numpy()
        offsets, data = write_int_fields(np.frombuffer(b"".join(literals), np.uint8), ends, values)
        text = pa.BinaryArray.from_buffers(
            pa.binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
        )
        return [*before, text]

    def _block(self, slot: int, layout: list[tuple[str, Any]], n: int) -> pa.Array:
        """One fixed-width binary column (n rows) from literals, doubles and timestamp digits;
        `slot` names its reusable buffer (the segment's position in the line)."""
        template, names, formats, offsets, data = b"", [], [], [], {}
        for i, (kind, value) in enumerate(layout):
            if kind == "lit":
                template += value
                continue
            width = 8 if kind == "f64" else value.shape[1]
            name = f"c{i}"
            names.append(name)
            formats.append("<f8" if kind == "f64" else f"V{width}")
            offsets.append(len(template))
            data[name] = value if kind == "f64" else value.view(f"V{width}").reshape(-1)
            template += b"\0" * width
        width = len(template)
        need = n * width
        cached_template, buffer = self._blocks.get(slot, (b"", np.empty(0, np.uint8)))
        if cached_template != template or buffer.size < need:
            buffer = np.frombuffer(bytearray(template * n), np.uint8)  # C-speed repeat
            self._blocks[slot] = (template, buffer)
        block = buffer[:need].reshape(n, width)
        if names:
            record = np.dtype(
                {"names": names, "formats": formats, "offsets": offsets, "itemsize": width}
            )
            rows = block.reshape(-1).view(record)
            for name, value in data.items():
                rows[name] = value
        ends = np.arange(0, need + 1, width, dtype=np.int32)
        return pa.BinaryArray.from_buffers(
            pa.binary(), n, [None, pa.py_buffer(ends), pa.py_buffer(block)]
        )
