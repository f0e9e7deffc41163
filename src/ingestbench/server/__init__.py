"""The QuestDB server: its jar, the process the workflow starts, and the SQL and uploads around it.

- `jar`: the Maven Central jar of the configured version, cached once per version and checked.
- `access`: TLS and credentials (secrets from the environment, masked wherever shown), and the
  ILP/TCP key's challenge and response.
- `handle`: `QuestDB`, a client of a running server's HTTP API (credentials, CA, table names).
- `process`: how every server process starts (`ServerLaunch`: its command line, environment,
  log and readiness), and a fresh embedded server's start and stop (127.0.0.1 only unless
  asked; stopped on failure, Ctrl-C and SIGTERM).
- `aot`: the JVM AOT cache a server starts from, made once per jar and Java.
- `configured`: the server a job uses, from the config's settings: embedded or external (checked,
  whose tables the run created go at the end); `server_launch`, the launch of the config's
  settings, which every server the workflow starts uses.
- `data_dir`: an embedded server's data directory, naming its owner; a full disk under it told;
  those of killed jobs removed.
- `deadline`: a repeat whose server makes no progress for too long fails, naming the server.
- `restartable`: a server to do faults to: killed (a process crash) and restarted on the same
  data directory and ports, paused and resumed (the delivery experiment).
- `serve`: `ingestbench server`, one server kept up for benchmarks and by hand.
- `table`: the one DDL every variant lands in, and waiting for rows to be visible (a suspended
  table told by QuestDB's own cause).
- `uploads`: handing a whole data file to the server (`/imp`, `read_parquet`) without a copy.

May import: errors, storage.files, storage.disk, config (the `questdb` settings), schema (its
defaults), tables (a table's spec and its columns' QuestDB types) and tsbs (the cpu table's
columns).
"""
