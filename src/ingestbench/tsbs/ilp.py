"""The dataset as ILP text: the lines TSBS writes with ``--format=questdb``, one per row.

    cpu,hostname=host_0,region=eu-west-1,…,service_environment=test usage_user=58.2…,…,\
    usage_guest_nice=3.1… 1451606400000000000  (one line)

Tags in TSBS order, then the ten fields, then the timestamp in nanoseconds, ``\\n`` after every
line. Doubles are written as TSBS writes them (Go's ``strconv.AppendFloat(v, 'f', -1, 64)``): the
shortest decimal that reads back as the same double, never in exponent notation, no trailing
``.0`` (``100``, ``0``, ``42.17``); so every value parses back exactly. ``field_type: long``
writes integers with the ``i`` suffix (``58i``).

The lines are built column-wise with polars (a cast of each field to text and one `concat_str`
per sub-chunk), never in a Python loop per row; the joined column's Arrow data buffer is exactly
the file's bytes, written as it is.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa

from ingestbench.tsbs.columns import FIELDS, TAGS
from ingestbench.tsbs.hosts import TAG_VALUES, Chunk
from ingestbench.tsbs.params import DatasetParams
from ingestbench.tsbs.writers import Writer

MEASUREMENT = "cpu"
#: Rows joined at a time: bounds the writer's memory to some 100 MB of text and temporaries.
SUB_CHUNK_ROWS = 131_072


def _positional(values: np.ndarray) -> list[str]:
    return [np.format_float_positional(v, unique=True, trim="-") for v in values]


def double_text(values: np.ndarray) -> pl.Series:
    """float64 -> the shortest decimal that reads back as the same double, never an exponent.

    polars' cast writes the shortest round-trip digits (as Go does), but "100.0" for integral
    values and an exponent for tiny or huge ones (Go: "100", positional digits); those few values
    are rewritten, found by value rather than by scanning the text.
    """
    text = pl.Series(values).cast(pl.String)
    magnitude = np.abs(values)
    integral = np.flatnonzero((values == np.floor(values)) & (magnitude < 1e15))
    if integral.size:
        text = text.scatter(integral, pl.Series(values[integral]).cast(pl.Int64).cast(pl.String))
    odd = np.flatnonzero((values != 0) & ((magnitude < 1e-4) | (magnitude >= 1e15)))
    if odd.size:
        text = text.scatter(odd, pl.Series(_positional(values[odd]), dtype=pl.String))
    return text


def write_lines(file, lines: pa.Array | pa.ChunkedArray) -> None:
    """Write a string array's text as it is: between the first and the last offset, the data
    buffer holds the lines back to back."""
    if isinstance(lines, pa.ChunkedArray):
        for piece in lines.chunks:
            write_lines(file, piece)
        return
    width = np.int64 if pa.types.is_large_string(lines.type) else np.int32
    offsets = np.frombuffer(lines.buffers()[1], dtype=width)
    first, last = offsets[lines.offset], offsets[lines.offset + len(lines)]
    file.write(memoryview(lines.buffers()[2])[int(first) : int(last)])


class IlpWriter(Writer):
    """Writes chunks of the generator's rows as ILP lines to one file."""

    format = "ilp"

    def __init__(self, path: Path, params: DatasetParams, row_group_rows: int):
        self.long = params.field_type == "long"
        self.file = open(path, "wb")  # noqa: SIM115 (closed by close())
        self.prefixes: list[str | None] = [None] * params.scale  # per host: measurement and tags
        self.prefix_series: pl.Series | None = None
        suffix = "i" if self.long else ""
        # Between field k and k+1: ",<name>=" (after an "i" for integers); then " " before the time.
        self.separators = [f"{suffix},{name}=" for name in FIELDS[1:]] + [f"{suffix} "]

    def _host_prefix(self, host: int, tags: np.ndarray) -> str:
        values = [f"host_{host}"] + [TAG_VALUES[t][tags[i]] for i, t in enumerate(TAGS[1:], 1)]
        pairs = ",".join(f"{t}={v}" for t, v in zip(TAGS, values, strict=True))
        return f"{MEASUREMENT},{pairs} {FIELDS[0]}="

    def _prefixes_for(self, tags: np.ndarray) -> pl.Series:
        """Every host's tags never change, so each host's line start is built once."""
        hosts, first = np.unique(tags[0], return_index=True)
        new = [(int(h), i) for h, i in zip(hosts, first, strict=True) if self.prefixes[h] is None]
        for host, row in new:
            self.prefixes[host] = self._host_prefix(host, tags[:, row])
        if new or self.prefix_series is None:
            self.prefix_series = pl.Series([p or "" for p in self.prefixes], dtype=pl.String)
        return self.prefix_series

    def write(self, chunk: Chunk) -> None:
        prefixes = self._prefixes_for(chunk.tags)
        for start in range(0, chunk.n, SUB_CHUNK_ROWS):
            stop = min(start + SUB_CHUNK_ROWS, chunk.n)
            self._write_rows(chunk, prefixes, start, stop)

    def _write_rows(self, chunk: Chunk, prefixes: pl.Series, start: int, stop: int) -> None:
        parts: list = [prefixes.gather(chunk.tags[0, start:stop])]
        for k in range(len(FIELDS)):
            values = chunk.fields[k, start:stop]
            if self.long:
                parts.append(pl.Series(values).cast(pl.String))
            else:
                parts.append(double_text(values))
            parts.append(pl.lit(self.separators[k]))
        parts += [pl.Series(chunk.ts[start:stop]).cast(pl.String), pl.lit("\n")]
        lines = pl.select(pl.concat_str(parts)).to_series().to_arrow()
        write_lines(self.file, lines)

    def close(self) -> None:
        self.file.close()
