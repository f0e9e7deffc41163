"""The dtype matrix: which pandas and polars column dtypes each client path gets into QuestDB
intact, checked row for row by DuckDB (cases, senders, check, matrix, chart, job).

May import: errors, storage.files, config, server, ingest (the client paths),
validate (the export), columnar.duckdb_sql, columnar.arrow (is it a polars frame), charts (the
heatmap's style), variants (the case's variant), catalogue (the matrix's methods) and tables (the
table's spec).
"""
