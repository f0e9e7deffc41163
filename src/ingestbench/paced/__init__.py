"""Paced ingestion: each path's latency at a set rate, and the highest rate it sustains.

A producer releases arrivals of a few rows on a schedule fixed in advance (schedule); a path
sends each as a streaming user writes it, with one of its flush modes (paths: the method's own
stream, named by its catalogue record); the readers' visibility sampler
(ingestbench.readers.sampler), in a process of its own, reads the table's visible rows every
`sample_interval_s`; each arrival's latency counts from when it was due to when a query could
read it, into HdrHistograms (latency). A job runs one path and flush mode through a warm-up step,
an unpaced step (the path's maximum) and one step per rate, each into a fresh table validated
row for row (job); several producers (producers) share a step's rate and the table's key
values, each on a connection of its own. Its record goes to paced.csv and the summary (table,
summary: its rows and section, which results.summary writes); `chart` draws the registry's
chart `paced` from paced.csv; `settings` has its section's checks, its jobs' settings and what
`ingestbench variants` lists of it (its entry: ingestbench.workflow.experiments).

May import: catalogue, config, errors, storage, server, datasets, tables, ingest, validate,
readers (the visibility sampler), variants, charts.style (the chart's style) and
workflow.result_keys (a job's server settings).
"""
