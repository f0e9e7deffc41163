"""The throughput-over-time file beside a run file: `<variant>.series.csv`, one row per sample.

Beside the run file rather than in it (its samples would bury the repeats people read) and not
named `*.json` (a results folder's `runs/*/*/*.json` are run files). Columns: `readers` (how many
read during the repeat; 0: the sampler alone), `repeat`, `t_s` (seconds since the repeat's clock
started), `rows_accepted` (visible plus waiting in the WAL), `rows_visible`, `sequencer_txn`,
`writer_txn`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from pathlib import Path

from ingestbench.storage.files import write_text_atomic

COLUMNS = ("readers", "repeat", "t_s", "rows_accepted", "rows_visible", "sequencer_txn",
           "writer_txn")  # fmt: skip
SUFFIX = ".series.csv"


def series_path(run_path: str | Path) -> Path:
    """The series file of the run file `run_path`."""
    run_path = Path(run_path)
    return run_path.with_name(run_path.stem + SUFFIX)


def write_series(path: str | Path, rows: Iterable[Sequence[float]]) -> Path:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows(rows)
    write_text_atomic(path, out.getvalue())
    return Path(path)
