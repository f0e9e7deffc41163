"""What the workflow measured, as typed records and the tables made from them.

- `records`: the run and validation files (typed, versioned) and the summary's row.
- `summary/`: run files into `summary.csv`/`summary.md`: each run's figures (`rows`: medians,
  rates, speedups; the wire ceiling's fraction from `ceiling`), the columns of a run with readers
  (`readers`), the settings a run must have run under (`settings`), the readable tables
  (`markdown`).
- `published`: QuestDB's own published benchmark figures beside this run's (the
  `published_comparison.md` table).
- `compare`: two results folders, variant by variant (`ingestbench compare`).

May import: errors, storage.files, catalogue, variants (which methods are row loops) and
workflow.rule_inputs (the settings a run file must record) and server.versions (the label of the
server a run ran on).
"""
