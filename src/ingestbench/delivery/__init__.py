"""Delivery under faults: what each path loses, duplicates or reports when its server is killed
and restarted, paused, or its connection cut mid-load (docs/faults.md).

- `paths`: the paths (a catalogue method over a transport, with or without DEDUP) and the faults.
- `settings`: the config's `delivery` section as a record, and `check(config)`, its problems.
- `loaders`: each path's resending load, as a user following its docs writes it.
- `relay`: the relay process that cuts a connection mid-request or before its answer.
- `faults`: the injector, a thread that does the fault at its point.
- `check`: the table against its source, row for row with multiplicity (DuckDB).
- `experiment`: every path × fault × point on one restartable server; delivery.csv's rows.
- `matrix`: each case's verdict, the worst per cell, the recommendation.
- `summary`: the matrix as markdown (summary.md's section, delivery.md); `job`: rule delivery.

May import: catalogue, storage.files, server (the restartable server, tables, the
handle), ingest (the frame reader and the ILP encoder), tsbs (the cpu table), validate (the export
and its normalised rows) and columnar.duckdb_sql.
"""
