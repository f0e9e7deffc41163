"""The drawing pieces every chart shares: theme, sizes, colours, bars, titles, placeholders, and
the atomic save. Chart functions themselves are in ingestbench.charts.draw."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from ingestbench.charts.data import machine_label, rows_label  # noqa: E402
from ingestbench.storage.files import atomic_path  # noqa: E402

WIDTH_IN = 9.0
DPI = 150
LIBRARY_COLORS = {"pandas": "#4C72B0", "polars": "#DD8452", "none": "#55A868"}
PHASE_COLORS = {"read": "#8172B3", "convert": "#CCB974", "send": "#4C72B0", "visible": "#C44E52"}
SERIALIZE_COLOR = "#937860"
CPU_COLORS = {"client": "#4C72B0", "server": "#8C8C8C"}


def theme() -> None:
    sns.set_theme(style="whitegrid", context="notebook", font_scale=0.9)
    plt.rcParams.update(
        {
            "svg.hashsalt": "ingestbench",
            "axes.titleweight": "bold",
            "figure.titlesize": 12,
            "axes.titlesize": 10.5,
        }
    )


def human(value: float, _pos: Any = None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:.3g}{suffix}"
    return f"{value:.3g}"


def dataset_title(group: pd.DataFrame) -> str:
    """Panel title: the dataset's name (its parameters) and size."""
    return f"{group['dataset'].iloc[0]}\n{rows_label(group['dataset_rows'].iloc[0])}"


def suptitle(fig: Figure, what: str, df: pd.DataFrame, env: dict[str, Any] | None) -> None:
    sizes = (
        ", ".join(rows_label(r) for r in df["dataset_rows"].drop_duplicates())
        if not df.empty
        else ""
    )
    # A dataset's name starts with its use case (cpu-..., iot-...).
    cases = " and ".join(dict.fromkeys(str(d).split("-")[0] for d in df.get("dataset", [])))
    subject = f"{what} — TSBS {cases or 'cpu'}, {sizes}" if sizes else what
    fig.suptitle(f"{subject}\n{machine_label(env)}", x=0.01, ha="left")


def bar_height(n: int) -> float:
    return 0.32 * n + 0.9


def stacked_axes(groups: list[tuple[Any, pd.DataFrame]], ncols: int = 1, width_ratios=None):
    """A figure with one row of panels per dataset's group (by_dataset), each as tall as its
    bars, one a variant, need."""
    heights = [bar_height(len(group)) for _, group in groups]
    total = sum(heights) + 1.0
    fig, axes = plt.subplots(
        len(heights),
        ncols,
        figsize=(WIDTH_IN, total),
        squeeze=False,
        gridspec_kw={"height_ratios": heights, "width_ratios": width_ratios},
    )
    return fig, axes


def no_data(what: str, reason: str, df: pd.DataFrame, env: dict[str, Any] | None) -> Figure:
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 2.6))
    ax.axis("off")
    ax.text(
        0.5,
        0.45,
        f"No data: {reason}",
        ha="center",
        va="center",
        fontsize=12,
        color="0.35",
        transform=ax.transAxes,
        wrap=True,
    )
    suptitle(fig, what, df, env)
    fig.tight_layout()
    return fig


def hbars(
    ax,
    data: pd.DataFrame,
    value: str,
    lo: str | None,
    hi: str | None,
    fmt=human,
    color_by: str = "library",
    palette=None,
    xlabel: str = "",
) -> None:
    """Sorted horizontal bars of value, coloured by library, with min–max error bars."""
    data = data.reset_index(drop=True)
    palette = palette or LIBRARY_COLORS
    y = np.arange(len(data))
    # Plain barh at fixed positions: seaborn's barplot drops NaN rows (server-side imports have
    # no MiB/s), which would shift the remaining bars against the variant labels.
    colors = [palette.get(key, "0.5") for key in data[color_by]]
    ax.barh(y, data[value].fillna(0).to_numpy(dtype=float), color=colors, height=0.8)
    ax.set_yticks(y, data["variant"])
    ax.set_ylim(len(data) - 0.5, -0.5)
    mid = data[value].to_numpy(dtype=float)
    if lo and hi:
        low = np.clip(mid - data[lo].to_numpy(dtype=float), 0, None)
        high = np.clip(data[hi].to_numpy(dtype=float) - mid, 0, None)
        ok = ~np.isnan(mid)
        ax.errorbar(
            mid[ok],
            y[ok],
            xerr=[low[ok], high[ok]],
            fmt="none",
            ecolor="0.2",
            elinewidth=1,
            capsize=2.5,
        )
        ends = np.where(
            np.isnan(data[hi].to_numpy(dtype=float)), mid, data[hi].to_numpy(dtype=float)
        )
    else:
        ends = mid
    finite = ends[~np.isnan(ends)]
    span = finite.max() if finite.size else 1.0
    for yi, m, end in zip(y, mid, ends, strict=True):
        if np.isnan(m):
            ax.text(0, yi, " n/a", va="center", ha="left", fontsize=8, color="0.4")
        else:
            ax.text(end + span * 0.01, yi, fmt(m), va="center", ha="left", fontsize=8)
    ax.set_xlim(0, span * 1.18 if span > 0 else 1)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("")
    ax.tick_params(axis="y", labelsize=8.5)


def stacked_hbars(ax, data: pd.DataFrame, column: str, colors: dict[str, Any]) -> np.ndarray:
    """One bar per variant of `data`, first on top, its parts stacked left to right: each key
    of `colors` read from `column` (a format string of the key); the bars' totals."""
    y = np.arange(len(data))
    left = np.zeros(len(data))
    for part, color in colors.items():
        values = data[column.format(part)].fillna(0).to_numpy(dtype=float)
        ax.barh(y, values, left=left, color=color, label=part, height=0.75)
        left += values
    ax.set_yticks(y, data["variant"], fontsize=8.5)
    ax.invert_yaxis()
    return left


def parts_legend(fig: Figure, ax, what: str, df: pd.DataFrame, env: dict[str, Any] | None) -> None:
    """The parts of `ax`'s stacked bars as one legend under the figure, and the title."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False, fontsize=8.5)
    suptitle(fig, what, df, env)
    fig.tight_layout(rect=(0, 0.035, 1, 1))


def library_legend(fig: Figure, libraries) -> None:
    handles = [
        plt.Rectangle((0, 0), 1, 1, color=LIBRARY_COLORS.get(lib, "0.5")) for lib in libraries
    ]
    labels = [("none: server import, ILP file" if lib == "none" else lib) for lib in libraries]
    fig.legend(handles, labels, loc="lower right", ncol=len(labels), frameon=False, fontsize=8.5)


def line_panel(ax, data: pd.DataFrame, x: str, palette: dict[str, Any]) -> None:
    data = data.sort_values(x)
    for series, part in data.groupby("series", sort=True):
        color = palette[series]
        ax.errorbar(
            part[x],
            part["rows_per_s_median"],
            yerr=[
                part["rows_per_s_median"] - part["rows_per_s_min"],
                part["rows_per_s_max"] - part["rows_per_s_median"],
            ],
            color=color,
            marker="o",
            ms=5,
            capsize=3,
            lw=1.6,
            label=series,
        )
    ax.yaxis.set_major_formatter(FuncFormatter(human))
    ax.set_ylim(bottom=0)
    ax.set_ylabel("rows/s (end to end)")


def series_palette(series: pd.Series) -> dict[str, Any]:
    names = sorted(series.unique())
    return dict(zip(names, sns.color_palette("colorblind", len(names)), strict=True))


def save(fig: Figure, path: Path, dpi: int = DPI) -> None:
    path = Path(path)
    metadata = {"Date": None} if path.suffix == ".svg" else {"Software": None}
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=dpi, metadata=metadata, bbox_inches="tight", pad_inches=0.15)
