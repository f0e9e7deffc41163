"""The producer: arrivals released on a schedule fixed before the step starts.

Arrival i is due at `start + i / arrivals_per_s`. A producer that falls behind (the interpreter
is shared, a send blocks) sends the next arrival at once, never skips one and never bursts to
catch up beyond that: every latency counts from the schedule, so lateness shows as latency
(no coordinated omission). An unpaced step (no rate) sends back to back; each arrival is then
due when the one before it was accepted.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass
class Released:
    """When each arrival was due, when its send began and when the path accepted it
    (time.monotonic() seconds), and the step's final flush."""

    due: np.ndarray
    started: np.ndarray
    accepted: np.ndarray
    finished: float  # the end of the step's closing flush

    @property
    def service_s(self) -> np.ndarray:
        """The client's own time to accept each arrival (its flush too, where it flushes)."""
        return self.accepted - self.started


def release(
    arrivals: Sequence,
    send: Callable[[object], None],
    finish: Callable[[], None],
    arrivals_per_s: float | None,
    sleep: Callable[[float], None] = time.sleep,
) -> Released:
    """Send every arrival on schedule (None: back to back), then `finish()` (the step's flush)."""
    n = len(arrivals)
    due, started, accepted = np.empty(n), np.empty(n), np.empty(n)
    period = 1.0 / arrivals_per_s if arrivals_per_s else 0.0
    start = time.monotonic()
    for i, arrival in enumerate(arrivals):
        if period:
            due[i] = start + i * period
            wait = due[i] - time.monotonic()
            if wait > 0:
                sleep(wait)
        else:
            due[i] = accepted[i - 1] if i else start
        started[i] = time.monotonic()
        send(arrival)
        accepted[i] = time.monotonic()
    finish()
    return Released(due, started, accepted, time.monotonic())
