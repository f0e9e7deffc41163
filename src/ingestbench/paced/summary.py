"""The paced rows of summary.csv and the paced section of summary.md: each path and flush
mode's highest sustained rate, and one recommendation per dataset."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from ingestbench.catalogue import CATALOGUE
from ingestbench.paced.table import read_paced_table

#: summary.csv's `status` of a paced row (not a backfill measurement: charts leave it out).
PACED_STATUS = "paced"


def highest_sustained(df: pd.DataFrame) -> pd.DataFrame:
    """One row per dataset, path and flush mode: the unpaced maximum, the highest offered rate
    sustained with p99 under the bound, and that step's p99 (NaN: no rate was)."""
    out = []
    for (dataset, variant), group in df.groupby(["dataset", "variant"], sort=False):
        first = group.iloc[0]
        unpaced = group[group["kind"] == "unpaced"]
        good = group[(group["kind"] == "paced") & (group["within_bound"] == True)]  # noqa: E712
        best = good.loc[good["offered_rows_per_s"].idxmax()] if len(good) else None
        out.append({
            "dataset": dataset, "variant": variant, "status": PACED_STATUS,
            "library": first["library"], "method": first["method"],
            "transport": first["transport"], "flush": first["flush"], "path": first["path"],
            "paced_unpaced_rows_per_s": unpaced["achieved_rows_per_s"].max(),
            "paced_sustained_rows_per_s": math.nan if best is None else best["offered_rows_per_s"],
            "paced_p99_s": math.nan if best is None else best["latency_p99_s"],
            "paced_latency_bound_s": first["latency_bound_s"],
            "paced_resolution_s": first["resolution_s"],
            "validated": bool(group["validated"].dropna().all()),
        })  # fmt: skip
    return pd.DataFrame(out)


def latency_text(seconds: float, resolution_s: float) -> str:
    """A latency as read: below the sampler's resolution it is only known to be below it."""
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "–"
    if seconds < resolution_s:
        return f"< {resolution_s:g} s"
    return f"{seconds:.2f} s"


def recommendation(best: pd.DataFrame) -> str:
    """At your rate, use this path with this flush mode: the one sustaining the most, and
    below that rate, the one with the lowest p99 at its own highest rate."""
    ok = best.dropna(subset=["paced_sustained_rows_per_s"])
    if ok.empty:
        return "no path sustained any of its rates with its p99 under the bound."
    top = ok.loc[ok["paced_sustained_rows_per_s"].idxmax()]
    line = (f"up to {top['paced_sustained_rows_per_s']:,.0f} rows/s, use {top['path']} with "
            f"flush `{top['flush']}` (p99 "
            f"{latency_text(top['paced_p99_s'], top['paced_resolution_s'])})")  # fmt: skip
    low = ok.loc[ok["paced_p99_s"].idxmin()]
    if low["variant"] != top["variant"]:
        line += (f"; at {low['paced_sustained_rows_per_s']:,.0f} rows/s or less, "
                 f"{low['path']} with flush `{low['flush']}` reads back soonest (p99 "
                 f"{latency_text(low['paced_p99_s'], low['paced_resolution_s'])})")  # fmt: skip
    return line + "."


def markdown(df: pd.DataFrame) -> str:
    """The paced section of summary.md."""
    lines = ["", "## Paced ingestion", "",
             "Arrivals of a few rows on a fixed schedule; latency counts from when an arrival "
             "was due to when a query reads it (docs/methodology.md#paced-ingestion). "
             "Sustained: the achieved rate within 1 % of the offered one, no rising latency, "
             "p99 under the bound. Every step's figures: paced.csv.", ""]  # fmt: skip
    best = highest_sustained(df)
    for dataset, group in best.groupby("dataset", sort=False):
        bound = group["paced_latency_bound_s"].iloc[0]
        lines += [f"### {dataset}", "",
                  f"| path | flush | unpaced rows/s | highest sustained rows/s (p99 ≤ {bound:g} s) "
                  "| p99 there | validated |", "|---|---|---:|---:|---:|---|"]  # fmt: skip
        for _, r in group.iterrows():
            rate = r["paced_sustained_rows_per_s"]
            lines.append(
                f"| {r['path']} | {r['flush']} | {r['paced_unpaced_rows_per_s']:,.0f} | "
                f"{'none of its rates' if math.isnan(rate) else f'{rate:,.0f}'} | "
                f"{latency_text(r['paced_p99_s'], r['paced_resolution_s'])} | "
                f"{'yes' if r['validated'] else 'NO'} |"
            )
        lines += ["", f"**Recommendation ({dataset}):** {recommendation(group)}", ""]
    unpaced = [f"{m.name} ({m.unpaced_reason})" for m in CATALOGUE if m.unpaced_reason]
    lines += [f"Not paced (unsupported): {'; '.join(unpaced)}.", ""]
    return "\n".join(lines)


def summary_part(paced_csv: list[str | Path]) -> tuple[pd.DataFrame, str]:
    """The paced rows of summary.csv and the paced section of summary.md, from paced.csv (the
    summarize rule's one paced input), for results.summary.write_summary."""
    df = read_paced_table(Path(paced_csv[0]))
    return highest_sustained(df), markdown(df)
