"""The readers experiment: readers beside ingestion, concurrent query clients and a sampler, in a
process of their own, while a variant's repeats ingest into the table they read.

- `queries`: the queries readers send (TSBS's devops mix, or a latest-row query and a `SAMPLE
  BY`); which a dataset gets is its kind's answer (ingestbench.datasets).
- `worker`: the child process: N reader threads over HTTP `/exec`, at a set rate or as fast as
  possible, and the sampler.
- `sampler`: the visibility sampler, a thread reading the table's accepted and visible rows and
  its WAL transactions (`tables()`) every `sample_interval_s`; paced ingestion's too.
- `load`: `QueryLoad`, the parent's handle on that process for one repeat (or for the finished
  table), and what it returns.
- `stats`: percentiles, query statistics, and the visibility lag from the samples.
- `series`: the throughput-over-time file beside a run file (`<variant>.series.csv`).
- `beside`: the readers' part of an ingestion job: repeats with 0, 2, 8, ... readers after the
  plain ones, then the same queries against the finished table; the run file's `readers` field.
- `pinning`: the server and the client on separate cores (`sched_setaffinity`).

The reader count is a loop inside the ingestion job, not a variant axis: the plain repeats of
the same job (same server, same data) are the baseline the readers' repeats are divided by, the
variant's name and files stay those of the default run, and the export validated row for row is
the table of the job's last repeat, which ran with the most readers.

May import: config (its settings), errors, storage.files (atomic writes), server (a child's death
with its parent) and variants (which methods import on the server's side).
"""
