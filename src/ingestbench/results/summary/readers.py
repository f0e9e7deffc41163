"""The summary's columns of runs with readers beside them (the run file's `readers` field, written
by ingestbench.readers), and their table in summary.md.

Per reader count N of the run (`_r{N}`; 0 is the sampler alone):

- `rows_per_s_median_r{N}`: the median over the repeats with N readers, rows / end to end as in
  the plain repeats; `slowdown_r{N}` = the plain repeats' median rows/s over it (1.0: no
  slowdown; 1.25: the readers cost a fifth of the rate);
- `client_cpu_s_per_1m_rows_r{N}`, `server_cpu_s_per_1m_rows_r{N}` (the server answers the
  queries too), `readers_cpu_s_per_1m_rows_r{N}` (the readers' process, the sampler apart);
- `lag_s_{p50,p95,p99,max}_r{N}` with `lag_basis` (readers.stats: per acknowledged WAL
  transaction, or the sampled gap over ILP/TCP, or n/a for a server-side import): the median
  over the repeats of each repeat's percentile, the max of their maxima;
- `query_{p50,p95,p99}_ms_r{N}` and `qps_r{N}` over every query kind while ingesting, the same
  with `_idle` against the finished table; `q_<kind>_{p50,p95,p99}_ms[_idle]_r{N}` and
  `q_<kind>_per_s[_idle]_r{N}` per kind;
- `backlog_rows_max_r{N}` (the most rows accepted but not yet visible in a sample) and
  `sampler_cpu_s_r{N}` (the sampler thread's CPU seconds in a repeat, the median);
- `reader_errors_r{N}` (every failed query, summed over repeats: never dropped) and
  `readers_behind_r{N}` (the most readers of a repeat that ran below 90% of their set rate).
"""

from __future__ import annotations

import math
import statistics
from typing import Any

import pandas as pd

from ingestbench.results.records import RunFile

LAG_STATS = ("p50", "p95", "p99", "max")
QUERY_STATS = ("p50", "p95", "p99")


def _median(values: list[Any]) -> float:
    present = [float(v) for v in values if v is not None]
    return statistics.median(present) if present else math.nan


def _max(values: list[Any]) -> float:
    present = [float(v) for v in values if v is not None]
    return max(present) if present else math.nan


def readers_columns(record: RunFile, plain_rate: float) -> dict[str, Any]:
    """The columns of one run file (empty for a run without readers)."""
    readers = record.readers
    if not readers:
        return {}
    rows = float(record.rows)
    out: dict[str, Any] = {"reader_counts": "/".join(str(c) for c in readers["counts"]),
                           "reader_rate_per_s": readers.get("rate_per_s"),
                           "lag_basis": readers.get("lag_basis")}  # fmt: skip
    for run in readers["runs"]:
        n, reps = run["readers"], run["repeats"]
        rate = _median([rows / r["end_to_end"] for r in reps if r.get("end_to_end")])
        out[f"rows_per_s_median_r{n}"] = rate
        out[f"slowdown_r{n}"] = plain_rate / rate if rate and rate > 0 else math.nan
        loads = [r["load"] for r in reps]
        for side, values in (("client", [r.get("client_cpu_s") for r in reps]),
                             ("server", [r.get("server_cpu_s") for r in reps]),
                             ("readers", [ld.get("readers_cpu_s") for ld in loads])):  # fmt: skip
            out[f"{side}_cpu_s_per_1m_rows_r{n}"] = _median(values) / (rows / 1e6)
        lags = [ld.get("visibility") or {} for ld in loads]
        for stat in LAG_STATS:
            values = [v.get(f"lag_s_{stat}") for v in lags]
            out[f"lag_s_{stat}_r{n}"] = _max(values) if stat == "max" else _median(values)
        out[f"backlog_rows_max_r{n}"] = _max([v.get("backlog_rows_max") for v in lags])
        out[f"sampler_cpu_s_r{n}"] = _median([(ld.get("sampler") or {}).get("cpu_s")
                                              for ld in loads])  # fmt: skip
        if n > 0:
            out |= _query_columns(loads, f"_r{n}")
            out[f"reader_errors_r{n}"] = sum(int(ld.get("errors") or 0) for ld in loads)
            out[f"readers_behind_r{n}"] = _max([ld.get("readers_behind") for ld in loads])
    for idle in readers.get("idle", []):
        out |= _query_columns([idle], f"_idle_r{idle['readers']}")
        out[f"reader_errors_idle_r{idle['readers']}"] = int(idle.get("errors") or 0)
    return out


def _query_columns(loads: list[dict[str, Any]], suffix: str) -> dict[str, Any]:
    """Latency percentiles and queries per second, over every kind and per kind; the median
    over the windows (repeats) of each."""
    out: dict[str, Any] = {}
    for stat in QUERY_STATS:
        out[f"query_{stat}_ms{suffix}"] = _median([ld["all"][f"{stat}_ms"] for ld in loads])
    out[f"qps{suffix}"] = _median([ld["all"]["per_s"] for ld in loads])
    for kind in loads[0]["queries"]:
        per = [ld["queries"][kind] for ld in loads]
        for stat in QUERY_STATS:
            out[f"q_{kind}_{stat}_ms{suffix}"] = _median([q[f"{stat}_ms"] for q in per])
        out[f"q_{kind}_per_s{suffix}"] = _median([q["per_s"] for q in per])
    return out


def add_readers_columns(df: pd.DataFrame, records: list[RunFile]) -> pd.DataFrame:
    """The readers' columns, only when a run had readers: a summary without stays as it was."""
    if not any(r.readers for r in records):
        return df
    cols = [readers_columns(r, rate) for r, rate in
            zip(records, df["rows_per_s_median"], strict=True)]  # fmt: skip
    extra = pd.DataFrame(cols, index=df.index)
    return pd.concat([df, extra], axis=1)


def _fmt(value: Any, digits: int = 0, unit: str = "") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:,.{digits}f}{unit}"


def readers_lines(df: pd.DataFrame) -> list[str]:
    """summary.md's section of the runs with readers: per dataset and variant, the rate and
    slowdown per reader count, the visibility lag and the query latency with and without
    ingestion at the most readers."""
    if "reader_counts" not in df:
        return []
    runs = df[df["reader_counts"].notna()]
    lines = ["", "## Readers beside ingestion", "",
             "Each variant's plain repeats, then the same repeats with the sampler and N readers "
             "(0: the sampler alone) querying the table being written; slowdown = plain rows/s "
             "over rows/s with N readers. Lag: seconds from a WAL transaction's commit to its "
             "rows visible (`txn`), or the sampled sequencer–writer gap (`gap`, ILP/TCP). "
             "Queries: all kinds, ms, while ingesting and against the finished table (idle). "
             "Per kind: `q_*` columns of `summary.csv`."]  # fmt: skip
    for dataset, group in runs.groupby("dataset", sort=False):
        counts = [int(c) for c in str(group["reader_counts"].iloc[0]).split("/")]
        top = max(counts)
        lines += ["", f"### {dataset}", "",
                  "| variant | plain rows/s | " + " | ".join(
                      f"{n} readers rows/s (slowdown)" for n in counts) +
                  f" | lag p50/p99/max s ({top} readers) | query p50/p99 ms ingesting | "
                  f"idle | errors | behind |",
                  "|---|---:|" + "---:|" * len(counts) + "---|---:|---:|---:|---:|"]  # fmt: skip
        for _, r in group.sort_values("rows_per_s_median", ascending=False).iterrows():
            rates = " | ".join(
                f"{_fmt(r.get(f'rows_per_s_median_r{n}'))} ({_fmt(r.get(f'slowdown_r{n}'), 2)}×)"
                for n in counts
            )
            lag = "/".join(_fmt(r.get(f"lag_s_{s}_r{top}"), 2) for s in ("p50", "p99", "max"))
            busy = "/".join(_fmt(r.get(f"query_{s}_ms_r{top}"), 1) for s in ("p50", "p99"))
            idle = "/".join(_fmt(r.get(f"query_{s}_ms_idle_r{top}"), 1) for s in ("p50", "p99"))
            lines.append(
                f"| `{r['variant']}` | {_fmt(r['rows_per_s_median'])} | {rates} | "
                f"{lag} ({r.get('lag_basis')}) | {busy} | {idle} | "
                f"{_fmt(r.get(f'reader_errors_r{top}'))} | "
                f"{_fmt(r.get(f'readers_behind_r{top}'))} |"
            )
    return lines
