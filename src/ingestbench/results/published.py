"""QuestDB's published pandas benchmark (py-tsbs-benchmark) next to this workflow's figures.

The published figures are data, kept here and nowhere else. They come from the README of
github.com/questdb/py-tsbs-benchmark: an AMD 5950x (16 cores, 64 GB), QuestDB 7.0.1 with WAL tables
(6 shared and 6 ILP I/O workers), the questdb client 1.x, ILP over TCP with text doubles (what
protocol version 1 sends), TSBS cpu rows with 4,000 hosts generated in memory. "Serialize" is a
pass into an in-memory buffer without network; "send" is serialization, sending and the server's
insert. The loop ran 1M rows, dataframe() 10M; their "28x" and "92x" are send MiB/s ratios.

`published_comparison(summary)` pairs each published case with this workflow's variant of the same
shape (configs/published.yaml runs all three) and writes a small markdown table with the ratios.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ingestbench.storage.files import write_text_atomic

MIB = 2**20
SOURCE = "https://github.com/questdb/py-tsbs-benchmark"
MACHINE = "AMD 5950x (16 cores), QuestDB 7.0.1 (WAL), questdb client 1.x, ILP/TCP text doubles"


@dataclass(frozen=True)
class SeedCase:
    label: str
    variant: str  # this workflow's variant of the same shape
    rows: int  # rows the published run ingested
    send_rows_per_s: float
    serialize_rows_per_s: float
    send_mib_per_s: float
    serialize_mib_per_s: float


PUBLISHED = (
    SeedCase("df.iterrows() + sender.row()", "pandas-iterrows-parquet-tcp",
             1_000_000, 0.02e6, 0.02e6, 9.13, 9.25),
    SeedCase("sender.dataframe(), 1 thread", "pandas-dataframe-parquet-tcp",
             10_000_000, 0.56e6, 1.17e6, 261.04, 543.04),
    SeedCase("sender.dataframe(), 8 threads", "pandas-threads-parquet-tcp-w8",
             10_000_000, 1.81e6, 5.66e6, 843.18, 2635.69),
)  # fmt: skip
BASELINE = PUBLISHED[0]  # the speed-ups divide by the iterrows loop


@dataclass(frozen=True)
class Ours:
    """One variant's medians from the summary (NaN when the variant was not run)."""

    rows: float = math.nan
    send_rows_per_s: float = math.nan
    serialize_rows_per_s: float = math.nan
    send_mib_per_s: float = math.nan
    serialize_mib_per_s: float = math.nan
    protocol: float = math.nan


def _ours(summary: pd.DataFrame, variant: str) -> Ours:
    found = summary[summary["variant"] == variant]
    if found.empty:
        return Ours()
    r = found.sort_values("dataset_rows", ascending=False).iloc[0]  # the biggest dataset
    mib = float(r["ilp_bytes"]) / MIB if pd.notna(r["ilp_bytes"]) else math.nan
    serialize_s = float(r["serialize_s_median"])
    return Ours(
        rows=float(r["rows"]),
        send_rows_per_s=float(r["send_rows_per_s_median"]),
        serialize_rows_per_s=float(r["rows"]) / serialize_s if serialize_s > 0 else math.nan,
        send_mib_per_s=float(r["send_mib_per_s_median"]),
        serialize_mib_per_s=mib / serialize_s if serialize_s > 0 else math.nan,
        protocol=float(r["ilp_protocol_version"]),
    )


def _m(rate: float) -> str:
    if math.isnan(rate):
        return "not run"
    return f"{rate / 1e6:.2f}M" if rate >= 1e5 else f"{rate / 1e3:.1f}k"


def _x(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:.2f}×" if value < 10 else f"{value:.1f}×"


def _div(a: float, b: float) -> float:
    return a / b if b and not (math.isnan(a) or math.isnan(b)) else math.nan


def published_comparison(summary: pd.DataFrame) -> str:
    """The markdown table: published figures, ours, ours/published; speed-ups over the loop."""
    ours = {case.variant: _ours(summary, case.variant) for case in PUBLISHED}
    base = ours[BASELINE.variant]
    lines = [
        "# QuestDB's published pandas benchmark next to this run",
        "",
        f"Published: {SOURCE} ({MACHINE}). Ours: the variants of the same shape in "
        "`results/summary.csv` (medians; send = the `send` phase, serialize = the separate "
        "serialize pass). Rates in rows/s; ours/published < 1 means slower here.",
        "",
        "| case | our variant | rows (published / ours) | send: published | ours | ours/pub. "
        "| serialize: published | ours | ours/pub. |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for case in PUBLISHED:
        o = ours[case.variant]
        rows = "–" if math.isnan(o.rows) else f"{o.rows:,.0f}"
        lines.append(
            f"| {case.label} | `{case.variant}` | {case.rows:,} / {rows} | "
            f"{_m(case.send_rows_per_s)} | {_m(o.send_rows_per_s)} | "
            f"{_x(_div(o.send_rows_per_s, case.send_rows_per_s))} | "
            f"{_m(case.serialize_rows_per_s)} | {_m(o.serialize_rows_per_s)} | "
            f"{_x(_div(o.serialize_rows_per_s, case.serialize_rows_per_s))} |"
        )
    lines += [
        "",
        "Speed-up over the iterrows loop in MiB/s (as published; ILP bytes per row are the same "
        "on both sides of each ratio):",
        "",
        "| case | send: published | ours | serialize: published | ours |",
        "|---|---:|---:|---:|---:|",
    ]
    for case in PUBLISHED[1:]:
        o = ours[case.variant]
        lines.append(
            f"| {case.label} | {_x(case.send_mib_per_s / BASELINE.send_mib_per_s)} | "
            f"{_x(_div(o.send_mib_per_s, base.send_mib_per_s))} | "
            f"{_x(case.serialize_mib_per_s / BASELINE.serialize_mib_per_s)} | "
            f"{_x(_div(o.serialize_mib_per_s, base.serialize_mib_per_s))} |"
        )
    protocols = {int(o.protocol) for o in ours.values() if not math.isnan(o.protocol)}
    if protocols - {1}:
        lines += ["", f"Ours used ILP protocol {sorted(protocols)}: MiB/s differ from text "
                  "doubles (version 1, as published); compare the rows/s."]  # fmt: skip
    return "\n".join(lines) + "\n"


def write_published_comparison(summary_csv, out_md) -> str:
    from ingestbench.results.summary import read_summary

    text = published_comparison(read_summary(summary_csv))
    write_text_atomic(out_md, text)
    return text
