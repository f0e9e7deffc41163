"""The paced rows of summary.csv and the paced section of summary.md: each path and flush
mode's highest sustained rate, and one recommendation per dataset."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from ingestbench.catalogue import CATALOGUE
from ingestbench.paced.table import read_paced_table

#: summary.csv's `status` of a paced row (not a backfill measurement: charts leave it out).
PACED_STATUS = "paced"


def sustained_rate(paced_steps: pd.DataFrame) -> tuple[float, pd.DataFrame]:
    """The highest rate below the first that did not pass in every repeat (NaN: none), and its
    steps. A rate passes the whole way up only when it and every lower rate passed each time;
    a missing repeat (stopped, skipped) or a step not measured is not a pass."""
    repeats = paced_steps["repeat"].dropna().nunique()
    best, steps = math.nan, paced_steps.iloc[0:0]
    for rate, at in paced_steps.groupby("offered_rows_per_s", sort=True):
        passed = at[at["status"] == "pass"]
        if len(passed) < max(1, repeats):
            break
        best, steps = float(rate), at
    return best, steps


def highest_sustained(df: pd.DataFrame) -> pd.DataFrame:
    """One row per server, dataset, path and flush mode: the unpaced maximum (rows visible per
    second in steady state), the highest rate sustained the whole way up, the worst p99 of its
    repeats and their spread (NaN: no rate was). Each server's steps are its own: a rate held
    on one version says nothing of another's."""
    out = []
    df = df.assign(server=df["server"].fillna("")) if "server" in df else df.assign(server="")
    for (server, dataset, variant), group in df.groupby(["server", "dataset", "variant"],
                                                         sort=False):  # fmt: skip
        first = group.iloc[0]
        unpaced = group[group["kind"] == "unpaced"]
        best, steps = sustained_rate(group[group["kind"] == "paced"])
        p99 = steps["latency_p99_s"]
        out.append({
            "dataset": dataset, "variant": variant, "status": PACED_STATUS, "server": server,
            "library": first["library"], "method": first["method"],
            "transport": first["transport"], "flush": first["flush"], "path": first["path"],
            "paced_unpaced_rows_per_s": unpaced["visible_rows_per_s"].max(),
            "paced_sustained_rows_per_s": best,
            "paced_repeats": int(steps["repeat"].nunique()) if len(steps) else 0,
            "paced_p99_s": p99.max() if len(steps) else math.nan,
            "paced_p99_spread_s": (p99.max() - p99.min()) if len(steps) else math.nan,
            "paced_visible_rows_per_s": steps["visible_rows_per_s"].median()
            if len(steps) else math.nan,
            "paced_latency_bound_s": first["latency_bound_s"],
            "paced_producers": int(first["producers"]) if pd.notna(first["producers"]) else 1,
            # the producers' p99 furthest apart in any of its sustained steps (one: NaN)
            "paced_producer_p99_spread_s": steps["producer_p99_spread_s"].max()
            if len(steps) and "producer_p99_spread_s" in steps else math.nan,
            "paced_resolution_s": steps["resolution_s"].max() if len(steps)
            else group["resolution_s"].max(),
            "validated": bool(group["validated"].dropna().all()),
        })  # fmt: skip
    return pd.DataFrame(out)


def latency_text(seconds: float, resolution_s: float) -> str:
    """A latency as read: below the sampler's observed resolution it is only known to be below
    it."""
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "–"
    if seconds < resolution_s:
        # a bound: rounded up to the hundredth, so that it stays one
        return f"< {math.ceil(round(resolution_s * 100, 6)) / 100:g} s"
    return f"{seconds:.2f} s"


def spread_text(seconds: float) -> str:
    return "" if seconds is None or math.isnan(seconds) else f" (± {seconds / 2:.2f} s)"


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
             "was due to when a query reads it, over each step's measured window in steady "
             "state (docs/methodology.md#paced-ingestion). A step passes when it keeps up, its "
             "latency does not rise, its p99 is under the bound and the sampler's gaps let it "
             "be measured; a rate is sustained when it and every lower rate passed in every "
             "repeat. Every step's figures: paced.csv.", ""]  # fmt: skip
    best = highest_sustained(df)
    several = best["server"].nunique() > 1
    for (server, dataset), group in best.groupby(["server", "dataset"], sort=False):
        bound = group["paced_latency_bound_s"].iloc[0]
        where = dataset + (f" on QuestDB {server}" if several else "")
        many = bool((group["paced_producers"] > 1).any())
        lines += [f"### {where}", "",
                  f"| path | flush | unpaced rows/s (visible) | highest sustained rows/s "
                  f"(p99 ≤ {bound:g} s) | worst p99 there (spread) | repeats | validated |"
                  + (" producers | producers' p99 apart |" if many else ""),
                  "|---|---|---:|---:|---:|---:|---|" + ("---:|---:|" if many else "")]  # fmt: skip
        for _, r in group.iterrows():
            rate = r["paced_sustained_rows_per_s"]
            apart = r["paced_producer_p99_spread_s"]
            lines.append(
                f"| {r['path']} | {r['flush']} | {r['paced_unpaced_rows_per_s']:,.0f} | "
                f"{'none of its rates' if math.isnan(rate) else f'{rate:,.0f}'} | "
                f"{latency_text(r['paced_p99_s'], r['paced_resolution_s'])}"
                f"{spread_text(r['paced_p99_spread_s'])} | {r['paced_repeats']} | "
                f"{'yes' if r['validated'] else 'NO'} |"
                + (f" {r['paced_producers']} | "
                   f"{'–' if math.isnan(apart) else f'{apart:.2f} s'} |" if many else "")
            )  # fmt: skip
        lines += ["", f"**Recommendation ({where}):** {recommendation(group)}", ""]
    unpaced = [f"{m.name} ({m.unpaced_reason})" for m in CATALOGUE if m.unpaced_reason]
    lines += [f"Not paced (unsupported): {'; '.join(unpaced)}.", ""]
    return "\n".join(lines)


def summary_part(paced_csv: list[str | Path]) -> tuple[pd.DataFrame, str]:
    """The paced rows of summary.csv and the paced section of summary.md, from paced.csv (the
    summarize rule's one paced input), for results.summary.write_summary."""
    df = read_paced_table(Path(paced_csv[0]))
    return highest_sustained(df), markdown(df)


#: The columns of a path's row the archive keeps (the page's stream section).
ARCHIVED = ("server", "dataset", "variant", "path", "flush", "paced_unpaced_rows_per_s",
            "paced_sustained_rows_per_s", "paced_p99_s", "paced_p99_spread_s", "paced_repeats",
            "paced_latency_bound_s", "paced_resolution_s", "validated")  # fmt: skip


#: The columns of a paced step the archive keeps (the page's chart and step table).
STEP_COLUMNS = ("server", "dataset", "path", "flush", "repeat", "offered_rows_per_s",
                "visible_rows_per_s", "latency_p50_s", "latency_p99_s", "resolution_s",
                "status")  # fmt: skip


def _plain(record: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: (None if isinstance(record[k], float) and math.isnan(record[k]) else record[k])
            for k in keys}  # fmt: skip


def archive_part(paced_csv: list[str | Path]) -> dict[str, Any]:
    """The archive's paced part: each path's row and each server and dataset's recommendation,
    and every paced step (NaN as null), from paced.csv (the summary's one paced input)."""
    df = read_paced_table(Path(paced_csv[0]))
    best = highest_sustained(df)
    rows = [_plain(r, ARCHIVED) for r in best.to_dict("records")]
    paced = df[df["kind"] == "paced"].assign(server=df["server"].fillna(""))
    steps = [_plain(r, STEP_COLUMNS) for r in paced.to_dict("records")]
    advice = [
        {"server": server, "dataset": dataset, "text": recommendation(group)}
        for (server, dataset), group in best.groupby(["server", "dataset"], sort=False)
    ]
    return {"paths": rows, "recommendations": advice, "steps": steps}
