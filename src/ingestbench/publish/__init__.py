"""Publishing runs: the archive of run documents, the history across them, the static page.

Owns `archive/` (one JSON document per finished run, checked against schemas/archive.schema.json
when written and when read), `ingestbench history` (each variant's rate over the archived runs of
one machine and config, in commit order) and `site/index.html` (one offline page over the archive
and the current results: its charts in specs, its script and style in page/).

It reads finished results only, so it imports nothing of ingest, server or tsbs.

May import: errors, storage.files, results (summary, compare's noise rule, the published
figures), charts.registry (the page's charts, by name) and workflow.experiments (each
experiment's part of a document and its section of the page, by its hooks).
"""
