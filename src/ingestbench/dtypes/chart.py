"""The dtype matrix as a heatmap: a row per dtype, a column per method and transport, a colour per
outcome (seaborn, in the workflow's chart style)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ingestbench.charts.style import WIDTH_IN, plt, save, sns, theme
from ingestbench.dtypes.matrix import CHANGED, Cell

#: What a cell shows: validated, refused (unsupported with an error), or unsupported because the
#: rows arrived changed without an error (the finding a user would otherwise miss).
SHADES = {"validated": ("#55A868", "✓"), "unsupported": ("#DDDDDD", "✗"),
          "unsupported: arrived changed": ("#C44E52", "!")}  # fmt: skip


def _shade(cell: Cell) -> str:
    if cell.outcome == "unsupported" and cell.reason.startswith(CHANGED):
        return "unsupported: arrived changed"
    return cell.outcome


def draw_heatmap(cells: Sequence[Cell], path: Path, versions: str = "") -> None:
    import pandas as pd
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    theme()
    frame = pd.DataFrame(
        {
            "dtype": f"{c.library} {c.dtype}",
            "path": f"{c.method}\n{c.transport}",
            "code": list(SHADES).index(_shade(c)),
            "mark": SHADES[_shade(c)][1],
        }
        for c in cells
    )
    rows = list(dict.fromkeys(frame["dtype"]))
    columns = list(dict.fromkeys(frame["path"]))
    codes = frame.pivot(index="dtype", columns="path", values="code").loc[rows, columns]
    marks = frame.pivot(index="dtype", columns="path", values="mark").loc[rows, columns]
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 0.32 * len(rows) + 1.8))
    sns.heatmap(
        codes,
        ax=ax,
        cmap=ListedColormap([color for color, _mark in SHADES.values()]),
        vmin=-0.5,
        vmax=len(SHADES) - 0.5,
        annot=marks,
        fmt="",
        cbar=False,
        linewidths=0.5,
        linecolor="white",
    )
    ax.set_xlabel("")
    ax.set_ylabel("")
    ax.xaxis.tick_top()
    ax.tick_params(axis="x", labelsize=8, length=0)
    ax.tick_params(axis="y", labelsize=8, length=0)
    handles = [Patch(color=color, label=shade) for shade, (color, _mark) in SHADES.items()]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.01), ncol=3,
              frameon=False, fontsize=8)  # fmt: skip
    fig.suptitle("Which dtypes each client path loads intact (every value checked by DuckDB)")
    if versions:
        fig.text(0.5, -0.02, versions, ha="center", fontsize=7, color="#555555")
    save(fig, path)
    plt.close(fig)
