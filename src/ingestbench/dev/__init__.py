"""Maintenance tools of the checkout, not of a benchmark run.

- `lockfile`: requirements.lock as the one source of versions, and the conda env derived from it.
- `readme`: `make readme`: the README's figures, docs/configuration.md and, through `methods_doc`,
  docs/methods.md's method table and variant matrices, and the other texts the method catalogue
  writes, generated from committed files.
- `rulegraph`: the Snakefile's rule graph as Mermaid, kept in docs/development.md.
- `workflow_copy`: a runnable copy of the workflow in another directory (tests, benchmarks).

May import: config (the README's config hash), schema (the configuration reference), catalogue
(the method table, full.yaml's variants), datasets (the plan: each dataset's variants) and
storage.files.
"""
