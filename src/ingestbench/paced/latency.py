"""A step's figures over its measured window: latency and service-time percentiles from
HdrHistograms, the offered, sent and visible rates, the backlog's and the latency's slopes, the
sampler's observed resolution, and the verdict.

Values are recorded in microseconds with 3 significant digits: a percentile is within 0.1 % of
the exact order statistic (HdrHistogram's stated precision). A latency below the sampler's
observed resolution is recorded as measured; readers are told it is below it (summary).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from hdrh.histogram import HdrHistogram

from ingestbench.readers.sampler import Sample

#: Microseconds; one hour at most (a step that slow has failed long before).
LOWEST_US, HIGHEST_US, DIGITS = 1, 3_600_000_000, 3
#: Relative precision of a recorded value (3 significant digits).
PRECISION = 10.0**-DIGITS
PERCENTILES = {"p50": 50.0, "p90": 90.0, "p99": 99.0, "p999": 99.9}
#: A step keeps up when the producer released its arrivals at no less than this share of the
#: offered rate, and its backlog (rows sent, not yet visible) grew by no more than
#: BACKLOG_SHARE of the offered rate over the window (its fitted slope: a flush's sawtooth
#: averages out, a server falling behind does not).
KEEPS_UP, BACKLOG_SHARE = 0.99, 0.05
#: Latency rises through a window when its fitted slope exceeds RISE_SLOPE seconds per second
#: (the server falling behind by 1 % of the time) and adds more than two observed resolutions
#: over the window (more than the sampler could make up).
RISE_SLOPE, RISE_RESOLUTIONS = 0.01, 2.0


def visible_at(samples: Sequence[Sample], cumulative_rows: np.ndarray) -> np.ndarray:
    """When each count of rows was first seen visible: the end of the first sample that saw it
    (NaN: never in the step's samples)."""
    return first_seen(np.asarray([s.end for s in samples]),
                      np.asarray([s.visible for s in samples], dtype=np.int64),
                      cumulative_rows)  # fmt: skip


def first_seen(ends: np.ndarray, counts: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """When each of the `wanted` counts was first reached: the end of the first sample whose
    count (or an earlier one's) was at least it (NaN: never)."""
    seen = np.maximum.accumulate(counts) if len(counts) else counts
    index = np.searchsorted(seen, wanted, side="left")
    out = np.full(len(wanted), np.nan)
    ok = index < len(seen)
    out[ok] = ends[index[ok]]
    return out


def histogram(seconds: np.ndarray) -> HdrHistogram:
    h = HdrHistogram(LOWEST_US, HIGHEST_US, DIGITS)
    for us in np.clip(np.rint(np.asarray(seconds) * 1e6), LOWEST_US, HIGHEST_US).astype(np.int64):
        h.record_value(int(us))
    return h


def percentiles(seconds: np.ndarray, with_p999: bool) -> dict[str, float | None]:
    """p50, p90, p99, p99.9 (None without enough values) and max, in seconds."""
    h = histogram(seconds)
    out: dict[str, float | None] = {
        name: h.get_value_at_percentile(p) / 1e6 for name, p in PERCENTILES.items()
    }
    if not with_p999:
        out["p999"] = None
    out["max"] = h.get_max_value() / 1e6
    return out


def slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of y on x (NaN with fewer than two points)."""
    if len(x) < 2 or np.ptp(x) == 0:
        return float("nan")
    return float(np.polyfit(x, y, 1)[0])


@dataclass(frozen=True)
class Window:
    """A step's measured window: its arrivals [first, end) and their seconds [t0, t1]."""

    first: int
    end: int
    t0: float
    t1: float
    offered_rows_per_s: float | None  # None: unpaced


@dataclass(frozen=True)
class StepFigures:
    """One step's row of paced.csv (besides which path, repeat and step it is)."""

    arrivals: int
    rows: int
    measured_s: float
    offered_rows_per_s: float | None  # None: the unpaced step
    released_rows_per_s: float  # the producer's own rate, first send to the last one's start
    sent_rows_per_s: float  # rows the path accepted in the window, per second
    visible_rows_per_s: float  # the slope of rows visible over the window
    backlog_rows_per_s: float  # the slope of rows sent but not yet visible
    latency_slope: float  # seconds of latency per second of the window
    latency: dict[str, float | None]
    service: dict[str, float | None]
    p999_note: str
    keeps_up: bool
    rising: bool
    resolution_s: float  # the largest gap between successful samples around the window
    failed_samples: int
    measured: bool  # the gap is at most half the bound
    bound_s: float

    @property
    def within_bound(self) -> bool:
        p99 = self.latency["p99"]
        return p99 is not None and p99 <= self.bound_s

    @property
    def passed(self) -> bool:
        """Measured, kept up, not rising, p99 under the bound (never a pass unmeasured)."""
        return self.measured and self.keeps_up and not self.rising and self.within_bound

    @property
    def status(self) -> str:
        return "not measured" if not self.measured else "pass" if self.passed else "fail"

    def to_dict(self) -> dict:
        return asdict(self) | {"passed": self.passed, "status": self.status}


def step_figures(
    window: Window,
    due: np.ndarray,
    started: np.ndarray,
    accepted: np.ndarray,
    visible: np.ndarray,
    samples: Sequence[Sample],
    failed_at: Sequence[float],
    arrival_rows: int,
    bound_s: float,
    p999_arrivals: int,
) -> StepFigures:
    """The figures of one step's window from the repeat's arrivals and samples (one clock)."""
    a, b, k = window.first, window.end, arrival_rows
    n, span = b - a, window.t1 - window.t0
    latency = visible[a:b] - due[a:b]
    ends = np.asarray([s.end for s in samples])
    inside = (ends >= window.t0) & (ends <= window.t1)
    # the gap a row could wait unseen: from the last sample before the window to the first after
    lo, hi = np.searchsorted(ends, window.t0), np.searchsorted(ends, window.t1, side="right")
    around = ends[max(0, lo - 1) : min(len(ends), hi + 1)]
    gap = float(np.diff(around).max()) if len(around) > 1 else float("inf")
    seen = np.asarray([s.visible for s in samples], dtype=float)[inside]
    starts = np.asarray([s.start for s in samples])[inside]
    # (several producers' acceptances interleave: sorted, they count the rows sent by a time)
    sent_by = np.searchsorted(np.sort(accepted), starts, side="right") * k
    backlog = slope(starts, sent_by - seen)
    visible_rate = slope(ends[inside], seen)
    in_window = (accepted >= window.t0) & (accepted <= window.t1)
    sent_rate = float(in_window.sum() * k / span) if span > 0 else float("nan")
    released_span = started[b - 1] - started[a]
    released = float((n - 1) * k / released_span) if n > 1 and released_span > 0 else math.inf
    offered = window.offered_rows_per_s
    keeps_up = offered is None or bool(released >= KEEPS_UP * offered
                                       and not backlog > BACKLOG_SHARE * offered)  # fmt: skip
    rise = slope(due[a:b] - window.t0, latency)
    rising = bool(rise > RISE_SLOPE and rise * span > RISE_RESOLUTIONS * gap)
    with_p999 = n >= p999_arrivals
    note = "" if with_p999 else f"{n:,} measured arrivals, fewer than {p999_arrivals:,}"
    return StepFigures(
        arrivals=n, rows=n * k, measured_s=float(span), offered_rows_per_s=offered,
        released_rows_per_s=released, sent_rows_per_s=sent_rate,
        visible_rows_per_s=visible_rate, backlog_rows_per_s=backlog, latency_slope=rise,
        latency=percentiles(latency, with_p999),
        service=percentiles(accepted[a:b] - started[a:b], with_p999),
        p999_note=note, keeps_up=keeps_up, rising=rising, resolution_s=gap,
        failed_samples=int(sum(window.t0 <= t <= window.t1 for t in failed_at)),
        measured=gap <= bound_s / 2, bound_s=bound_s,
    )  # fmt: skip
