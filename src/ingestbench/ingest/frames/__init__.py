"""The dataframes a method sends, the bottom of ingest: read from the dataset's files and encoded
as ILP. Nothing here knows a method, a repeat or a job.

- `readers`: Parquet/CSV into pandas or polars, whole or in chunks (a kind that reads its source
  itself, as the user's own file, through its kind: ingestbench.datasets); `pipeline`: a reader
  thread feeding a bounded queue, so that reading overlaps sending.
- `encoder`: ILP text column by column (Arrow/NumPy), byte for byte what the client writes;
  `ilp_fields`: each field column's kind and plain arrays; `ilp_kernel`: its hot loop, compiled
  with numba.

Within ingest, may import: nothing.
"""
