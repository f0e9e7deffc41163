"""The row loops: one `sender.row()` call per row, the baselines the dataframe methods beat.

Slow by nature, so `rows_cap` may cap the rows they ingest (ingestbench.variants).
"""

from __future__ import annotations

from questdb import TimestampNanos

from ingestbench.columnar.arrow import is_polars
from ingestbench.ingest.methods.base import Job, Method
from ingestbench.ingest.methods.experiments import SenderStream
from ingestbench.tables.spec import TableSpec


def _fields(frame, spec: TableSpec) -> list[str]:
    return [n for n in frame.columns if n not in spec.tags and n != spec.timestamp]


def _present(values: dict) -> dict:
    """A row's symbols or columns without its nulls (None, NaN, NA): row() takes no null, and
    a user's loop leaves an empty cell out of the line, as dataframe() does. A NumPy scalar
    (what pandas' nullable Int64 yields) becomes a Python one: row() takes no NumPy type."""
    return {k: (v.item() if type(v).__module__ == "numpy" else v)
            for k, v in values.items() if not _is_null(v)}  # fmt: skip


def _is_null(value) -> bool:
    # pandas' NA compares as NA (not a bool), so it is told by its type before any comparison.
    return value is None or type(value).__name__ == "NAType" or value != value


def rows_into(target, frame, spec: TableSpec) -> None:
    """The baseline from QuestDB's blog: one row() call per row."""
    table, tags, tag_idx = spec.table, spec.tags, range(len(spec.tags))
    fields = _fields(frame, spec)
    rows = frame.iter_rows() if is_polars(frame) else frame.itertuples(index=False, name=None)
    n_tags = len(tags)
    if spec.nullable:
        for row in rows:
            target.row(
                table,
                symbols=_present({tags[i]: row[i] for i in tag_idx}),
                columns=_present(dict(zip(fields, row[n_tags:-1], strict=True))),
                at=row[-1],
            )
        return
    for row in rows:  # the clean tables: nothing to leave out, no test per cell
        target.row(
            table,
            symbols={tags[i]: row[i] for i in tag_idx},
            columns=dict(zip(fields, row[n_tags:-1], strict=True)),
            at=row[-1],
        )


def iterrows_into(target, frame, spec: TableSpec) -> None:
    """QuestDB's published pandas baseline, as its benchmark loops: iterrows(), then row()."""
    fields, present = _fields(frame, spec), _present if spec.nullable else dict
    for _index, row in frame.iterrows():
        target.row(
            spec.table,
            symbols=present({tag: row[tag] for tag in spec.tags}),
            columns=present({name: row[name] for name in fields}),
            at=TimestampNanos(row[spec.timestamp].value),
        )


class Rows(Method):
    """Tuples from the library's own row iterator (pandas itertuples, polars iter_rows)."""

    def convert(self, frame):
        return frame  # iterate natively: pandas itertuples, polars iter_rows

    def serialize_into(self, target, frame, spec: TableSpec) -> None:
        rows_into(target, frame, spec)

    def send(self, sender, frame, job: Job, spec: TableSpec) -> None:
        self.serialize_into(sender, frame, spec)


class Iterrows(Rows):
    """The row loop over `DataFrame.iterrows()` (pandas only): a Series built per row."""

    def serialize_into(self, target, frame, spec: TableSpec) -> None:
        iterrows_into(target, frame, spec)


class RowsStream(SenderStream):
    """Paced: `row()` per row of each arrival, on one Sender."""

    into = staticmethod(rows_into)
