"""Delivery under faults: what each path loses, duplicates or reports when its server is killed
and restarted, paused, or its connection cut mid-load (docs/faults.md).

- `paths`: the paths (a catalogue method over a transport, with or without DEDUP) and the faults.
- `source`: the dataset's table as its kind gives it (TSBS cpu, or own data) and the paths that
  cannot run on it.
- `settings`: the config's `delivery` section as a record, and `check(config)`, its problems.
- `loaders`: the resending load (the retry loop, the history: each batch's attempts and outcome
  as the client saw it) that each method's own loader (its catalogue record's `deliver` or
  `deliver_resume`, under ingest.methods) sends through.
- `relay`: the relay process that cuts a connection mid-request or before its answer (or, for
  the tests, acknowledges a request it keeps from the server).
- `faults`: the injector, a thread that does the fault at its time, on its own clock.
- `history`: whether a fault overlapped a request, the settled table, the history files.
- `check`: the table against its source, row for row with multiplicity (DuckDB).
- `experiment`: each path's warm-up, controls and fault points on one restartable server;
  delivery.csv's rows.
- `matrix`: each case's verdict, the worst per cell, the recommendation.
- `summary`: the matrix as markdown (summary.md's section, delivery.md); `job`: rule delivery.

May import: catalogue, config (the `questdb` settings its server starts with), datasets (the
table as the dataset's kind gives it), variants (the variant its kind's support is asked about),
storage.files, server (the restartable server, tables, the handle), ingest (the frame reader, the
ILP encoder and the SQL rows), tsbs (the cpu table), validate (the export and the row
comparison), tables (the spec), columnar.duckdb_sql and charts.style (the chart's style).
"""
