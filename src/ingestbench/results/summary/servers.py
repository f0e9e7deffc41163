"""summary.md's servers side by side (a config of several servers, server.versions): versions ×
paths and settings × paths, each cell a path's rows/s on that server as a ratio against the
newest version's default server, with the spread (min–max of the repeats over the same median);
and which settings beat the defaults beyond the noise.

A setting is named only where its whole range of repeats lies above the default's (the ranges do
not overlap, as `ingestbench compare` judges): a median ahead within the noise is no reason to
change a server's settings.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ingestbench.results.summary.rows import STATUS, UNSUPPORTED

HEADING = "## Servers side by side"


def _version_key(label: str) -> tuple[int, ...]:
    return tuple(int(p) for p in label.split("-")[0].split("."))


def is_default(label: str) -> bool:
    """A version's default server (`9.3.4`), not one of its settings sets (`9.3.4-name`)."""
    return "-" not in label


def baseline(labels: list[str]) -> str | None:
    """The newest version's default server: what every ratio is against."""
    defaults = [s for s in labels if is_default(s)]
    return max(defaults, key=_version_key) if defaults else None


def _range(row: pd.Series) -> tuple[float, ...]:
    return tuple(float(row[f"rows_per_s_{s}"]) for s in ("median", "min", "max"))


def _cell(row: pd.Series | None, base: float) -> str:
    if row is None:
        return "–"
    if row.get(STATUS) == UNSUPPORTED:
        return "unsupported"
    median, low, high = _range(row)
    if not base or any(math.isnan(v) for v in (median, low, high, base)):
        return "n/a"
    return f"{median / base:.2f}× ({low / base:.2f}–{high / base:.2f})"


def _table(runs: dict[tuple[str, str], pd.Series], variants: list[str], servers: list[str],
           base: str) -> list[str]:  # fmt: skip
    lines = ["| path | " + " | ".join(f"`{s}`" for s in servers) + " |",
             "|---|" + "---:|" * len(servers)]  # fmt: skip
    for variant in variants:
        ref = runs.get((base, variant))
        base_rate = float(ref["rows_per_s_median"]) if ref is not None and (
            ref.get(STATUS) != UNSUPPORTED) else math.nan  # fmt: skip
        cells = [_cell(runs.get((s, variant)), base_rate) for s in servers]
        lines.append(f"| `{variant}` | " + " | ".join(cells) + " |")
    return lines


def beats(setting: pd.Series | None, default: pd.Series | None) -> bool:
    """Whether `setting`'s repeats all beat the default's (the min–max ranges do not overlap)."""
    if setting is None or default is None or UNSUPPORTED in (setting.get(STATUS),
                                                             default.get(STATUS)):  # fmt: skip
        return False
    return float(setting["rows_per_s_min"]) > float(default["rows_per_s_max"])


def _median(row: pd.Series) -> float:
    return float(row["rows_per_s_median"])


def recommendation(runs: dict[tuple[str, str], pd.Series], variants: list[str],
                   settings: list[str]) -> str:  # fmt: skip
    """The settings that beat their version's defaults beyond the noise, path by path."""
    found = []
    for label in settings:
        default = label.split("-")[0]
        won = [f"`{v}` ({_median(runs[(label, v)]) / _median(runs[(default, v)]):.2f}×)"
               for v in variants
               if beats(runs.get((label, v)), runs.get((default, v)))]  # fmt: skip
        if won:
            found.append(f"`{label}` beat {default}'s defaults beyond the noise on "
                         f"{', '.join(won)}")  # fmt: skip
    if not found:
        return ("No settings set beat its version's defaults beyond the noise (the ranges of the "
                "repeats overlap): keep the defaults.")  # fmt: skip
    return "; ".join(found) + ". Elsewhere the defaults are as fast within the noise."


def side_by_side(df: pd.DataFrame) -> str | None:
    """The section, or None with fewer than two servers (a config of one version)."""
    if "server" not in df.columns:
        return None
    df = df[df["server"].notna() & df["variant"].notna()]
    labels = sorted(df["server"].unique(), key=lambda s: (_version_key(s), s))
    base = baseline(labels)
    if len(labels) < 2 or base is None:
        return None
    versions = [s for s in labels if is_default(s)]
    settings = [s for s in labels if not is_default(s)]
    lines = [
        HEADING,
        "",
        f"Each path's median rows/s on each server as a ratio against `{base}` (the newest "
        "version's defaults), with the min–max of its repeats over the same median; "
        "`unsupported`: the version lacks what the path needs (summary.csv's `reason`).",
    ]
    several = df["dataset"].nunique() > 1
    for dataset, group in df.groupby("dataset", sort=False):
        runs: dict[tuple[str, str], Any] = {(r["server"], r["variant"]): r
                                             for _, r in group.iterrows()}  # fmt: skip
        variants = list(dict.fromkeys(group["variant"]))
        if several:
            lines += ["", f"### {dataset}"]
        if len(versions) > 1:
            lines += ["", "Versions × paths:", "", *_table(runs, variants, versions, base)]
        if settings:
            tuned = [base] + [s for s in settings if s.split("-")[0] == base.split("-")[0]]
            others = [s for s in settings if s not in tuned]
            lines += ["", "Settings × paths:", "", *_table(runs, variants, tuned + others, base)]
            lines += ["", recommendation(runs, variants, settings)]
    return "\n".join(lines) + "\n"
