"""The iot dataset's files: one directory per dataframe format holding a file per table
(``<name>.parquet/readings.parquet``, ``<name>.csv/diagnostics.csv``, ...) and one ILP text
file with the lines of both tables (``<name>.ilp``), written chunk by chunk as the trucks
(ingestbench.tsbs.trucks) emit them.

Nulls survive every format: Parquet has them natively; in CSV a null is an empty field (every
reader of this workflow reads an empty field back as null, of a tag too); in ILP a null tag or
field is left out of its line, as the questdb client leaves it out.
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from ingestbench.storage.files import atomic_paths
from ingestbench.tables.spec import TableSpec
from ingestbench.tsbs.columns import IOT_TABLES, table_file
from ingestbench.tsbs.hosts import ROW_GROUP_ROWS
from ingestbench.tsbs.ilp import SUB_CHUNK_ROWS, double_text, write_lines
from ingestbench.tsbs.manifest import (
    MANIFEST_SCHEMA_VERSION,
    file_entry,
    generator_info,
    sha256,
)
from ingestbench.tsbs.params import DatasetParams, format_timestamp, unwritable
from ingestbench.tsbs.writers import PARQUET_COMPRESSION

log = logging.getLogger(__name__)

CSV_DATETIME_FORMAT = "%Y-%m-%dT%H:%M:%S%.6fZ"  # as the cpu CSV: 2016-01-01T00:00:00.000000Z
DIRECTORY_FORMATS = ("parquet", "csv")  # one file per table in a directory; ILP: one file


def ilp_lines(table: pa.Table, spec: TableSpec) -> pl.Series:
    """The table's rows as ILP text lines (protocol 1: doubles as the shortest decimal, longs
    with ``i``), a null tag or field left out; the timestamp in nanoseconds."""
    frame = pl.from_arrow(table, rechunk=False)
    pieces: list[Any] = [pl.lit(spec.table)]
    for tag in spec.tags:
        value = pl.col(tag).cast(pl.String)
        pieces.append(pl.when(value.is_not_null()).then(pl.lit(f",{tag}=") + value))
    fields = []
    for name, kind in zip(spec.fields, spec.kinds, strict=True):
        column = frame[name]
        if kind == "long":
            text = column.cast(pl.String) + "i"
        else:
            values = column.fill_null(0.0).to_numpy()
            text = double_text(values).set(column.is_null(), None)
        fields.append(pl.when(text.is_not_null()).then(pl.lit(f"{name}=") + pl.lit(text)))
    ts = frame[spec.timestamp].dt.epoch("ns").cast(pl.String)
    line = pl.concat_str(
        [pl.concat_str(pieces, ignore_nulls=True), pl.lit(" "),
         pl.concat_str(fields, separator=",", ignore_nulls=True), pl.lit(" "), pl.lit(ts),
         pl.lit("\n")]
    )  # fmt: skip
    return frame.select(line.alias("line")).to_series()


class _TableFiles:
    """The Parquet and CSV writers of one table."""

    def __init__(self, spec: TableSpec, schema: pa.Schema, paths: dict[str, Path], name: str):
        import pyarrow.parquet as pq

        self.spec, self.rows, self.writers = spec, 0, {}
        self.nulls = dict.fromkeys((*spec.tags, *spec.fields), 0)
        self.late, self.newest = 0, None  # rows older than a row before them; the newest so far
        if "parquet" in paths:
            self.writers["parquet"] = pq.ParquetWriter(
                str(paths["parquet"]),
                schema.with_metadata(
                    {"ingestbench.dataset": name, "ingestbench.table": spec.table}
                ),
                compression=PARQUET_COMPRESSION,
                use_dictionary=[*spec.tags, spec.timestamp],
                write_statistics=[*spec.fields, spec.timestamp],
            )
        if "csv" in paths:
            self.csv = open(paths["csv"], "wb")  # noqa: SIM115 (closed by close())
            self.csv.write((",".join(spec.columns) + "\n").encode())
            self.writers["csv"] = self.csv

    def write(self, table: pa.Table) -> None:
        if not table.num_rows:
            return
        self.rows += table.num_rows
        for name in self.nulls:
            self.nulls[name] += table.column(name).null_count
        ts = table.column(self.spec.timestamp).cast(pa.int64()).to_numpy()
        running = np.maximum.accumulate(ts)
        if self.newest is not None:
            running = np.maximum(running, self.newest)
        self.late += int((ts < running).sum())
        self.newest = int(running[-1])
        if "parquet" in self.writers:
            self.writers["parquet"].write_table(table)
        if "csv" in self.writers:
            pl.from_arrow(table, rechunk=False).write_csv(
                self.csv, include_header=False, quote_style="never",
                datetime_format=CSV_DATETIME_FORMAT,
            )  # fmt: skip

    def close(self) -> None:
        for writer in self.writers.values():
            writer.close()


def _ilp_write(fh, table: pa.Table, spec: TableSpec) -> None:
    for start in range(0, table.num_rows, SUB_CHUNK_ROWS):
        lines = ilp_lines(table.slice(start, SUB_CHUNK_ROWS), spec)
        write_lines(fh, lines.to_arrow())


def _directory_entry(name: str, path: Path) -> dict[str, Any]:
    files = {f.name: {"bytes": f.stat().st_size, "sha256": sha256(f)}
             for f in sorted(path.iterdir())}  # fmt: skip
    return {"path": name, "bytes": sum(f["bytes"] for f in files.values()), "files": files}


def generate_iot(
    params: DatasetParams,
    out_dir: Path,
    formats: Sequence[str],
    progress=None,
    chunk_points: int = ROW_GROUP_ROWS,
) -> dict:
    """Write the iot dataset's files and manifest, all renamed into place together when all
    are complete (a failure leaves no partial file under a final name); the manifest dict."""
    from ingestbench.tsbs.trucks import arrow_schema_for, iter_trucks

    name = params.name
    finals = {fmt: out_dir / f"{name}.{fmt}" for fmt in formats}
    finals["manifest"] = out_dir / f"{name}.manifest.json"
    for fmt in DIRECTORY_FORMATS:  # a directory is replaced only when empty: clear it first
        if fmt in finals and finals[fmt].is_dir():
            shutil.rmtree(finals[fmt])
    files: dict[str, _TableFiles] = {}
    ilp = None
    current = out_dir
    try:
        with atomic_paths(*finals.values()) as temp_list:
            temps = dict(zip(finals, temp_list, strict=True))
            try:
                for fmt in DIRECTORY_FORMATS:
                    if fmt in temps:
                        temps[fmt].mkdir()
                for spec in IOT_TABLES:
                    paths = {fmt: table_file(temps[fmt], spec) for fmt in DIRECTORY_FORMATS
                             if fmt in temps}  # fmt: skip
                    files[spec.table] = _TableFiles(spec, arrow_schema_for(spec), paths, name)
                if "ilp" in temps:
                    ilp = open(temps["ilp"], "wb")  # noqa: SIM115 (closed below)
                first = last = None
                for chunk in iter_trucks(params, chunk_points, progress):
                    for spec in IOT_TABLES:
                        table = chunk[spec.table]
                        files[spec.table].write(table)
                        if ilp is not None and table.num_rows:
                            _ilp_write(ilp, table, spec)
                        if table.num_rows:
                            ts = table.column(spec.timestamp).cast(pa.int64()).to_numpy()
                            lo, hi = int(ts.min()), int(ts.max())
                            first = lo if first is None else min(first, lo)
                            last = hi if last is None else max(last, hi)
                for table_files in files.values():
                    table_files.close()
                if ilp is not None:
                    ilp.close()
                entries = {}
                for fmt in formats:
                    current = temps[fmt]
                    entry = _directory_entry if fmt in DIRECTORY_FORMATS else file_entry
                    entries[fmt] = entry(finals[fmt].name, temps[fmt])
                doc = _manifest(params, files, entries, first, last)
                current = temps["manifest"]
                temps["manifest"].write_text(json.dumps(doc, indent=2) + "\n")
            except BaseException:
                for table_files in files.values():
                    with contextlib.suppress(Exception):
                        table_files.close()
                if ilp is not None:
                    ilp.close()
                for fmt in DIRECTORY_FORMATS:  # atomic_paths removes files, not directories
                    if fmt in temps:
                        shutil.rmtree(temps[fmt], ignore_errors=True)
                raise
    except OSError as exc:
        raise unwritable(current, exc) from None
    return doc


def column_schema_for(spec: TableSpec) -> list[dict[str, Any]]:
    cols = [{"name": t, "role": "tag", "arrow": "dictionary<values=string, indices=int32>",
             "questdb": "SYMBOL", "nullable": True} for t in spec.tags]  # fmt: skip
    cols += [{"name": f, "role": "field", "arrow": {"double": "double", "long": "int64"}[k],
              "questdb": {"double": "DOUBLE", "long": "LONG"}[k], "nullable": True}
             for f, k in zip(spec.fields, spec.kinds, strict=True)]  # fmt: skip
    cols.append({"name": spec.timestamp, "role": "timestamp", "arrow": "timestamp[ns, tz=UTC]",
                 "questdb": "TIMESTAMP",
                 "csv": "ISO-8601 UTC, e.g. 2016-01-01T00:00:00.000000Z"})  # fmt: skip
    return cols


def _manifest(params, files, entries, first, last) -> dict[str, Any]:
    tables = {t: {"rows": f.rows, "late_rows": f.late, "nulls": f.nulls,
                  "columns": column_schema_for(f.spec)} for t, f in files.items()}  # fmt: skip
    return {
        "schema_version": MANIFEST_SCHEMA_VERSION,
        "name": params.name,
        "use_case": "iot",
        "params": params.to_dict(),
        "rows": sum(t["rows"] for t in tables.values()),
        "points_simulated": params.rows,
        "hosts": params.scale,
        "epochs": params.epochs,
        "first_timestamp": None if first is None else format_timestamp(first),
        "last_timestamp": None if last is None else format_timestamp(last),
        "order": "TSBS iot order: late entries and batches, some dropped",
        "tables": tables,
        "files": entries,
        "generator": generator_info(),
    }
