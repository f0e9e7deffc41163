"""The columnar libraries more than one stage reads data with.

- `arrow`: Arrow tables into pandas or polars as the ILP client takes them, in chunks of a set
  size, integer columns with nulls kept integer (the readers of TSBS files and of your own).
- `duckdb_sql`: DuckDB connections, SQL quoting, the relations over a dataset's files and the
  timestamp rule (the validation, your own file's counts and sorted copy, the dtype matrix).

May import: errors.
"""
