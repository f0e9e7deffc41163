"""The paced chart (the registry's `paced`, source "paced"): the worst p99 of each rate's repeats
against the rows per second that became visible, per path and flush mode, from paced.csv, which
its rule (rules/paced.smk) passes in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from ingestbench.charts.style import WIDTH_IN, human, no_data, suptitle

#: A paced path's flush mode as its line style (its colour is its path).
FLUSH_STYLES = {"arrival": "-", "rows": "--", "interval": ":"}
#: The chart's title, and what it says when no step has a p99.
WHAT = (
    "Paced ingestion: worst p99 of the repeats against visible rows/s (log–log; line "
    "style: flush mode)"
)
NO_STEP = "no paced step ran (the config has no paced section)."


def paced_steps(paced_csv: Path | None) -> pd.DataFrame:
    """One point per path, flush mode and offered rate of paced.csv: its repeats' worst p99,
    their median visible rows/s, whether every repeat passed; none without the file."""
    if paced_csv is None or not Path(paced_csv).is_file():
        return pd.DataFrame()
    steps = pd.read_csv(paced_csv)
    steps = steps[(steps["kind"] == "paced") & steps["latency_p99_s"].notna()].copy()
    if steps.empty:
        return steps
    steps["pass"] = steps["status"] == "pass"
    keys = ["dataset", "variant", "path", "flush", "offered_rows_per_s"]
    return steps.groupby(keys, as_index=False, sort=True).agg(
        latency_p99_s=("latency_p99_s", "max"), visible_rows_per_s=("visible_rows_per_s", "median"),
        passed=("pass", "all"), latency_bound_s=("latency_bound_s", "first"),
        resolution_s=("resolution_s", "max"))  # fmt: skip


def draw_paced(paced_csv: Path | None, df: pd.DataFrame, env: dict[str, Any] | None) -> Figure:
    """Paced ingestion: p99 latency against offered rate, one line per path and flush mode
    (colour: path, line style: flush mode), both axes logarithmic, the latency bound and the
    sampler's resolution drawn; from paced.csv, its rule's input, titled as the summary `df`."""
    steps, what = paced_steps(paced_csv), WHAT
    if steps.empty:
        return no_data(what, NO_STEP, df, env)
    datasets = list(dict.fromkeys(steps["dataset"]))
    fig, axes = plt.subplots(len(datasets), 1, figsize=(WIDTH_IN, 4.8 * len(datasets)),
                             squeeze=False)  # fmt: skip
    for ax, dataset in zip(axes[:, 0], datasets, strict=True):
        data = steps[steps["dataset"] == dataset]
        paths = sorted(data["path"].unique())
        colors = dict(zip(paths, plt.get_cmap("tab10").colors, strict=False))
        for _variant, line in data.groupby("variant", sort=True):
            line = line.sort_values("offered_rows_per_s")
            x = line["visible_rows_per_s"]
            path, flush = line["path"].iloc[0], line["flush"].iloc[0]
            style = {"color": colors.get(path), "linestyle": FLUSH_STYLES.get(flush, "-")}
            drawn = ax.plot(x, line["latency_p99_s"], marker="o",
                            markersize=4, linewidth=1.4, label=f"{path} · {flush}",
                            **style)[0]  # fmt: skip
            failed = line[~line["passed"]]
            ax.scatter(failed["visible_rows_per_s"], failed["latency_p99_s"], marker="x", s=60,
                       color=drawn.get_color(), zorder=3)  # fmt: skip
        bound = float(data["latency_bound_s"].iloc[0])
        resolution = float(data["resolution_s"].max())  # the largest gap the sampler left
        ax.set_xscale("log")
        ax.set_yscale("log")
        low = min(resolution / 2, float(data["latency_p99_s"].min()) / 1.5)
        high = max(bound * 2, float(data["latency_p99_s"].max()) * 1.5)
        ax.set_ylim(low, high)
        at_left = ax.get_yaxis_transform()  # x in axes fractions, y in seconds
        ax.axhline(bound, color="#C44E52", linestyle="--", linewidth=1.2)
        ax.text(0.01, bound, f"bound {bound:g} s", transform=at_left, va="bottom",
                color="#C44E52", fontsize=8)  # fmt: skip
        ax.axhspan(low, resolution, color="0.92", zorder=0)
        ax.text(0.01, resolution, f"below the observed resolution ({resolution:.2g} s)",
                transform=at_left,
                va="top", color="0.4", fontsize=8)  # fmt: skip
        ax.xaxis.set_major_formatter(FuncFormatter(human))
        ax.set_xlabel("rows visible per second in the window")
        ax.set_ylabel("p99 latency, due to visible (s)")
        ax.set_title(f"{dataset} (x: a repeat did not pass)", loc="left")
        ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    suptitle(fig, what, df, env)
    fig.tight_layout()
    return fig
