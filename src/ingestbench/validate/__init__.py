"""Prove what landed: DuckDB over the source against SQL over QuestDB and its export, row for row.

Each source is read as its dataset's kind says (ingestbench.datasets: its DuckDB relation, its
tables, its check family, its profile). Three steps, used by three jobs, each in its own module:

- `aggregates`: `expected_aggregates` (rule `expected`, DuckDB over the dataset's Parquet or its
  first N rows in file order) and `questdb_aggregates` (the ingest job, after its last repeat, by
  SQL over QuestDB): row count, rows per host, first and last timestamp, per field sum/min/max,
  distinct values per tag.
- `repeat_checks`: every repeat's table against its source, cheaply (counts per first tag, sums,
  minima and maxima), by one SQL query after each repeat (the ingest job); `own_checks` holds
  the "columns" family of checks (per column as its kind allows), which own tables get.
- `export`: `export_table`, the whole table as Parquet through `/exp`; `export_tables`, a
  job's tables, all or none (the ingest job).
- `runs` and `rows` (rule `validate`): `validate_run` compares the two aggregate sets check by
  check and the source rows with the export row by row (DuckDB `EXCEPT ALL` both ways, over row
  hashes); `report` turns the result into the validation file, a log and one sentence.

What they share (DuckDB connections, quoting, and timestamps as epoch microseconds in UTC, ISO
strings with microsecond precision when shown) is in ingestbench.columnar.duckdb_sql, which a user's
own file's counts use too.

May import: errors, storage.files, tables, tsbs, server, results.records, columnar.duckdb_sql,
datasets (each source as its kind reads it), own.spec (the "columns" checks of a user's table).
"""

from ingestbench.columnar.duckdb_sql import export_relation, iso_us
from ingestbench.validate.aggregates import (
    TAG_VALUES_LIMIT,
    expected_aggregates,
    questdb_aggregates,
    write_expected,
)
from ingestbench.validate.export import export_table, export_tables
from ingestbench.validate.report import ValidationFailed, failure_message, validate_files
from ingestbench.validate.rows import row_level_comparison
from ingestbench.validate.runs import validate_run

__all__ = [
    "TAG_VALUES_LIMIT",
    "ValidationFailed",
    "expected_aggregates",
    "export_relation",
    "export_table",
    "export_tables",
    "failure_message",
    "iso_us",
    "questdb_aggregates",
    "row_level_comparison",
    "validate_files",
    "validate_run",
    "write_expected",
]
