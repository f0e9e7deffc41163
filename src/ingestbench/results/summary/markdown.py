"""summary.md: the machine in one sentence, then per dataset its fastest variants, the wire
ceiling, and what a reader must know (capped row loops, mixed machines, contention, failures,
methods that cannot load the data)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ingestbench.results.ceiling import wire_ceilings
from ingestbench.results.profile_text import profile_lines
from ingestbench.results.summary.readers import readers_lines
from ingestbench.results.summary.rows import MIB, TO_SQL, measured
from ingestbench.variants import CAPPED_METHODS


def dataset_heading(dataset: str, first: pd.Series) -> str:
    """`name: N rows`; for own data also its label, columns and bytes."""
    heading = f"{dataset}: {int(first['dataset_rows']):,} rows"
    label = first.get("dataset_label")
    if isinstance(label, str) and label:
        heading += (f", {int(first['dataset_columns'])} columns, "
                    f"{first['dataset_bytes'] / MIB:,.1f} MiB (your data, `{label}`)")  # fmt: skip
    return heading


def machine_line(env: dict[str, Any] | None) -> str:
    """One sentence describing the machine and software from environment.json."""
    if not env:
        return "Machine: not recorded."
    m = env.get("machine", {})
    ram = m.get("ram_bytes")
    parts = [
        f"{m.get('cores_logical')} cores ({m.get('cores_available')} available to the workflow)",
        m.get("cpu_model") or "unknown CPU",
        f"{ram / 2**30:.1f} GiB RAM" if ram else None,
        m.get("os"),
    ]
    soft = [
        f"Python {env.get('python', {}).get('version')}",
        f"QuestDB {env.get('questdb', {}).get('version')}",
        f"Java {env.get('java', {}).get('version')}",
    ]
    wf = env.get("workflow", {})
    commit = wf.get("git_commit")
    soft.append(f"commit {commit[:10]}" if commit else "no git commit")
    soft.append(f"config {wf.get('config_hash')}")
    return (
        "Machine: "
        + ", ".join(p for p in parts if p)
        + "; "
        + ", ".join(soft)
        + f"; recorded {env.get('timestamp_utc')}."
    )


def _fmt_rate(v: float, scale: float = 1.0, digits: int = 0) -> str:
    return "n/a" if pd.isna(v) else f"{v / scale:,.{digits}f}"


def _over_to_sql(group: pd.DataFrame) -> list[str]:
    """How much faster the fastest validated variant is than `to_sql` (the SQL path most users
    start from), when the dataset has one."""
    if "speedup_to_sql" not in group or group["speedup_to_sql"].isna().all():
        return []
    ok = group[group["validated"].fillna(False).astype(bool)]
    to_sql = group[group["method"] == TO_SQL]
    if ok.empty or to_sql.empty:
        return []
    best = ok.loc[ok["rows_per_s_median"].idxmax()]
    return ["", f"The fastest validated variant, `{best['variant']}`, is "
            f"{best['speedup_to_sql']:.1f}× `{to_sql.iloc[0]['variant']}` (pandas `to_sql` over "
            f"PGWire, where most users start); `speedup_to_sql` in `summary.csv` is every "
            f"variant's."]  # fmt: skip


def to_markdown(
    df: pd.DataFrame,
    env: dict[str, Any] | None = None,
    top: int = 20,
    profiles: dict[str, dict[str, Any]] | None = None,
    advice: dict[str, str | None] | None = None,
) -> str:
    """A readable table per dataset: its profile and the recommendation (where `profiles` has
    it), the `top` variants by median end-to-end rows/s; then the variants whose method cannot
    load the data, with the reason (its `status` unsupported)."""
    profiles, advice = profiles or {}, advice or {}
    df, unsupported = measured(df), df.drop(measured(df).index)
    lines = ["# Ingestion benchmark summary", "", machine_line(env), ""]
    lines.append(
        f"{_warmth_sentence(df)} Ranges are min–max. "
        "End to end = read + convert + send + visible (streamed variants: the wall time, their "
        "phases overlap). MiB are ILP bytes. Speedup is against "
        "the `rows` loop (itertuples) of the same library and format, × iterrows against the "
        "`iterrows` loop (QuestDB's published baseline). Client MiB: peak RSS of the client's "
        "processes, the server apart. Every column is in `summary.csv`."
    )
    several_servers = "server" in df.columns and df["server"].nunique() > 1
    for dataset, group in df.groupby("dataset", sort=False):
        group = group.sort_values("rows_per_s_median", ascending=False)
        first = group.iloc[0]
        heading = dataset_heading(dataset, first)
        derived = (profiles.get(dataset) or {}).get("derived")
        if derived:  # a sorted copy (`sorted: true`): what it was derived from
            heading += f", derived: `{derived['from']}` sorted by `{derived['by']}`"
        lines += ["", f"## {heading}", ""]
        if dataset in profiles:
            lines += [*profile_lines(profiles[dataset], advice.get(dataset)), ""]
        lines.append(
            "| # | variant | rows/s (min–max) | MiB/s | end to end s | cold s | "
            "speedup | × iterrows | client MiB | validated |"
        )
        lines.append("|---:|---|---:|---:|---:|---:|---:|---:|---:|:---:|")
        for i, (_, r) in enumerate(group.head(top).iterrows(), start=1):
            rate = (
                f"{_fmt_rate(r['rows_per_s_median'])} "
                f"({_fmt_rate(r['rows_per_s_min'])}–{_fmt_rate(r['rows_per_s_max'])})"
            )
            speedup, vs_iterrows = (
                "–" if pd.isna(r[col]) else f"{r[col]:.1f}×"
                for col in ("speedup_vs_rows", "speedup_iterrows")
            )
            cold = "–" if pd.isna(r["cold_end_to_end_s"]) else f"{r['cold_end_to_end_s']:.2f}"
            validated = {True: "yes", False: "**FAILED**"}.get(r["validated"], "not checked")
            name = f"`{r['variant']}`" + (" (contended)" if r.get("contended") in (True,) else "")
            if several_servers:  # the same path on each server: which one this row ran on
                name += f" on `{r['server']}`"
            lines.append(
                f"| {i} | {name} | {rate} | {_fmt_rate(r['mib_per_s_median'], 1, 1)} | "
                f"{r['end_to_end_s_median']:.2f} | {cold} | {speedup} | {vs_iterrows} | "
                f"{_fmt_rate(r.get('client_rss_bytes_max', math.nan), MIB)} | {validated} |"
            )
        if len(group) > top:
            lines.append("")
            lines.append(f"{len(group) - top} more variants in `summary.csv`.")
        ceiling = wire_ceilings(group).get(dataset)
        if ceiling:
            lines += ["", f"Wire ceiling (`{ceiling[1]}`, the ILP file sent as it is): "
                      f"{_fmt_rate(ceiling[0])} rows/s; `ceiling_fraction` in `summary.csv` "
                      "is each variant's share of it."]  # fmt: skip
        lines += _over_to_sql(group)
        loops = group["method"].isin(CAPPED_METHODS)
        capped = group[loops & (group["rows"] < group["dataset_rows"])]
        if not capped.empty:
            lines.append("")
            lines.append(
                f"The row loops and SQL methods "
                f"({', '.join(f'`{m}`' for m in sorted(set(capped['method'])))}) ingest the first "
                f"{int(capped['rows'].iloc[0]):,} rows only (`rows_cap`); compare their rates, "
                "not their times."
            )
    lines += readers_lines(df)
    if "mixed_machines" in df and df["mixed_machines"].fillna(False).astype(bool).any():
        mixed = df[df["mixed_machines"].fillna(False).astype(bool)]
        lines += [
            "",
            "**Mixed machines:** the runs of "
            + ", ".join(f"`{d}`" for d in mixed["dataset"].unique())
            + " ran on more than one kind of machine (CPU model or core count; see the `hosts` "
            "column and each run file's `host`), so their rates are not comparable with each "
            "other. Pin the ingestion jobs to one node type to compare them.",
        ]
    if "contended" in df and df["contended"].fillna(False).astype(bool).any():
        busy = df[df["contended"].fillna(False).astype(bool)]
        lines += [
            "",
            "**Contended:** "
            + ", ".join(f"`{d}/{v}`" for d, v in zip(busy["dataset"], busy["variant"], strict=True))
            + " shared the machine with another QuestDB or another job of this workflow during "
            "their repeats (each run file's `contention` says which, and the machine's load), so "
            "their rates are lower than the machine gives; rerun them alone to compare them.",
        ]
    failed = df[df["validated"] == False]  # noqa: E712 (nullable boolean)
    if not failed.empty:
        lines += [
            "",
            "**Failed validation:** "
            + ", ".join(
                f"`{d}/{v}`" for d, v in zip(failed["dataset"], failed["variant"], strict=True)
            )
            + ".",
        ]
    if not unsupported.empty:
        lines += ["", "**Unsupported on this data** (the method cannot load the table; nothing "
                  "was measured):", ""]  # fmt: skip
        lines += [f"- `{d}/{v}`: {why}" for d, v, why in
                  zip(unsupported["dataset"], unsupported["variant"], unsupported["reason"],
                      strict=True)]  # fmt: skip
    return "\n".join(lines) + "\n"


def _warmth_sentence(df: pd.DataFrame) -> str:
    """Whether the medians describe a warm server (after a warm-up) or include a cold repeat."""
    warmed = df["warmup_rows"].fillna(0) > 0
    if warmed.all():
        rows = ", ".join(f"{n:,}" for n in sorted(set(df["warmup_rows"])))
        return (
            f"Every job first warmed its fresh server up with {rows} rows (untimed, `warmup_s`); "
            "medians are over the timed repeats, all warm."
        )
    if not warmed.any():
        return (
            "No warm-up: medians are over all repeats, the first (cold) one included "
            "(cold s = its end to end)."
        )
    return (
        "Some jobs warmed their server up first and some did not (`warmup_rows`): medians "
        "include a cold first repeat where cold s is given."
    )
