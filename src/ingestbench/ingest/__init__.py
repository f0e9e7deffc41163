"""Getting a dataframe into QuestDB, read bottom-up: the frames, the methods that send them, the
repeats and the job.

- `frames/`: reading the data (`readers`, and `pipeline`: a reader thread feeding a bounded
  queue, so that reading overlaps sending) and the ILP `encoder` (with `ilp_kernel`, its hot loop).
- `methods/`: one class per ingestion method (row loops, `dataframe()`, threads, processes,
  batches, vectorized, ILP text, server-side imports), on the frames; `timing` (the clock) and
  `workers` (watching worker processes) serve them.
- `parts` (the tables a job fills, as the dataset's kind gives them: ingestbench.datasets),
  `runner` (the repeats of one variant), `warmup` (the untimed warm-up), `dedup` (the replay
  check), `contention`, and `job` (one ingestion job of the workflow: a server, the repeats, the
  run file, which it alone writes, each table's aggregates and export), and `by_hand` (that job
  run by `ingestbench ingest`, on a generated dataset or the user's own file).
- `environment`: what a run ran on (machine, Java, Python and the packages, the server's version
  and settings, the commit): each run file's host, and results/environment.json; `pins` reads
  the locked versions it records beside the installed ones.

May import: errors, storage.files, config, catalogue, variants, columnar.arrow, tables, tsbs,
server, results.records, validate (the job's export), datasets (the dataset's kind), own.rejected
(naming the first row a server's CSV import rejected), own.by_hand and own.dataset (a user's file
run by hand), workflow.rule_inputs (the settings a run by hand records), workflow.result_keys
(the config's hash in environment.json) and readers (readers beside the repeats).
"""
