"""Getting a dataframe into QuestDB: reading the data, the ingestion methods, and timing them.

- `readers`: Parquet/CSV into pandas or polars, whole or in chunks; `pipeline`: a reader thread
  feeding a bounded queue, so that reading overlaps sending.
- `encoder`: ILP text column by column (Arrow/NumPy), byte for byte what the client writes.
- `methods/`: one class per ingestion method (row loops, `dataframe()`, threads, processes,
  batches, vectorized, ILP text, server-side imports).
- `runner` (the repeats of one variant), `warmup` (the untimed warm-up), `timing` (the clock),
  `workers` (watching worker processes), `job` (one ingestion job of the workflow: a server, the
  repeats, the run file, the table's aggregates and export).

May import: errors, files, config, variants, environment, arrow, tsbs, server, results.records,
validate (the job's export) and own (a user's table: its spec, reader and methods).
"""
