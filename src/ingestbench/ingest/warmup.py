"""An untimed warm-up ingestion on a fresh server, so the timed repeats meet a warm JVM.

A freshly started QuestDB ingests markedly slower at first (its JIT has not compiled the ILP
and WAL paths yet): without a warm-up the first repeat measures start-up, not the method. The
warm-up sends the first `rows` rows of the dataset and waits until they are visible; its time is
recorded apart (`warmup` in the run file) and never enters a repeat. The timed repeats then drop
and recreate the table, so they start from an empty table as always.

Which ingestion warms up:
- the variant's own method (dataframe, batches, threads, processes, vectorized) on the first
  `rows` rows: cheap, and it warms the very code paths (one or several connections) the repeats use;
- the SQL methods (over PGWire, another path through the server) warm up with themselves, on
  at most the rows they ingest (`rows_cap` caps them);
- one `dataframe()` call of the first `rows` rows over the variant's transport for the row loops
  (rows, iterrows: their Python loop would take longer than the repeats it warms up for), the
  server-side methods (they cannot ingest a prefix of the file) and `ilp_file` (from the
  dataset's Parquet).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import Any

from questdb import Sender

from ingestbench.catalogue import FRAME_FORMATS
from ingestbench.catalogue import METHODS as CATALOGUE
from ingestbench.columnar.arrow import to_pandas
from ingestbench.ingest.frames.readers import read_frame
from ingestbench.ingest.methods import METHODS, Job, client_errors, dataframe_into
from ingestbench.ingest.timing import Clock
from ingestbench.server.table import recreate_table, wait_visible
from ingestbench.variants import Variant

log = logging.getLogger(__name__)


def warmup_method(variant: Variant) -> str:
    """The method the warm-up of `variant` uses (see the module's docstring)."""
    return variant.method if CATALOGUE[variant.method].warms_up else "dataframe"


def _dataframe_prefix(job: Job) -> None:
    """One dataframe() call per table with its first rows, read with pandas."""
    fmt = job.variant.format
    frames = [
        (part.spec, to_pandas(read_frame(part.path, "pandas", fmt, 0, part.rows, spec=part.spec)))
        for part in job.tables
    ]
    with client_errors(job, "warming up"), Sender.from_conf(job.conf()) as sender:
        for spec, frame in frames:
            dataframe_into(sender, frame, spec)
        sender.flush()


def warm_up(job: Job, rows: int, dataset_rows: int) -> dict[str, Any] | None:
    """Ingest the first `rows` rows (at most the dataset) untimed; {rows, seconds, method}.

    None when `rows` is 0 (warm-up off). The table is left holding the warm-up's rows: the first
    timed repeat recreates it.
    """
    rows = min(rows, dataset_rows)
    if rows <= 0:
        return None
    method = warmup_method(job.variant)
    warm_job = job.with_rows(rows)
    if method != job.variant.method:  # the row loops and server methods: dataframe() over the
        fmt = job.variant.format  # same transport
        if fmt not in FRAME_FORMATS:  # the ILP text: from the Parquet every dataset has
            fmt = "parquet"
        variant = Variant("pandas", "dataframe", fmt, job.variant.transport)
        warm_job = dataclasses.replace(warm_job.in_format(fmt), variant=variant)
    for part in job.tables:
        recreate_table(job.qdb, part.spec, dedup=job.dedup)
    t0 = time.perf_counter()
    if method == job.variant.method:
        METHODS[method]().send_pass(warm_job, Clock())
    else:
        _dataframe_prefix(warm_job)
    for part in warm_job.tables:
        wait_visible(job.qdb, part.spec.table, part.rows)
    seconds = time.perf_counter() - t0
    log.info("warm-up: %d rows with %s in %.3f s (%.0f rows/s, untimed)", rows, method,
             seconds, rows / seconds)  # fmt: skip
    return {"rows": rows, "seconds": round(seconds, 6), "method": method}
