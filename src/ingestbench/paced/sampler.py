"""The visibility sampler: the table's visible rows read every `interval_s` on a thread.

One query per sample, the readers' sampler's (`tables()`: rows applied, i.e. readable), over
HTTP `/exec`. A row counts as visible at the end of the first sample that sees it: the true
moment lies after the sample before it began, so a latency is exact to within one interval plus
one sample's round trip, and never under-stated. A failed sample is counted, not guessed.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np
import requests

from ingestbench.server.process import QuestDB

SAMPLE_SQL = "SELECT table_row_count FROM tables() WHERE table_name = '{table}'"


@dataclass
class Samples:
    """Each sample's end (time.monotonic()) and the rows it saw; its round trips; failures."""

    at: list[float] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)
    round_trip_s: list[float] = field(default_factory=list)
    failed: int = 0

    def visible_at(self, cumulative_rows: np.ndarray) -> np.ndarray:
        """When each count of rows was first seen (NaN: never in the step's samples)."""
        seen = np.maximum.accumulate(np.asarray(self.rows, dtype=np.int64))
        at = np.asarray(self.at)
        index = np.searchsorted(seen, cumulative_rows, side="left")
        out = np.full(len(cumulative_rows), np.nan)
        ok = index < len(seen)
        out[ok] = at[index[ok]]
        return out


class Sampler:
    """Samples `table` until stop(); `wait_for(rows)` waits until a sample sees that many."""

    def __init__(self, qdb: QuestDB, table: str, interval_s: float):
        self.url, self.kwargs = f"{qdb.url}/exec", qdb.access.http_kwargs()
        self.sql, self.interval_s = SAMPLE_SQL.format(table=table), interval_s
        self.samples = Samples()
        self._stop, self._seen = threading.Event(), threading.Condition()
        self._thread = threading.Thread(target=self._run, name="visibility", daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        with requests.Session() as session:
            due = time.monotonic()
            while not self._stop.is_set():
                t0 = time.monotonic()
                rows = self._sample(session)
                t1 = time.monotonic()
                if rows is not None:
                    with self._seen:
                        self.samples.at.append(t1)
                        self.samples.rows.append(rows)
                        self.samples.round_trip_s.append(t1 - t0)
                        self._seen.notify_all()
                due = max(due + self.interval_s, t1)  # a late sample is not made up for
                self._stop.wait(max(0.0, due - time.monotonic()))

    def _sample(self, session: requests.Session) -> int | None:
        try:
            r = session.get(self.url, params={"query": self.sql}, timeout=10, **self.kwargs)
            dataset = r.json().get("dataset") if r.status_code == 200 else None
        except (requests.RequestException, ValueError):
            dataset = None
        if not dataset:
            self.samples.failed += 1
            return None
        rows = dataset[0][0]
        return int(rows) if rows is not None else 0  # a new WAL table has no count yet

    def wait_for(self, rows: int, timeout_s: float) -> bool:
        """True once a sample has seen `rows` rows; False after `timeout_s`."""
        end = time.monotonic() + timeout_s
        with self._seen:
            while not self.samples.rows or self.samples.rows[-1] < rows:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._seen.wait(left)
        return True
