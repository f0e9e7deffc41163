"""The producer: arrivals released on a schedule fixed before the repeat starts.

A repeat is its steps back to back on one connection and table, each a lead-in, a measured
window and a tail at its rate; every arrival's due time is an offset from the repeat's start,
computed in advance (`Plan`). A producer that falls behind (the interpreter is shared, a send
blocks) sends the next arrival at once, never skips one and never bursts to catch up beyond
that: every latency counts from the schedule, so lateness shows as latency (no coordinated
omission). An unpaced step (no offsets) sends back to back until its time is up; each arrival
is then due when the one before it was accepted.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Segment:
    """One step of a plan: its arrivals [first, end), its measured window's arrivals
    [window_first, window_end) and its rate (arrivals are `arrival_rows` rows)."""

    rows_per_s: float
    first: int
    window_first: int
    window_end: int
    end: int


@dataclass(frozen=True)
class Plan:
    """A repeat's due offsets (seconds from its start) and its steps."""

    offsets: np.ndarray
    segments: list[Segment]


def plan(rates: Sequence[float], arrival_rows: int, lead_in_s: float, step_s: float,
         tail_s: Callable[[float], float]) -> Plan:  # fmt: skip
    """The due offsets of steps at `rates`, back to back: each step's lead-in, then `step_s`
    of measured arrivals, then its tail, each at the step's rate."""
    offsets, segments, at, n = [], [], 0.0, 0
    for rate in rates:
        period = arrival_rows / rate
        # the window whole arrivals, never shorter than step_s (a rounding could cut it short)
        counts = [round(lead_in_s / period), max(1, math.ceil(step_s / period - 1e-9)),
                  max(1, round(tail_s(rate) / period))]  # fmt: skip
        total = sum(counts)
        offsets.append(at + np.arange(total) * period)
        segments.append(Segment(rate, n, n + counts[0], n + counts[0] + counts[1], n + total))
        at, n = at + total * period, n + total
    return Plan(np.concatenate(offsets) if offsets else np.empty(0), segments)


@dataclass
class Released:
    """When each arrival was due, when its send began and when the path accepted it
    (time.monotonic() seconds; only the arrivals sent), and the end of the final flush."""

    due: np.ndarray
    started: np.ndarray
    accepted: np.ndarray
    finished: float

    @property
    def service_s(self) -> np.ndarray:
        """The client's own time to accept each arrival (its flush too, where it flushes)."""
        return self.accepted - self.started

    @property
    def sent(self) -> int:
        return len(self.accepted)


def release(
    arrivals: Sequence,
    send: Callable[[object], None],
    finish: Callable[[], None],
    offsets: np.ndarray | None,
    *,
    until_s: float | None = None,
    go_on: Callable[[int, float], bool] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    start: float | None = None,
) -> Released:
    """Send the arrivals at their due offsets (None: back to back, for `until_s` seconds at
    most) from `start` (time.monotonic(); now unless several producers share one), then
    `finish()`. `go_on(i, late_s)` is asked before each arrival, with how late it is against its
    schedule: False stops the repeat there."""
    n = len(arrivals)
    due, started, accepted = np.empty(n), np.empty(n), np.empty(n)
    start = time.monotonic() if start is None else start
    sent = 0
    for i, arrival in enumerate(arrivals):
        if offsets is not None:
            due[i] = start + offsets[i]
            if go_on is not None and not go_on(i, time.monotonic() - due[i]):
                break
            wait = due[i] - time.monotonic()
            if wait > 0:
                sleep(wait)
        else:
            due[i] = accepted[i - 1] if i else start
            if until_s is not None and due[i] - start >= until_s:
                break
        started[i] = time.monotonic()
        send(arrival)
        accepted[i] = time.monotonic()
        sent = i + 1
    finish()
    return Released(due[:sent], started[:sent], accepted[:sent], time.monotonic())
