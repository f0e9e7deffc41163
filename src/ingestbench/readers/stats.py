"""The readers' figures: query latency per kind, readers that fell behind, and the visibility lag
from the sampler's samples.

Visibility lag, from samples (time, rows accepted, rows visible, sequencer txn, writer txn) taken
every sample interval:

- basis `txn` (ILP/HTTP and PGWire, where a commit is acknowledged): per WAL transaction k, the
  time from the first sample whose sequencer txn has reached k (committed) to the first whose
  writer txn has (applied, visible). Both ends are seen up to one interval late, so each lag is
  within one interval of the truth; a transaction committed and applied between two samples
  counts 0.
- basis `gap` (ILP/TCP: no acknowledgement ties a commit to the client's send): per sample, the
  time until the writer reaches the sequencer txn that sample saw: the age of the WAL backlog,
  sampled over time.
- `n/a`: server-side imports (no WAL transactions of the client's).

The backlog in rows (accepted − visible) is given for every basis.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

PERCENTILES = (50, 95, 99)
#: A reader at a set rate that reached less than this share of it could not keep up.
KEEP_UP_SHARE = 0.9


def percentiles(values: Sequence[float], scale: float = 1.0, digits: int = 3) -> dict[str, Any]:
    """p50, p95, p99 and max of `values` times `scale`; None each when there are none."""
    if not len(values):
        return {**{f"p{p}": None for p in PERCENTILES}, "max": None}
    arr = np.asarray(values, dtype="float64") * scale
    out = {f"p{p}": round(float(np.percentile(arr, p)), digits) for p in PERCENTILES}
    return out | {"max": round(float(arr.max()), digits)}


def query_stats(
    readers: list[dict[str, Any]],
    names: list[str],
    window: tuple[float, float],
    rate_per_s: float | None,
) -> dict[str, Any]:
    """Per kind and over all kinds: queries, errors, latency percentiles (ms) and queries per
    second, of the queries started within `window`; every error counted, the first few kept;
    each reader's achieved rate, and at a set rate whether it kept up."""
    began, ended = window
    seconds = max(ended - began, 1e-9)
    per_kind: dict[str, list[float]] = {n: [] for n in names}
    errors = dict.fromkeys(names, 0)
    kept: list[str] = []
    rates, behind = [], 0
    for log in readers:
        inside = [i for i, t in enumerate(log["start"]) if began <= t <= ended]
        for i in inside:
            name = names[log["kind"][i]]
            if log["ok"][i]:
                per_kind[name].append(log["seconds"][i])
            else:
                errors[name] += 1
        kept += log["errors"]
        rate = len(inside) / seconds
        rates.append(round(rate, 3))
        behind += bool(rate_per_s) and rate < KEEP_UP_SHARE * float(rate_per_s or 0)
    kinds = {n: _kind(per_kind[n], errors[n], seconds) for n in names}
    every = [s for n in names for s in per_kind[n]]
    return {
        "readers": len(readers),
        "seconds": round(seconds, 4),
        "rate_per_s": rate_per_s,
        "queries": kinds,
        "all": _kind(every, sum(errors.values()), seconds),
        "errors": sum(errors.values()),
        "error_messages": kept,
        "reader_rates": rates,
        "readers_behind": int(behind) if rate_per_s else None,
    }


def _kind(latencies: list[float], errors: int, seconds: float) -> dict[str, Any]:
    stats = percentiles(latencies, scale=1000.0, digits=2)
    return {"count": len(latencies), "errors": errors,
            **{f"{k}_ms": v for k, v in stats.items()},
            "per_s": round(len(latencies) / seconds, 3)}  # fmt: skip


def visibility(samples: list[Sequence[float]], basis: str) -> dict[str, Any]:
    """The visibility lag (seconds) on `basis` (module docstring) and the backlog in rows."""
    backlog = [s[1] - s[2] for s in samples]
    out: dict[str, Any] = {"basis": basis, **{f"backlog_rows_{k}": v for k, v in
                           percentiles(backlog, digits=0).items()}}  # fmt: skip
    if basis == "txn":
        lags, unresolved = txn_lags(samples)
    elif basis == "gap":
        lags, unresolved = gap_lags(samples)
    else:
        return out
    return out | {"lags": len(lags), "unresolved": unresolved,
                  **{f"lag_s_{k}": v for k, v in percentiles(lags).items()}}  # fmt: skip


def txn_lags(samples: list[Sequence[float]]) -> tuple[list[float], int]:
    """Per WAL transaction: first seen committed to first seen applied; and how many were still
    unapplied at the last sample."""
    if not samples:
        return [], 0
    times = [s[0] for s in samples]
    seq = np.maximum.accumulate([int(s[3]) for s in samples])  # never seen to go back
    writer = np.maximum.accumulate([int(s[4]) for s in samples])
    txns = np.arange(int(writer[0]) + 1, int(seq[-1]) + 1)
    committed = np.searchsorted(seq, txns, side="left")  # first sample with seq >= k
    applied = np.searchsorted(writer, txns, side="left")
    done = applied < len(samples)
    lags = [times[a] - times[c] for c, a in zip(committed[done], applied[done], strict=True)]
    return [max(0.0, lag) for lag in lags], int((~done).sum())


def gap_lags(samples: list[Sequence[float]]) -> tuple[list[float], int]:
    """Per sample: the time until the writer reached the sequencer txn that sample saw."""
    if not samples:
        return [], 0
    times = [s[0] for s in samples]
    writer = np.maximum.accumulate([int(s[4]) for s in samples])
    lags, unresolved = [], 0
    for i, s in enumerate(samples):
        j = int(np.searchsorted(writer, int(s[3]), side="left"))
        if j >= len(samples):
            unresolved += 1
        else:
            lags.append(max(0.0, times[max(j, i)] - times[i]))
    return lags, unresolved


def nan_if_none(value: Any) -> float:
    return math.nan if value is None else float(value)
