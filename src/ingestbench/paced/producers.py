"""Several producers into one table: each on a connection of its own, at an equal share of the
step's rate, sending the rows of its own share of the values of the table's first SYMBOL column
(the key: TSBS's hosts).

The repeat's plan is the one producer's: arrival i is producer i mod N's, so each sends every
N-th arrival of the schedule, at 1/N of its rate, from one shared start. Counting the table's rows
cannot tell whose rows are visible once commits interleave, so the sampler reads each key
value's latest timestamp (LATEST ON), and an arrival of a producer counts as visible once its
last row's key shows a timestamp at or after the arrival's: one connection's rows become visible
in the order it sent them, so every arrival before it is visible too.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ingestbench.errors import UserError
from ingestbench.paced.latency import Window, first_seen, percentiles
from ingestbench.paced.schedule import Released, release
from ingestbench.readers.sampler import Sample
from ingestbench.tables.spec import TableSpec


class ProducersError(UserError):
    pass


def shares(rows: pa.Table, key: str, producers: int) -> list[pa.Table]:
    """Each producer's rows in file order: those whose key is among every N-th of the key's
    values (sorted), so that no two producers share a value."""
    values = pc.unique(rows.column(key).combine_chunks().cast(pa.string())).drop_null()
    if len(values) < producers:
        raise ProducersError(
            f"column {key!r} has {len(values)} values and paced.producers asks for {producers} "
            f"producers, each sending rows of values of its own; give the dataset more values "
            f"of {key!r} or lower paced.producers."
        )
    keys = sorted(values.to_pylist())
    column = rows.column(key).cast(pa.string())
    return [rows.filter(pc.is_in(column, value_set=pa.array(keys[p::producers])))
            for p in range(producers)]  # fmt: skip


@dataclass(frozen=True)
class Arrivals:
    """What tells one producer's arrivals apart in the table: each one's timestamp (microseconds)
    and the key of its last row."""

    stamps_us: np.ndarray
    last_keys: np.ndarray  # str

    @classmethod
    def of_file(cls, rows: Path, key: str, timestamp: str, arrival_rows: int) -> Arrivals:
        table = pq.read_table(rows, columns=[key, timestamp])
        # in microseconds, as the table holds them (a finer stamp is cut, not rounded)
        column = table.column(timestamp)
        stamps = pc.cast(column, pa.timestamp("us", column.type.tz), safe=False)
        stamps = stamps.cast(pa.int64()).to_numpy()
        keys = np.asarray(table.column(key).cast(pa.string()).to_pylist(), dtype=object)
        last = np.arange(arrival_rows - 1, len(stamps), arrival_rows)
        return cls(stamps[last], keys[last])


def visible_counts(samples: Sequence[Sample], arrivals: Arrivals) -> np.ndarray:
    """Per sample, how many of the producer's arrivals were visible (a prefix: its latest
    arrival whose last row's key shows its timestamp, and every one before it)."""
    keys, codes = np.unique(arrivals.last_keys.astype(str), return_inverse=True)
    out = np.zeros(len(samples), dtype=np.int64)
    for i, sample in enumerate(samples):
        latest = sample.latest or {}
        shown = np.array([latest.get(k, -1) for k in keys], dtype=np.int64)[codes]
        seen = np.flatnonzero(shown >= arrivals.stamps_us)
        out[i] = seen[-1] + 1 if len(seen) else 0
    return np.maximum.accumulate(out) if len(out) else out


def release_all(
    arrivals: Sequence[Sequence],
    senders: Sequence,  # each producer's stream: send(arrival), finish()
    offsets: np.ndarray,
    go_on: Callable[[int, float], bool],
) -> list[Released]:
    """Each producer releases its arrivals (every N-th of `offsets`, from one shared start) on a
    thread of its own; `go_on` is asked with the arrival's index in the whole schedule, and one
    producer's stop stops them all. A producer's failure is raised once all have ended."""
    n, stop = len(senders), threading.Event()
    start = time.monotonic()
    out: list[Released | None] = [None] * n
    errors: list[BaseException] = []

    def run(p: int) -> None:
        def ask(j: int, late_s: float) -> bool:
            if stop.is_set() or not go_on(p + j * n, late_s):
                stop.set()
                return False
            return True

        try:
            out[p] = release(arrivals[p], senders[p].send, senders[p].finish, offsets[p::n],
                             go_on=ask, start=start)  # fmt: skip
        except BaseException as exc:  # noqa: BLE001  (raised below, on the caller's thread)
            stop.set()
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(p,), name=f"producer-{p}") for p in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return [r for r in out if r is not None]


def merged(released: Sequence[Released]) -> Released:
    """The producers' arrivals in the schedule's order (arrival i is producer i mod N's), up to
    the first one not sent (a producer that stopped later sent a few beyond it)."""
    n = len(released)
    prefix = min(r.sent * n + p for p, r in enumerate(released))
    index = np.arange(prefix)
    fields = [np.empty(prefix) for _ in range(3)]
    for p, r in enumerate(released):
        mine = index[p::n]
        for out, values in zip(fields, (r.due, r.started, r.accepted), strict=True):
            out[mine] = values[: len(mine)]
    return Released(*fields, max(r.finished for r in released))


def first_visible(
    samples: Sequence[Sample], arrivals: Sequence[Arrivals], prefix: int
) -> np.ndarray:
    """When each arrival of the schedule (up to `prefix`) was first seen visible: the end of the
    first sample in which its producer showed it (NaN: never)."""
    n = len(arrivals)
    ends = np.asarray([s.end for s in samples])
    out = np.full(prefix, np.nan)
    for p, mine in enumerate(arrivals):
        index = np.arange(p, prefix, n)
        counts = visible_counts(samples, mine)
        out[index] = first_seen(ends, counts, np.arange(1, len(index) + 1))
    return out


def producer_key(spec: TableSpec) -> str:
    """The column whose values the producers share out: the table's first SYMBOL column."""
    if not spec.tags:
        raise ProducersError(
            f"table {spec.table} has no SYMBOL column, and several producers each send the rows "
            f"of values of their own of one; give it one or set paced.producers: [1]."
        )
    return spec.tags[0]


def producers_p99(window: Window, due: np.ndarray, visible: np.ndarray, n: int) -> dict[str, Any]:
    """Each producer's p99 latency over the window, and their spread (None: one producer)."""
    if n == 1:
        return {"producer_p99_s": None, "producer_p99_spread_s": None}
    index = np.arange(window.first, window.end)
    p99 = [percentiles(visible[mine] - due[mine], False)["p99"]
           for mine in (index[index % n == p] for p in range(n))]  # fmt: skip
    return {"producer_p99_s": p99, "producer_p99_spread_s": max(p99) - min(p99)}


def sent_rows_file(files: list[Path], rows: list[int], out: Path) -> Path:
    """The rows every producer sent (the first `rows[p]` of its file), in one file to validate."""
    sent = [pq.read_table(f).slice(0, r) for f, r in zip(files, rows, strict=True)]
    pq.write_table(pa.concat_tables(sent), out)
    return out
