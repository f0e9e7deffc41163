"""Maintenance tools of the checkout, not of a benchmark run.

- `lockfile`: the conda env derived from requirements.lock, the one source of versions (which the
  runtime reads through ingest.pins: nothing of a run imports this package).
- `readme`: `make readme`: the README's figures, docs/configuration.md and, through `methods_doc`,
  docs/methods.md's method table and variant matrices, and the other texts the method catalogue
  writes, generated from committed files.
- `rulegraph`: the Snakefile's rule graph as Mermaid, kept in docs/development.md.
- `workflow_copy`: a runnable copy of the workflow in another directory (tests, benchmarks).

May import: config (the README's config), workflow.result_keys (its hash), schema (the
configuration reference), catalogue (the method table, full.yaml's variants), datasets (the plan:
each dataset's variants), ingest.pins (the locked versions), results.summary (the servers'
comparison the README quotes), publish.archive (the archived runs of a config, for what held in
each), paced and delivery (their recommendations the README quotes) and storage.files.
"""
