"""The queries readers send: TSBS's devops mix (`devops_queries`) and a generic pair any table
with a designated timestamp answers (`latest_queries`). Which a dataset gets is its kind's
answer (ingestbench.datasets: `DatasetKind.reader_queries`).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

US = 1_000_000
HOUR_US = 3600 * US


@dataclass(frozen=True)
class QueryKind:
    """One kind of query: its name, its SQL with `{host}` and `{start}`/`{end}` (a window of
    `window_us` at random within the data's span) filled in per query; picklable (the readers
    run in a process of their own)."""

    name: str
    template: str
    hosts: int = 0  # host_0 .. host_{hosts-1}; 0: the template names no host
    first_us: int = 0  # the data's first timestamp (µs since the epoch)
    last_us: int = 0  # its last one
    window_us: int = 0  # 0: the template names no window

    def sql(self, rng: random.Random) -> str:
        values: dict[str, str] = {}
        if self.hosts:
            values["host"] = f"host_{rng.randrange(self.hosts)}"
        if self.window_us:
            latest_start = max(self.first_us, self.last_us - self.window_us)
            start = rng.randint(self.first_us, latest_start)
            values["start"], values["end"] = _iso(start), _iso(start + self.window_us)
        return self.template.format(**values)


def _iso(us: int) -> str:
    return (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=us)).strftime(
        "%Y-%m-%dT%H:%M:%S.%fZ"
    )


def _last_minute(table: str, ts: str, aggregates: str, rows: int | None = None) -> str:
    """A `SAMPLE BY 1s` over the minute before the table's latest row (what a live dashboard
    shows; its anchor is the newest row the reader can see). QuestDB takes no subquery as an
    argument of dateadd: the table's `rows` of a minute where they are known (TSBS: its hosts
    times the readings of a minute, the last rows of a table in time order), else a join with
    its latest timestamp."""
    if rows:
        return f"SELECT {ts}, {aggregates} FROM (SELECT * FROM {table} LIMIT -{rows}) SAMPLE BY 1s"
    return (f"WITH latest AS (SELECT max({ts}) latest_ts FROM {table}) SELECT {ts}, {aggregates} "
            f"FROM {table} CROSS JOIN latest WHERE {ts} >= dateadd('m', -1, latest_ts) "
            f"SAMPLE BY 1s")  # fmt: skip


def devops_queries(table: str, ts: str, dataset: dict[str, Any]) -> tuple[QueryKind, ...]:
    """TSBS's devops queries on a TSBS cpu table (its hosts and span from the dataset's summary):
    `lastpoint` (each host's latest row), `single-groupby-1-1-1` (one host's max usage_user per
    minute over one hour), `high-cpu-1` (one host's rows with usage_user > 90 over 12 hours) and
    a `SAMPLE BY` over the last minute."""
    first, last = _span_us(dataset)
    span = {"hosts": int(dataset["scale"]), "first_us": first, "last_us": last}
    return (
        QueryKind("lastpoint", f"SELECT * FROM {table} LATEST ON {ts} PARTITION BY hostname"),
        QueryKind("groupby-1h", f"SELECT {ts}, max(usage_user) FROM {table} WHERE hostname "
                  f"= '{{host}}' AND {ts} >= '{{start}}' AND {ts} < '{{end}}' SAMPLE BY 1m",
                  window_us=HOUR_US, **span),
        QueryKind("high-cpu-12h", f"SELECT * FROM {table} WHERE usage_user > 90.0 AND "
                  f"hostname = '{{host}}' AND {ts} >= '{{start}}' AND {ts} < '{{end}}'",
                  window_us=12 * HOUR_US, **span),
        QueryKind("last-minute", _last_minute(
            table, ts, "avg(usage_user), max(usage_system)",
            rows=span["hosts"] * _readings_a_minute(dataset))),
    )  # fmt: skip


def latest_queries(table: str, ts: str) -> tuple[QueryKind, ...]:
    """What any table with a designated timestamp `ts` answers: its latest row, and a count per
    second over its last minute."""
    return (
        QueryKind("latest-row", f"SELECT * FROM {table} LIMIT -1"),
        QueryKind("last-minute", _last_minute(table, ts, "count()")),
    )


def _readings_a_minute(dataset: dict[str, Any]) -> int:
    return max(1, math.ceil(60 / float(dataset.get("interval_s") or 10.0)))


def _span_us(dataset: dict[str, Any]) -> tuple[int, int]:
    """The first and last timestamps of a TSBS dataset (its start, epochs and interval)."""
    start = datetime.fromisoformat(str(dataset.get("start") or "2016-01-01T00:00:00Z"))
    first = int((start - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds()) * US
    interval_s = float(dataset.get("interval_s") or 10.0)
    return first, first + int((int(dataset.get("epochs") or 1) - 1) * interval_s * US)
