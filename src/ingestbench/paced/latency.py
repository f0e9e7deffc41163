"""A step's figures: latency and service-time percentiles from HdrHistograms, the offered and
achieved rates, and whether the path kept up.

Values are recorded in microseconds with 3 significant digits: a percentile is within 0.1 % of
the exact order statistic (HdrHistogram's stated precision). A latency below the sampler's
resolution is recorded as measured; readers are told it is below the resolution (`below`).
"""

from __future__ import annotations

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
#: A step keeps up when it releases its arrivals at no less than this share of the offered rate.
KEEPS_UP = 0.99
#: Latency rises through a step when its last quarter's median exceeds its first quarter's by
#: more than two sampling intervals and by half: a backlog that grows, not the jitter of the
#: sampler or of a flush interval (whose sawtooth has the same median in every quarter).
RISE_INTERVALS, RISE_SHARE = 2.0, 1.5


def visible_at(samples: Sequence[Sample], cumulative_rows: np.ndarray) -> np.ndarray:
    """When each count of rows was first seen visible: the end of the first sample that saw it
    (NaN: never in the step's samples)."""
    seen = np.maximum.accumulate(np.asarray([s.visible for s in samples], dtype=np.int64))
    at = np.asarray([s.end for s in samples])
    index = np.searchsorted(seen, cumulative_rows, side="left")
    out = np.full(len(cumulative_rows), np.nan)
    ok = index < len(seen)
    out[ok] = at[index[ok]]
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


def median(seconds: np.ndarray) -> float:
    return histogram(seconds).get_value_at_percentile(50.0) / 1e6


@dataclass(frozen=True)
class StepFigures:
    """One step's row of paced.csv (besides which path and step it is)."""

    arrivals: int
    rows: int
    offered_rows_per_s: float | None  # None: the unpaced step
    achieved_rows_per_s: float
    latency: dict[str, float | None]
    service: dict[str, float | None]
    first_quarter_p50_s: float
    last_quarter_p50_s: float
    keeps_up: bool
    rising: bool
    resolution_s: float

    @property
    def sustained(self) -> bool:
        return self.keeps_up and not self.rising

    def within(self, bound_s: float) -> bool:
        """Sustained, with its p99 under the bound."""
        p99 = self.latency["p99"]
        return self.sustained and p99 is not None and p99 <= bound_s

    def to_dict(self) -> dict:
        return asdict(self) | {"sustained": self.sustained}


def step_figures(
    due: np.ndarray,
    started: np.ndarray,
    visible: np.ndarray,
    service_s: np.ndarray,
    arrival_rows: int,
    offered_rows_per_s: float | None,
    resolution_s: float,
    p999_arrivals: int,
) -> StepFigures:
    """The figures of one step from its arrivals' times (seconds, one clock)."""
    n = len(due)
    latency = visible - due
    quarter = max(1, n // 4)
    q1, q4 = median(latency[:quarter]), median(latency[-quarter:])
    rising = bool(q4 - q1 > RISE_INTERVALS * resolution_s and q4 > RISE_SHARE * q1)
    # The rate the producer released arrivals at: from the first send to the last one's start.
    span = started[-1] - started[0]
    achieved = float((n - 1) * arrival_rows / span) if n > 1 and span > 0 else float("inf")
    keeps_up = bool(offered_rows_per_s is None or achieved >= KEEPS_UP * offered_rows_per_s)
    return StepFigures(
        arrivals=n,
        rows=n * arrival_rows,
        offered_rows_per_s=offered_rows_per_s,
        achieved_rows_per_s=achieved,
        latency=percentiles(latency, n >= p999_arrivals),
        service=percentiles(service_s, n >= p999_arrivals),
        first_quarter_p50_s=float(q1),
        last_quarter_p50_s=float(q4),
        keeps_up=keeps_up,
        rising=rising,
        resolution_s=resolution_s,
    )
