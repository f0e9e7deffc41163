"""The row loops: one `sender.row()` call per row, the baselines the dataframe methods beat.

Slow by nature, so `rows_cap` may cap the rows they ingest (ingestbench.variants).
"""

from __future__ import annotations

from questdb import TimestampNanos

from ingestbench.ingest.methods.base import Job, Method
from ingestbench.tsbs.columns import TAGS, TIMESTAMP


def _fields(frame) -> list[str]:
    return [n for n in frame.columns if n not in TAGS and n != TIMESTAMP]


def rows_into(target, frame, job: Job) -> None:
    """The baseline from QuestDB's blog: one row() call per row."""
    table, tag_idx = job.table, range(len(TAGS))
    fields = _fields(frame)
    if type(frame).__module__.startswith("polars"):
        rows = frame.iter_rows()
    else:
        rows = frame.itertuples(index=False, name=None)
    n_tags = len(TAGS)
    for row in rows:
        target.row(
            table,
            symbols={TAGS[i]: row[i] for i in tag_idx},
            columns=dict(zip(fields, row[n_tags:-1], strict=True)),
            at=row[-1],
        )


def iterrows_into(target, frame, job: Job) -> None:
    """QuestDB's published pandas baseline, as its benchmark loops: iterrows(), then row()."""
    fields = _fields(frame)
    for _index, row in frame.iterrows():
        target.row(
            job.table,
            symbols={tag: row[tag] for tag in TAGS},
            columns={name: row[name] for name in fields},
            at=TimestampNanos(row[TIMESTAMP].value),
        )


class Rows(Method):
    """Tuples from the library's own row iterator (pandas itertuples, polars iter_rows)."""

    def convert(self, frame):
        return frame  # iterate natively: pandas itertuples, polars iter_rows

    def serialize_into(self, target, frame, job: Job) -> None:
        rows_into(target, frame, job)

    def send(self, sender, frame, job: Job) -> None:
        self.serialize_into(sender, frame, job)


class Iterrows(Rows):
    """The row loop over `DataFrame.iterrows()` (pandas only): a Series built per row."""

    def serialize_into(self, target, frame, job: Job) -> None:
        iterrows_into(target, frame, job)
