"""The sorted copy of an own dataset (`sorted: true`): DuckDB reads the user's file as its source
(the manifest's table, the types the clients read) and writes its rows ordered by the designated
timestamp into the data folder, in the source's format. DuckDB sorts under a memory limit and
spills beyond it into a directory of its own, so memory stays bounded whatever the file's size.
The user's file is only read. The sort's seconds are recorded apart from every rate.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from ingestbench.own.dataset import OwnDataError, OwnDataset
from ingestbench.own.spec import OwnTableSpec
from ingestbench.storage.files import atomic_paths, write_json_atomic

log = logging.getLogger(__name__)

#: Every time of a sorted CSV as QuestDB's imports read one pattern: six fraction digits, UTC.
CSV_TIMES = "%Y-%m-%d %H:%M:%S.%f"


def _select(spec: OwnTableSpec, csv: bool) -> str:
    """The source's columns; for a CSV, its zoned times as naive UTC (the session's zone), so
    each is written with one pattern and read back as the same instant."""
    from ingestbench.columnar.duckdb_sql import ident

    if not csv:
        return "*"
    arrow = spec.source.arrow_types()
    return ", ".join(
        f"CAST({ident(c)} AS TIMESTAMP) AS {ident(c)}"
        if (arrow.get(c) or "").startswith("timestamp[") else ident(c)
        for c in spec.file_columns
    )  # fmt: skip


def write_sorted(
    spec: OwnTableSpec, output: Path, record: Path, memory_limit: str, null_value: str = ""
) -> dict[str, Any]:
    """Write the source's rows ordered by its timestamp to `output` (atomically) and the sort's
    record (seconds, rows, memory limit) to `record`; the record."""
    from ingestbench.columnar.duckdb_sql import duck, ident, own_relation, sql_str

    csv = Path(output).suffix == ".csv"
    times = [t for c, t in spec.source.types if t.startswith("timestamp[")]
    # Zoned times keep their zone as `Z`, so the copy's columns read back as the source's.
    zone = "Z" if times and all("tz=" in t for t in times) else ""
    options = (
        f"FORMAT csv, HEADER true, DELIMITER {sql_str(spec.source.csv.delimiter)}, "
        f"NULLSTR {sql_str(null_value)}, TIMESTAMPFORMAT {sql_str(CSV_TIMES + zone)}"
        if csv else "FORMAT parquet, COMPRESSION zstd"
    )  # fmt: skip
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    spill = Path(tempfile.mkdtemp(prefix="sort-", dir=Path(output).parent))
    con = duck(memory_limit=memory_limit, spill_dir=spill)
    try:
        with atomic_paths(output) as (tmp,):
            start = time.perf_counter()
            con.execute(
                f"COPY (SELECT {_select(spec, csv)} FROM {own_relation(spec)} "
                f"ORDER BY {ident(spec.timestamp)}) TO {sql_str(tmp)} ({options})"
            )
            seconds = time.perf_counter() - start
        rows = con.execute(f"SELECT count(*) FROM {own_relation(spec)}").fetchone()[0]
    except Exception as exc:  # duckdb raises many types for a file it cannot read or write
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise OwnDataError(
            f"DuckDB could not write the sorted copy of {spec.source.path} to {output} "
            f"({first}); check the file and the free space of {Path(output).parent}."
        ) from None
    finally:
        con.close()
        shutil.rmtree(spill, ignore_errors=True)
    doc = {"by": spec.timestamp, "sort_s": round(seconds, 3), "rows": int(rows),
           "memory_limit": memory_limit, "path": str(output)}  # fmt: skip
    write_json_atomic(record, doc)
    log.info("sorted %s by %s in %.2f s -> %s", spec.source.path, spec.timestamp, seconds, output)
    return doc


def as_sorted_copy(dataset: OwnDataset, source: dict[str, Any]) -> OwnDataset:
    """A sorted copy described as its source's table: the same symbols (DuckDB writes no
    dictionary, so the default rule would make them VARCHAR), timestamp and table name."""
    table = source["table"]
    return replace(dataset, symbols=tuple(table["symbols"]), timestamp=table["timestamp"],
                   table=table["table"])  # fmt: skip


def derived(manifest: dict[str, Any], source: str | None, record: dict[str, Any]) -> dict[str, Any]:
    """A sorted copy's manifest, labelled as derived (its source, the sort and its seconds),
    in its profile too."""
    about = {"from": source, "by": record["by"], "sort_s": record["sort_s"],
             "memory_limit": record["memory_limit"], "path": record["path"]}  # fmt: skip
    return {**manifest, "derived": about, "profile": {**manifest["profile"], "derived": about}}
