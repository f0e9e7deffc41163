"""The QuestDB server: its jar, the process the workflow starts, and the SQL and uploads around it.

- `jar`: the Maven Central jar of the configured version, cached once per version and checked.
- `access`: TLS and credentials (secrets from the environment, masked wherever shown), and the
  ILP/TCP key's challenge and response.
- `handle`: `QuestDB`, a client of a running server's HTTP API (credentials, CA, table names).
- `process`: the embedded server's start, readiness and stop (127.0.0.1 only unless asked;
  stopped on failure, Ctrl-C and SIGTERM), or an external one, checked, whose tables the run
  created go at the end.
- `serve`: `ingestbench server`, one server kept up for benchmarks and by hand.
- `table`: the one DDL every variant lands in, and waiting for rows to be visible.
- `uploads`: handing a whole data file to the server (`/imp`, `read_parquet`) without a copy.

May import: errors, files, tsbs (the table's columns). Nothing above it (ingest, results,
validate, charts) imports into here.
"""
