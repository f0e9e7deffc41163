"""The delivery chart (the registry's `delivery`, source "delivery"): each server's path × fault
matrix, every cell coloured by its class and holding its text (delivery.matrix.cells), from the
delivery.csv of each server, which its rule (rules/delivery.smk) passes in."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ingestbench.charts.style import WIDTH_IN, no_data, suptitle
from ingestbench.delivery.matrix import cells
from ingestbench.delivery.summary import measured_faults, read_rows

#: A cell's class as its colour: exact green, duplicates yellow, lost or altered red.
COLOURS = {"exact": "#cfe8cf", "duplicates": "#fbe7a1", "lost": "#f4b6b6",
           "not measured": "#e6e6e6", "none": "#ffffff"}  # fmt: skip
WHAT = "Delivery under faults: each path's worst case per fault (row for row against its source)"
NO_CASE = "no delivery case ran (the config has no delivery section)."


def draw_delivery(delivery_csvs: list[Path] | None, df: pd.DataFrame,
                  env: dict[str, Any] | None) -> Figure:  # fmt: skip
    """A panel per server (`delivery/<server>/delivery.csv`): rows are paths, columns faults."""
    paths = [Path(p) for p in delivery_csvs or [] if Path(p).is_file()]
    if not paths:
        return no_data(WHAT, NO_CASE, df, env)
    matrices = [(p.parent.name, cells(read_rows(p))) for p in paths]
    classes = list(COLOURS)
    heights = [0.9 + 0.42 * len(m) for _, m in matrices]
    fig, axes = plt.subplots(len(matrices), 1, figsize=(WIDTH_IN, sum(heights) + 0.8),
                             squeeze=False, gridspec_kw={"height_ratios": heights})  # fmt: skip
    for ax, (server, matrix) in zip(axes[:, 0], matrices, strict=True):
        faults, rows = measured_faults(matrix), list(matrix)
        grid = [[classes.index(matrix[r].get(f, {"class": "none"})["class"]) for f in faults]
                for r in rows]  # fmt: skip
        ax.imshow(grid, cmap=ListedColormap(list(COLOURS.values())), vmin=0,
                  vmax=len(classes) - 1, aspect="auto")  # fmt: skip
        for i, r in enumerate(rows):
            for j, f in enumerate(faults):
                text = matrix[r].get(f, {"text": ""})["text"]
                ax.text(j, i, "\n".join(textwrap.wrap(text, 22)), ha="center", va="center",
                        fontsize=6.5)  # fmt: skip
        ax.set_xticks(range(len(faults)), faults, fontsize=8)
        ax.set_yticks(range(len(rows)), rows, fontsize=8)
        ax.xaxis.tick_top()
        ax.grid(False)
        ax.set_title(f"QuestDB {server}", loc="left", fontsize=9)
    handles = [Patch(color=c, label=k) for k, c in COLOURS.items() if k != "none"]
    fig.legend(handles=handles, loc="lower center", ncols=len(handles), fontsize=8)
    suptitle(fig, WHAT, df, env)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig
