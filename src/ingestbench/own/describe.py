"""The table described from the user's file: its Arrow schema mapped column by column (own.types),
the designated timestamp chosen, the symbols decided, and every refusal as one sentence.

Only the schema is read here (a Parquet footer, or the first block of a CSV); what needs the
rows (their count, the nulls per column) is the manifest's pass (own.manifest).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pyarrow as pa

from ingestbench.own.dataset import OwnDataError, OwnDataset, own_data_files, plain_identifier
from ingestbench.own.spec import OwnSource, OwnTableSpec
from ingestbench.own.types import RESERVED, arrow_type_text, kind_of, why_no_column_type
from ingestbench.tables.column_kinds import STRING_KINDS

log = logging.getLogger(__name__)

#: Bytes of a CSV whose values decide the column types (pyarrow infers from its first block).
CSV_INFER_BYTES = 16 << 20


def parquet_files(directory: Path) -> list[Path]:
    """The Parquet files under a directory, in a stable order (hidden files left out)."""
    return [Path(p) for p in own_data_files({"label": "x", "path": str(directory)})]


def read_schema(dataset: OwnDataset) -> pa.Schema:
    """The file's Arrow schema as the client readers see it."""
    path = dataset.path
    try:
        if path.is_dir():
            import pyarrow.dataset as pds

            from ingestbench.own.read import hive_partitioning

            if not parquet_files(path):
                raise OwnDataError(
                    f"dataset {dataset.label!r}: {path} holds no .parquet file; point "
                    f"datasets[].path at a Parquet file, a CSV file or a directory of Parquet "
                    f"files."
                )
            return pds.dataset(path, format="parquet", partitioning=hive_partitioning(path)).schema
        if dataset.format == "parquet":
            import pyarrow.parquet as pq

            return pq.read_schema(path)
        from ingestbench.own.read import open_csv

        with open_csv(path, dataset.csv, block_size=CSV_INFER_BYTES) as reader:
            return reader.schema
    except OwnDataError:
        raise
    except (OSError, pa.ArrowException) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise OwnDataError(
            f"dataset {dataset.label!r}: cannot read {path} as {dataset.format} ({first}); check "
            f"the file (and for a CSV, datasets[].csv: delimiter, null_values, timestamp_format)."
        ) from None


def _check_names(dataset: OwnDataset, names: list[str]) -> None:
    seen: dict[str, str] = {}
    for name in names:
        if not plain_identifier(name):
            raise OwnDataError(
                f"dataset {dataset.label!r}: column {name!r} is not a name QuestDB takes as it "
                f"is (letters, digits and underscores, not starting with a digit); rename it in "
                f"the file."
            )
        if name.lower() in RESERVED:
            raise OwnDataError(
                f"dataset {dataset.label!r}: column {name!r} is a word QuestDB's SQL reserves; "
                f"rename it in the file (for example to {name.lower()}_)."
            )
        if name.lower() in seen:
            raise OwnDataError(
                f"dataset {dataset.label!r}: columns {seen[name.lower()]!r} and {name!r} differ "
                f"only in case, and QuestDB's column names ignore case; rename one in the file."
            )
        seen[name.lower()] = name


def _choose_timestamp(dataset: OwnDataset, kinds: dict[str, str | None]) -> str:
    candidates = [n for n, k in kinds.items() if k == "timestamp"]
    if dataset.timestamp is not None:
        if dataset.timestamp not in kinds:
            raise OwnDataError(
                f"dataset {dataset.label!r}: {dataset.path} has no column {dataset.timestamp!r}; "
                f"set datasets[].timestamp to one of {', '.join(candidates) or 'its columns'}."
            )
        if kinds[dataset.timestamp] != "timestamp":
            hint = (
                "set datasets[].csv.timestamp_format to the format of its values"
                if dataset.format == "csv" else "store it as a timestamp in the file"
            )  # fmt: skip
            raise OwnDataError(
                f"dataset {dataset.label!r}: column {dataset.timestamp!r} does not read as "
                f"timestamps, and QuestDB's designated timestamp must; {hint}."
            )
        return dataset.timestamp
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise OwnDataError(
            f"dataset {dataset.label!r}: {dataset.path} has no timestamp column, and a QuestDB "
            f"table needs a designated one; add one to the file (for a CSV whose times did not "
            f"parse, set datasets[].csv.timestamp_format)."
        )
    raise OwnDataError(
        f"dataset {dataset.label!r}: {dataset.path} has {len(candidates)} timestamp columns "
        f"({', '.join(candidates)}); name the designated one with datasets[].timestamp."
    )


def _symbols(dataset: OwnDataset, kinds: dict[str, str | None]) -> set[str]:
    """The default rule (a dictionary-encoded string column is a SYMBOL, a plain one VARCHAR),
    or exactly the columns `symbols` lists, each of which must hold strings."""
    if dataset.symbols is None:
        return {n for n, k in kinds.items() if k == "symbol"}
    for name in dataset.symbols:
        if kinds.get(name) not in STRING_KINDS:
            what = "is not a column of the file" if name not in kinds else "does not hold strings"
            raise OwnDataError(
                f"dataset {dataset.label!r}: symbols names {name!r}, which {what}; list only "
                f"string columns in datasets[].symbols."
            )
    return set(dataset.symbols)


def _csv_times(dataset: OwnDataset, columns: list[str]) -> tuple:
    """A CSV's time columns as QuestDB's imports read them, from the file's first rows; none for
    Parquet, or when `csv.timestamp_format` says it (the user's word overrides the check)."""
    if dataset.format != "csv" or dataset.csv.timestamp_format or not columns:
        return ()
    from ingestbench.own.csv_times import detect_file

    csv = dataset.csv
    return tuple(detect_file(dataset.path, csv.delimiter, csv.null_values, columns).values())


def describe(dataset: OwnDataset) -> tuple[OwnTableSpec, list[dict[str, str]]]:
    """(the table, the columns left out with their reasons). Raises OwnDataError (one sentence)
    for a file the workflow refuses."""
    dataset.require_exists()
    table = dataset.table_name
    if not plain_identifier(table) or table.lower() in RESERVED:
        raise OwnDataError(
            f"dataset {dataset.label!r}: table name {table!r} is not a plain SQL name; set "
            f"datasets[].table to letters, digits and underscores."
        )
    schema = read_schema(dataset)
    _check_names(dataset, schema.names)
    kinds = {f.name: kind_of(f.type) for f in schema}
    skipped = [
        {"name": f.name, "arrow": arrow_type_text(f.type), "reason": why_no_column_type(f.type)}
        for f in schema
        if kinds[f.name] is None
    ]
    if skipped and dataset.unsupported_columns == "refuse":
        first = skipped[0]
        more = f" (and {len(skipped) - 1} more column(s))" if len(skipped) > 1 else ""
        raise OwnDataError(
            f"dataset {dataset.label!r}: column {first['name']!r} of {dataset.path} is "
            f"{first['arrow']}, and {first['reason']}{more}; drop it from the file, or set "
            f"unsupported_columns: skip to leave such columns out."
        )
    for s in skipped:
        log.warning("dataset %s: leaving column %r (%s) out: %s", dataset.label, s["name"],
                    s["arrow"], s["reason"])  # fmt: skip
    ts = _choose_timestamp(dataset, kinds)
    symbols = _symbols(dataset, kinds)
    kept = [f for f in schema if kinds[f.name] is not None]
    fields = [f.name for f in kept if f.name != ts and f.name not in symbols]
    field_kinds = ["varchar" if kinds[n] == "symbol" else kinds[n] for n in fields]
    if not fields:
        raise OwnDataError(
            f"dataset {dataset.label!r}: {dataset.path} has no column besides its symbols and "
            f"timestamp, and an ILP line needs at least one; add a value column to the file."
        )
    types = tuple(
        (f.name, "dictionary<values=string>" if f.name in symbols else arrow_type_text(f.type))
        for f in kept
    )
    from ingestbench.own.read import is_hive

    source = OwnSource(
        path=str(dataset.path.resolve()), format=dataset.format, directory=dataset.path.is_dir(),
        hive=dataset.path.is_dir() and is_hive(dataset.path), csv=dataset.csv, types=types,
        times=_csv_times(dataset, [f.name for f in kept if kinds[f.name] == "timestamp"]),
    )  # fmt: skip
    spec = OwnTableSpec(
        table=table,
        tags=tuple(f.name for f in kept if f.name in symbols),
        fields=tuple(fields),
        kinds=tuple(field_kinds),
        timestamp=ts,
        nullable=True,
        source=source,
        order=tuple(f.name for f in kept),
    )
    return spec, skipped
