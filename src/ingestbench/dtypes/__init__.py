"""The dtype matrix: which pandas and polars column dtypes each client path gets into QuestDB
intact, checked row for row by DuckDB (cases, senders, check, matrix, chart, job).

May import: errors, files, config, environment, server, arrow, ingest (the client paths),
validate (the export), duckdb_sql, charts (the heatmap's style), variants (which library each
SQL path belongs to).
"""
