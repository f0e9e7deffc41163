"""The paced chart: p99 latency against offered rate, one line per path and flush mode, both
axes logarithmic, the latency bound and the sampler's resolution drawn. Drawn from paced.csv
beside the summary (the chart rule's summary comes after it); a run without a paced section
gets the "no data" placeholder every chart has."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from ingestbench.charts.draw import draws
from ingestbench.charts.style import WIDTH_IN, human, no_data, suptitle
from ingestbench.paced.table import read_paced_table

#: The summary frame's attribute naming paced.csv (set where the summary is read from a file).
PACED_CSV = "paced_csv"


@draws("paced")
def paced(df: pd.DataFrame, env: dict[str, Any] | None) -> Figure:
    what = "Paced ingestion: p99 latency against offered rate (log–log)"
    path = df.attrs.get(PACED_CSV)
    if path is None or not Path(path).is_file():
        return no_data(what, "the config had no paced section.", df, env)
    steps = read_paced_table(Path(path))
    steps = steps[(steps["kind"] == "paced") & steps["latency_p99_s"].notna()]
    if steps.empty:
        return no_data(what, "no paced step ran.", df, env)
    datasets = list(dict.fromkeys(steps["dataset"]))
    fig, axes = plt.subplots(len(datasets), 1, figsize=(WIDTH_IN, 4.8 * len(datasets)),
                             squeeze=False)  # fmt: skip
    for ax, dataset in zip(axes[:, 0], datasets, strict=True):
        data = steps[steps["dataset"] == dataset]
        for _variant, line in data.groupby("variant", sort=True):
            line = line.sort_values("offered_rows_per_s")
            label = f"{line['path'].iloc[0]} · {line['flush'].iloc[0]}"
            drawn = ax.plot(line["offered_rows_per_s"], line["latency_p99_s"], marker="o",
                            markersize=4, linewidth=1.4, label=label)[0]  # fmt: skip
            failed = line[line["sustained"] == False]  # noqa: E712
            ax.scatter(failed["offered_rows_per_s"], failed["latency_p99_s"], marker="x", s=60,
                       color=drawn.get_color(), zorder=3)  # fmt: skip
        bound = float(data["latency_bound_s"].iloc[0])
        resolution = float(data["resolution_s"].iloc[0])
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
        ax.text(0.01, resolution, f"below the resolution ({resolution:g} s)", transform=at_left,
                va="top", color="0.4", fontsize=8)  # fmt: skip
        ax.xaxis.set_major_formatter(plt.FuncFormatter(human))
        ax.set_xlabel("offered rate (rows/s)")
        ax.set_ylabel("p99 latency, due to visible (s)")
        ax.set_title(f"{dataset} (x: not sustained)", loc="left")
        ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    suptitle(fig, what, df, env)
    fig.tight_layout()
    return fig
