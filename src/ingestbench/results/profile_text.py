"""A dataset's profile (results.profile) as text, and the recommendation drawn from a run.

`recommendation` draws one line from the measured run: what sorting bought where a sorted twin
ran, else whether the server's import beats every client path, else the fastest path.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ingestbench import catalogue
from ingestbench.results.profile import FORMATS
from ingestbench.storage.files import load_json

FORMAT_NAMES = {"parquet": "Parquet", "csv": "CSV", "ilp": "ILP"}
#: A late share from which the profile says the out-of-order merge is at work.
LATE_NOTABLE = 0.01
#: Ratios closer to 1 than this are not worth a recommendation of their own.
WORTH = 1.1
#: The methods the recommendation compares: the wire ceiling (pre-made ILP text) is no path.
NOT_A_PATH = catalogue.names(family="file")
SERVER_METHODS = catalogue.names(family="server")


def load_profiles(paths: Iterable[Path]) -> dict[str, dict[str, Any]]:
    """{dataset: profile} from manifests (own data) and expected files (TSBS); a file without a
    profile (written before there was one) is left out."""
    out: dict[str, dict[str, Any]] = {}
    for path in paths:
        doc = load_json(Path(path), "dataset manifest or expected aggregates")
        name = doc.get("name") or doc.get("dataset")
        if doc.get("profile") and name:
            out[name] = doc["profile"]
    return out


def duration(seconds: float) -> str:
    """A lag as a reader counts it: 45 s, 12 min, 3.5 h, 2.0 days."""
    if seconds < 120:
        return f"{seconds:,.3g} s"
    if seconds < 7200:
        return f"{seconds / 60:,.0f} min"
    if seconds < 2 * 86_400:
        return f"{seconds / 3600:,.1f} h"
    return f"{seconds / 86_400:,.1f} days"


def _sizes_text(profile: dict[str, Any]) -> str:
    parts = []
    for fmt in FORMATS:
        s = profile["bytes_per_row"].get(fmt) or {}
        if s.get("bytes_per_row") is not None:
            parts.append(f"{FORMAT_NAMES[fmt]} {s['bytes_per_row']:,.1f}"
                         + (" (estimate)" if s.get("estimate") else ""))  # fmt: skip
    return ", ".join(parts) or "not known"


def table_text(t: dict[str, Any]) -> str:
    """One table's profile as a sentence."""
    types = ", ".join(f"{n} {k}" for k, n in sorted(t["types"].items(), key=lambda kv: -kv[1]))
    distinct = ", ".join(f"`{c}` {n:,}" for c, n in t["distinct"].items()) or "none"
    late, lag = t["late_share"], duration(t["max_lag_s"])
    order = (
        f"{late:.1%} of rows arrive behind the running maximum timestamp (largest lag "
        f"{duration(t['max_lag_s'])}): QuestDB merges each into a partition it has written"
        if late >= LATE_NOTABLE
        else "in time order"
        if not t["late_rows"]
        else f"{t['late_rows']:,} rows ({late:.2%}) arrive late, by up to {lag}"
    )
    return (
        f"columns {types}; distinct values {distinct}; {order}; {t['partitions']:,} "
        f"{t['partition_by']} partition(s) touched"
    )


def profile_lines(profile: dict[str, Any], recommendation: str | None = None) -> list[str]:
    """The profile as markdown lines (summary.md)."""
    lines = [f"**Profile**: {profile['rows']:,} rows; bytes per row: {_sizes_text(profile)}."]
    tables = profile["tables"]
    for t in tables:
        text = table_text(t)
        head = f"Table `{t['table']}`: {text}" if len(tables) > 1 else text[0].upper() + text[1:]
        lines.append(f"{head}.")
    derived = profile.get("derived")
    if derived:
        lines.append(
            f"Derived: `{derived['from']}` sorted by `{derived['by']}` by DuckDB in "
            f"{derived['sort_s']:,.2f} s (not in any rate below; `{derived['path']}`)."
        )
    out = [" ".join(lines)]
    if recommendation:
        out += ["", f"**Recommendation**: {recommendation}."]
    return out


def profile_text(profile: dict[str, Any], recommendation: str | None = None) -> str:
    """The profile and its recommendation as plain sentences (the results page)."""
    text = " ".join(line for line in profile_lines(profile, recommendation) if line)
    return text.replace("**", "").replace("`", "")


def _best(
    df: pd.DataFrame, dataset: str, methods: Iterable[str] | None = None, variant: str | None = None
) -> pd.Series | None:
    """The dataset's fastest validated variant (of `methods`, or `variant` itself), if any."""
    rows = df[(df["dataset"] == dataset) & ~df["method"].isin(NOT_A_PATH)]
    if variant is not None:
        rows = rows[rows["variant"] == variant]
    if "validated" in rows:
        rows = rows[rows["validated"].fillna(False).astype(bool)]
    if methods is not None:
        rows = rows[rows["method"].isin(list(methods))]
    rows = rows[rows["rows_per_s_median"].notna()]
    return None if rows.empty else rows.loc[rows["rows_per_s_median"].idxmax()]


def sorted_twins(profiles: Mapping[str, dict[str, Any]]) -> dict[str, str]:
    """{dataset: its sorted copy} for the copies in `profiles`."""
    return {p["derived"]["from"]: name for name, p in profiles.items() if p.get("derived")}


def recommendation(
    dataset: str, df: pd.DataFrame, profiles: Mapping[str, dict[str, Any]]
) -> str | None:
    """The one line a reader acts on, from the measured run (`df`, the summary's measured rows):
    1. where the dataset and its sorted copy both ran, what sorting bought (or cost);
    2. else, where a server import beats every client path by WORTH or more, that import;
    3. else the fastest validated path, and where many rows arrive late, that sorting may pay."""
    best = _best(df, dataset)
    if best is None:
        return None
    profile = profiles.get(dataset) or {}
    twin = sorted_twins(profiles).get(dataset)
    source = (profile.get("derived") or {}).get("from")
    if twin or source:
        unsorted, ordered = (dataset, twin) if twin else (source, dataset)
        a, b = _best(df, unsorted), _best(df, ordered)
        if a is not None and b is not None:
            ratio = b["rows_per_s_median"] / a["rows_per_s_median"]
            sort_s = (profiles.get(ordered) or {}).get("derived", {}).get("sort_s")
            cost = f"; the sort took {sort_s:,.1f} s, once" if sort_s is not None else ""
            same = _best(df, unsorted, methods=None, variant=b["variant"])
            path = ("" if same is None or same["variant"] == a["variant"] else
                    f"; `{b['variant']}` itself "
                    f"{b['rows_per_s_median'] / same['rows_per_s_median']:.1f}×")  # fmt: skip
            if ratio >= WORTH:
                return (f"sort by the timestamp first: {ratio:.1f}× faster here (`{b['variant']}` "
                        f"sorted against `{a['variant']}` unsorted{path}{cost})")  # fmt: skip
            return (f"sorting buys nothing measurable here ({ratio:.2f}× the unsorted rate"
                    f"{cost}); use `{a['variant']}` on the file as it is")  # fmt: skip
    client = _best(df, dataset, set(df["method"]) - set(SERVER_METHODS))
    if best["method"] in SERVER_METHODS and client is not None:
        ratio = best["rows_per_s_median"] / client["rows_per_s_median"]
        if ratio >= WORTH:
            return (f"use `{best['method']}`: {ratio:.1f}× the best client path "
                    f"(`{client['variant']}`)")  # fmt: skip
    line = f"use `{best['variant']}`, the fastest validated path here"
    late = max((t["late_share"] for t in profile.get("tables", [])), default=0.0)
    if late >= LATE_NOTABLE * 10:
        line += (f"; {late:.0%} of rows arrive late, so sorting by the timestamp may pay "
                 "(for your own data, `sorted: true` measures it)")  # fmt: skip
    return line


def recommendations(
    df: pd.DataFrame, profiles: Mapping[str, dict[str, Any]]
) -> dict[str, str | None]:
    return {d: recommendation(d, df, profiles) for d in df["dataset"].unique()}


PROFILE_COLUMNS = (
    "dataset", "table", "rows", "columns", *(f"{fmt}_bytes_per_row" for fmt in FORMATS),
    "estimated", "distinct", "late_share", "max_lag_s", "partitions", "sort_s", "recommendation",
)  # fmt: skip


def profile_rows(
    profiles: Mapping[str, dict[str, Any]], advice: Mapping[str, str | None]
) -> list[dict[str, Any]]:
    """One flat row per dataset and table (profiles.csv, a table in the report)."""
    rows = []
    for name, p in profiles.items():
        for t in p["tables"]:
            per_format = {fmt: p["bytes_per_row"].get(fmt) or {} for fmt in FORMATS}
            sizes = {f"{fmt}_bytes_per_row": per_format[fmt].get("bytes_per_row")
                     for fmt in FORMATS}  # fmt: skip
            estimated = [fmt for fmt in FORMATS if per_format[fmt].get("estimate")]
            rows.append({
                "dataset": name, "table": t["table"], "rows": t["rows"],
                "columns": "; ".join(f"{n} {k}" for k, n in t["types"].items()),
                **sizes, "estimated": ", ".join(estimated),
                "distinct": "; ".join(f"{c} {n}" for c, n in t["distinct"].items()),
                "late_share": round(t["late_share"], 4), "max_lag_s": t["max_lag_s"],
                "partitions": f"{t['partitions']} {t['partition_by']}",
                "sort_s": (p.get("derived") or {}).get("sort_s", math.nan),
                "recommendation": advice.get(name) or "",
            })  # fmt: skip
    return rows
