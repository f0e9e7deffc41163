"""One writer per output format, behind one small interface, registered in `WRITERS`.

A new format is one `Writer` subclass and its entry in `WRITERS` (the generate loop and the
manifest follow), plus a reader in ingestbench.ingest.frames.readers, the value in the config
schema, and the `generate` command's --format choices (spelled out there: the CLI does not import
pyarrow). Writers get the chunks the generator yields (arrays that may be reused after
`write` returns) and write to the temporary path they are given; the generator renames it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa

from ingestbench.tsbs.columns import FIELDS, TAGS, TIMESTAMP
from ingestbench.tsbs.hosts import TAG_VALUES, Chunk
from ingestbench.tsbs.params import GENERATOR_VERSION, DatasetParams

PARQUET_COMPRESSION = "snappy"


# pa.array() imports pandas (over a second here) to sniff its input; from_buffers does not.


def numeric_array(values: np.ndarray, arrow_type: pa.DataType) -> pa.Array:
    """Zero-copy Arrow array over a 1-D numpy array (no nulls)."""
    values = np.ascontiguousarray(values)
    return pa.Array.from_buffers(arrow_type, values.shape[0], [None, pa.py_buffer(values)])


def string_array(values: Sequence[str]) -> pa.Array:
    encoded = [v.encode() for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    np.cumsum([len(v) for v in encoded], out=offsets[1:])
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]
    return pa.Array.from_buffers(pa.string(), len(encoded), buffers)


def _dictionaries(scale: int) -> list[pa.Array]:
    hosts = string_array([f"host_{i}" for i in range(scale)])
    return [hosts] + [string_array(TAG_VALUES[t]) for t in TAGS[1:]]


TAG_TYPE = pa.dictionary(pa.int32(), pa.string())
TS_TYPE = pa.timestamp("ns", tz="UTC")


def arrow_schema(field_type: str = "double") -> pa.Schema:
    """The Parquet file's Arrow schema: 10 dictionary tags, 10 fields, timestamp[ns, UTC]."""
    value_type = pa.float64() if field_type == "double" else pa.int64()
    return pa.schema(
        [pa.field(t, TAG_TYPE, nullable=False) for t in TAGS]
        + [pa.field(f, value_type, nullable=False) for f in FIELDS]
        + [pa.field(TIMESTAMP, TS_TYPE, nullable=False)]
    )


def column_schema(field_type: str = "double") -> list[dict[str, str]]:
    """Columns as the manifest records them (name, role, Arrow/Parquet type, CSV text, QuestDB)."""
    qdb_field = "DOUBLE" if field_type == "double" else "LONG"
    cols = [{"name": t, "role": "tag", "arrow": str(TAG_TYPE), "questdb": "SYMBOL"} for t in TAGS]
    arrow_field = "double" if field_type == "double" else "int64"
    cols += [
        {"name": f, "role": "field", "arrow": arrow_field, "questdb": qdb_field} for f in FIELDS
    ]
    cols.append(
        {
            "name": TIMESTAMP,
            "role": "timestamp",
            "arrow": str(TS_TYPE),
            "questdb": "TIMESTAMP",
            "csv": "ISO-8601 UTC, e.g. 2016-01-01T00:00:00.000000Z",
        }
    )
    return cols


def _tag_arrays(chunk: Chunk, dictionaries: list[pa.Array]) -> list[pa.Array]:
    return [
        pa.DictionaryArray.from_arrays(numeric_array(chunk.tags[i], pa.int32()), d, safe=False)
        for i, d in enumerate(dictionaries)
    ]


class Writer:
    """One output format: `write` each chunk in order, then `close`."""

    #: The format's name: the file's suffix, the config's `format` and the CLI's --format value.
    format: ClassVar[str]

    def __init__(self, path: Path, params: DatasetParams, row_group_rows: int) -> None:
        raise NotImplementedError

    def write(self, chunk: Chunk) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def manifest_info(self) -> dict[str, Any]:
        """What the manifest records about the file beyond its path, size and sha256."""
        return {}


class ParquetWriter(Writer):
    """Arrow dictionary tags, one row group per chunk, snappy; statistics on fields and time."""

    format = "parquet"

    def __init__(self, path: Path, params: DatasetParams, row_group_rows: int):
        import pyarrow.parquet as pq

        self.value_type = pa.float64() if params.field_type == "double" else pa.int64()
        self.schema = arrow_schema(params.field_type).with_metadata(
            {"ingestbench.dataset": params.name, "ingestbench.generator_version": GENERATOR_VERSION}
        )
        dictionary_columns = [*TAGS, TIMESTAMP]
        if params.field_type == "long":
            dictionary_columns += FIELDS  # 0..100: tiny dictionaries
        self.row_group_rows = row_group_rows
        self.writer = pq.ParquetWriter(
            str(path),
            self.schema,
            compression=PARQUET_COMPRESSION,
            use_dictionary=dictionary_columns,
            write_statistics=[*FIELDS, TIMESTAMP],  # tag min/max: costly, of no use
        )
        self.dictionaries = _dictionaries(params.scale)

    def manifest_info(self) -> dict[str, Any]:
        return {"compression": PARQUET_COMPRESSION, "row_group_rows": self.row_group_rows}

    def write(self, chunk: Chunk) -> None:
        ts = numeric_array(chunk.ts, TS_TYPE)
        fields = [numeric_array(f, self.value_type) for f in chunk.fields]
        arrays = [*_tag_arrays(chunk, self.dictionaries), *fields, ts]
        table = pa.Table.from_arrays(arrays, schema=self.schema)
        self.writer.write_table(table, row_group_size=max(self.row_group_rows, chunk.n))

    def close(self) -> None:
        self.writer.close()


class CsvWriter(Writer):
    """Header, unquoted values, timestamps as ISO 8601 UTC text with microseconds.

    The rows are written by polars, whose float formatting (ryu, shortest round trip) costs a
    third of pyarrow's: a double is the same shortest text either way, except that a whole
    number keeps its ".0" (``100.0``), which every reader of this workflow takes as the same
    double (tests/unit/test_tsbs.py reads the file back with each of them).
    """

    format = "csv"

    def __init__(self, path: Path, params: DatasetParams, row_group_rows: int):
        self.params = params
        self.value_type = pa.float64() if params.field_type == "double" else pa.int64()
        # A host's ten tags never change: each host's "hostname,region,...,env" text is made once
        # and written as one unquoted column, the same bytes as ten columns, at a fifth the cost.
        self.schema = pa.schema(
            [pa.field("tags", TAG_TYPE)]
            + [pa.field(f, self.value_type) for f in FIELDS]
            + [pa.field(TIMESTAMP, TAG_TYPE)]
        )
        self.file = open(path, "wb")  # noqa: SIM115 (closed by close(), after the last chunk)
        self.file.write((",".join((*TAGS, *FIELDS, TIMESTAMP)) + "\n").encode())
        self.prefixes: list[str | None] = [None] * params.scale
        self.prefix_array: pa.Array | None = None

    def _prefixes_for(self, tags: np.ndarray) -> pa.Array:
        hosts, first = np.unique(tags[0], return_index=True)
        new = [(int(h), i) for h, i in zip(hosts, first, strict=True) if self.prefixes[h] is None]
        for host, row in new:
            values = [f"host_{host}"] + [
                TAG_VALUES[t][tags[i, row]] for i, t in enumerate(TAGS[1:], 1)
            ]
            self.prefixes[host] = ",".join(values)
        if new or self.prefix_array is None:
            self.prefix_array = string_array([p or "" for p in self.prefixes])
        return self.prefix_array

    def write(self, chunk: Chunk) -> None:
        import polars as pl

        p = self.params
        epoch = (chunk.ts - p.start_ns) // p.interval_ns
        lo, hi = int(epoch.min()), int(epoch.max())
        first_us = (p.start_ns + lo * p.interval_ns) // 1_000
        stamps = np.arange(hi - lo + 1, dtype=np.int64) * (p.interval_ns // 1_000) + first_us
        text = np.char.add(np.datetime_as_string(stamps.astype("datetime64[us]"), unit="us"), "Z")
        ts = pa.DictionaryArray.from_arrays(
            numeric_array((epoch - lo).astype(np.int32), pa.int32()),
            string_array(text.tolist()),
            safe=False,
        )
        fields = [numeric_array(f, self.value_type) for f in chunk.fields]
        hosts = numeric_array(chunk.tags[0], pa.int32())
        tags = pa.DictionaryArray.from_arrays(hosts, self._prefixes_for(chunk.tags), safe=False)
        table = pa.Table.from_arrays([tags, *fields, ts], schema=self.schema)
        pl.from_arrow(table, rechunk=False).write_csv(
            self.file, include_header=False, quote_style="never"
        )

    def close(self) -> None:
        self.file.close()
