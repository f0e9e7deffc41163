"""Maintenance tools of the checkout, not of a benchmark run.

- `lockfile`: requirements.lock as the one source of versions, and the conda env derived from it.
- `rulegraph`: the Snakefile's rule graph as Mermaid, kept in docs/development.md.
- `workflow_copy`: a runnable copy of the workflow in another directory (tests, benchmarks).

May import: config (the README's config hash), schema (the configuration reference), files.
"""
