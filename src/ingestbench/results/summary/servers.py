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
import statistics
from collections.abc import Iterator
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


def ratio(row: pd.Series | None, base: float) -> dict[str, Any]:
    """A path's cell on one server: its median, min and max rows/s over `base` (the baseline
    server's median), or why there is none (`missing`: no run; `unsupported`; `n/a`)."""
    if row is None:
        return {"status": "missing"}
    if row.get(STATUS) == UNSUPPORTED:
        return {"status": UNSUPPORTED}
    median, low, high = _range(row)
    if not base or any(math.isnan(v) for v in (median, low, high, base)):
        return {"status": "n/a"}
    return {"status": "ok", "ratio": median / base, "low": low / base, "high": high / base}


def _cell(row: pd.Series | None, base: float) -> str:
    r = ratio(row, base)
    if r["status"] != "ok":
        return {"missing": "–"}.get(r["status"], r["status"])
    return f"{r['ratio']:.2f}× ({r['low']:.2f}–{r['high']:.2f})"


def _base_rate(runs: dict[tuple[str, str], pd.Series], base: str, variant: str) -> float:
    ref = runs.get((base, variant))
    return float(ref["rows_per_s_median"]) if ref is not None and (
        ref.get(STATUS) != UNSUPPORTED) else math.nan  # fmt: skip


def _table(runs: dict[tuple[str, str], pd.Series], variants: list[str], servers: list[str],
           base: str) -> list[str]:  # fmt: skip
    lines = ["| path | " + " | ".join(f"`{s}`" for s in servers) + " |",
             "|---|" + "---:|" * len(servers)]  # fmt: skip
    for variant in variants:
        base_rate = _base_rate(runs, base, variant)
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


def _servers(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str], str | None]:
    """The backfill's rows that name a server, the servers (oldest first) and the baseline."""
    if "server" not in df.columns:
        return df.iloc[0:0], [], None
    df = df[df["server"].notna() & df["variant"].notna()]
    labels = sorted(df["server"].unique(), key=lambda s: (_version_key(s), s))
    return df, labels, baseline(labels)


def _by_dataset(df: pd.DataFrame) -> Iterator[tuple[str, dict[tuple[str, str], Any], list[str]]]:
    """Per dataset: its rows by (server, variant), and its variants in the summary's order."""
    for dataset, group in df.groupby("dataset", sort=False):
        runs: dict[tuple[str, str], Any] = {(r["server"], r["variant"]): r
                                             for _, r in group.iterrows()}  # fmt: skip
        yield dataset, runs, list(dict.fromkeys(group["variant"]))


def _baseline_cells(cells: list[dict[str, Any]], base: str) -> dict[str, dict[str, Any]]:
    """The baseline server's measured cells, by variant."""
    return {c["variant"]: c for c in cells if c["server"] == base and c["status"] == "ok"}


def apart(cell: dict[str, Any], base: dict[str, Any] | None) -> str | None:
    """Whether a cell's min–max range lies wholly "above" or "below" the baseline's cell (beyond
    the noise), or None (the ranges overlap, or there is no baseline)."""
    if base is None or cell["status"] != "ok":
        return None
    if cell["low"] > base["high"]:
        return "above"
    return "below" if cell["high"] < base["low"] else None


def medians(cells: list[dict[str, Any]], servers: list[str], base: str) -> list[dict[str, Any]]:
    """Per server of `servers`: the median ratio over the paths it ran, how many it ran, the
    paths it could not, and the paths where its whole min–max range lies apart from `base`'s
    (beyond the noise, as `beats` judges a setting), with their ratios (cells of one dataset)."""
    baseline = _baseline_cells(cells, base)
    out = []
    for server in servers:
        mine = [c for c in cells if c["server"] == server]
        ok = [c for c in mine if c["status"] == "ok"]
        out.append({"server": server, "paths": len(ok),
                    "ratio": statistics.median(c["ratio"] for c in ok) if ok else None,
                    "unsupported": [c["variant"] for c in mine if c["status"] == UNSUPPORTED],
                    "beyond_noise": [{"variant": c["variant"], "ratio": c["ratio"]}
                                     for c in ok if server != base
                                     and apart(c, baseline.get(c["variant"]))]})  # fmt: skip
    return out


def verdict(data: dict[str, Any], dataset: dict[str, Any]) -> str:
    """One sentence of a comparison's dataset: each other server's median ratio over its paths
    against the baseline, the paths it could not run, the paths where it differed beyond the
    noise, and the settings' recommendation."""
    parts = []
    for m in dataset["medians"]:
        if m["server"] == data["baseline"] or m["ratio"] is None:
            continue
        paths = f"{m['paths']} path{'' if m['paths'] == 1 else 's'}"
        notes = [f"{', '.join(f'`{v}`' for v in m['unsupported'])} unsupported"] if (
            m["unsupported"]) else []  # fmt: skip
        apart = [f"`{b['variant']}` {b['ratio']:.2f}×" for b in m["beyond_noise"]]
        notes.append(f"beyond the noise: {', '.join(apart)}" if apart else "all within the noise")
        parts.append(f"{m['server']} {m['ratio']:.2f}× ({paths}; {'; '.join(notes)})")
    text = (f"Against QuestDB {data['baseline']}'s defaults, the median of each server's rows/s "
            f"ratios over the paths it ran (a path is beyond the noise where the min–max ranges "
            f"of the repeats do not overlap): {'; '.join(parts)}.")  # fmt: skip
    return text + (f" {dataset['recommendation']}" if dataset.get("recommendation") else "")


def comparison(df: pd.DataFrame) -> dict[str, Any] | None:
    """The same comparison as data (the archive's `servers`, the page's section), or None with
    fewer than two servers."""
    df, labels, base = _servers(df)
    if len(labels) < 2 or base is None:
        return None
    settings = [s for s in labels if not is_default(s)]
    datasets = []
    for dataset, runs, variants in _by_dataset(df):
        cells = [{"variant": v, "server": s, **ratio(runs.get((s, v)), _base_rate(runs, base, v))}
                 for v in variants for s in labels]  # fmt: skip
        datasets.append({"dataset": dataset, "variants": variants, "cells": cells,
                         "medians": medians(cells, labels, base),
                         "recommendation": recommendation(runs, variants, settings)
                         if settings else None})  # fmt: skip
    data = {"baseline": base, "versions": [s for s in labels if is_default(s)],
            "settings": settings, "datasets": datasets}  # fmt: skip
    for entry in datasets:
        entry["verdict"] = verdict(data, entry)
    return data


def side_by_side(df: pd.DataFrame) -> str | None:
    """The section, or None with fewer than two servers (a config of one version)."""
    df, labels, base = _servers(df)
    if len(labels) < 2 or base is None:
        return None
    versions = [s for s in labels if is_default(s)]
    settings = [s for s in labels if not is_default(s)]
    lines = [
        HEADING,
        "",
        f"Each path's median rows/s on each server as a ratio against `{base}` (the newest "
        "version's defaults), with the min–max of its repeats over the same median; "
        "`unsupported`: the version lacks what the path needs (summary.csv's `reason`). The "
        "spread is that of one job's repeats, and a shared machine drifts further between jobs: "
        "before acting on a cell, archive a second run of this config (`make archive`), and the "
        "page says what held in both.",
    ]
    several = df["dataset"].nunique() > 1
    for dataset, runs, variants in _by_dataset(df):
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


def apart_cells(data: dict[str, Any] | None) -> dict[tuple[str, str, str], dict[str, Any]]:
    """Every cell of a run's comparison (`comparison`'s data) by (dataset, server, variant): its
    ratio and whether its range lies apart from the baseline's (`apart`: "above", "below" or
    None, within the noise)."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for entry in data["datasets"] if data else []:
        base = _baseline_cells(entry["cells"], data["baseline"])
        for c in entry["cells"]:
            if c["status"] == "ok" and c["server"] != data["baseline"] and c["variant"] in base:
                out[(entry["dataset"], c["server"], c["variant"])] = {
                    "ratio": c["ratio"],
                    "apart": apart(c, base[c["variant"]]),
                }
    return out


def agreement(runs: list[dict[str, Any] | None]) -> list[dict[str, Any]]:
    """Two or more runs of one config (each `comparison`'s data) side by side: each cell beyond
    the noise in any of them, its ratio in each, and whether it `held` (apart in the same
    direction in every run). The repeats of one job share the machine's state of those seconds;
    between jobs a shared machine drifts further, so a cell apart in one run alone is no
    finding."""
    cells = [apart_cells(data) for data in runs]
    keys = sorted({k for run in cells for k, c in run.items() if c["apart"]})
    out = []
    for k in keys:
        found = [run.get(k, {"ratio": None, "apart": None}) for run in cells]
        aparts = [c["apart"] for c in found]
        out.append({"dataset": k[0], "server": k[1], "variant": k[2],
                    "ratios": [c["ratio"] for c in found], "apart": aparts,
                    "held": len(set(aparts)) == 1})  # fmt: skip
    return out


def _lacking(data: dict[str, Any]) -> str:
    """Each path some servers of a run could not run: "before <the oldest that could>" where
    every older version lacked it, else the servers by name."""
    parts = []
    for entry in data["datasets"][:1]:
        for variant in entry["variants"]:
            cells = [c for c in entry["cells"] if c["variant"] == variant]
            lacked = [c["server"] for c in cells if c["status"] == UNSUPPORTED]
            ran = sorted((c["server"] for c in cells if c["status"] == "ok"), key=_version_key)
            if not lacked:
                continue
            older = ran and all(_version_key(s) < _version_key(ran[0]) for s in lacked)
            parts.append(f"`{variant}` " + (f"before {ran[0]}" if older else
                                            f"on {', '.join(lacked)}"))  # fmt: skip
    return "; ".join(parts)


def _cells(n: int) -> str:
    return f"{n} other cell was" if n == 1 else f"{n} other cells were"


def held_verdict(runs: list[dict[str, Any]]) -> str:
    """One sentence over several runs of one config (`comparison`'s data, oldest first): the
    cells beyond the noise in every run, each with its ratios, and how many were apart in some
    runs only; a settings set is recommended only where it beat the defaults in every run."""
    found = agreement(runs)
    held = [c for c in found if c["held"]]
    ratios = [" / ".join(f"{r:.2f}×" for r in c["ratios"]) for c in held]
    cells = [f"{c['server']} `{c['variant']}` {r}" for c, r in zip(held, ratios, strict=True)]
    text = (f"In {len(runs)} runs against QuestDB {runs[-1]['baseline']}'s defaults, beyond the "
            f"noise in every run: {'; '.join(cells) if cells else 'nothing'}; "
            f"{_cells(len(found) - len(held))} beyond it in some runs only.")  # fmt: skip
    if lacking := _lacking(runs[-1]):
        text += f" Could not run: {lacking}."
    if not runs[-1]["settings"]:
        return text
    won = [f"`{c['server']}` on `{c['variant']}`" for c in held
           if not is_default(c["server"]) and c["apart"][0] == "above"]  # fmt: skip
    return text + (
        f" Beat the defaults in every run: {', '.join(won)}."
        if won
        else " No settings set beat the defaults in every run: keep the defaults."
    )
