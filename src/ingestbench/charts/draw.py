"""Charts from results/summary.csv (and environment.json for the titles), with seaborn.

One function per chart, named by its entry in ingestbench.charts.registry (the chart list,
source "summary"), each framed by `@framed`; which rows a chart shows is decided in
ingestbench.charts.data, and the shared styling (sizes, colours, bars, titles) lives in
ingestbench.charts.style. Every chart reads only the summary table, so charts regenerate without
touching a run file, and every chart file is always written: when the config had no variants of the
kind a chart needs, it shows a "no data" placeholder instead.

Each figure is 9 inches wide and saved at 150 dpi, so text stays legible when a README shows the
PNG 900 px wide. Several datasets become stacked panels, each titled with its size.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
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

from ingestbench.charts.data import (  # noqa: E402
    batch_data,
    by_dataset,
    cpu_data,
    marked_variants,
    read_times,
    scaling_data,
    series_label,
    speedup_data,
)
from ingestbench.charts.registry import drawing, report_charts  # noqa: E402
from ingestbench.charts.style import (  # noqa: E402
    CPU_COLORS,
    DPI,
    LIBRARY_COLORS,
    PHASE_COLORS,
    SERIALIZE_COLOR,
    WIDTH_IN,
    dataset_title,
    hbars,
    human,
    library_legend,
    line_panel,
    no_data,
    parts_legend,
    save,
    series_palette,
    stacked_axes,
    stacked_hbars,
    suptitle,
    theme,
)
from ingestbench.results.ceiling import LABEL, wire_ceilings  # noqa: E402
from ingestbench.results.summary import read_summary  # noqa: E402
from ingestbench.storage.files import load_json  # noqa: E402
from ingestbench.variants import LIBRARIES  # noqa: E402

log = logging.getLogger(__name__)
#: What a chart of every run says when there is none.
NO_RUNS = "the summary has no runs."


Drawer = Callable[[pd.DataFrame, dict[str, Any] | None], Figure]


def framed(what: str, empty: str, rows: Callable[[pd.DataFrame], pd.DataFrame] | None = None):
    """The frame every summary chart shares: the rows it plots (`rows` of the summary, all of it
    by default) and, when there are none, a "no data" figure titled `what` that says `empty`.
    The decorated function draws the rest from (what, rows, summary, environment)."""

    def frame(body: Callable[..., Figure]) -> Drawer:
        @functools.wraps(body)
        def drawn(df: pd.DataFrame, env: dict[str, Any] | None) -> Figure:
            data = df if rows is None else rows(df)
            if data.empty:
                return no_data(what, empty, df, env)
            return body(what, data, df, env)

        return drawn

    return frame


def titled(fig: Figure, what: str, data: pd.DataFrame, env: dict[str, Any] | None) -> Figure:
    """The closing of a chart of bars coloured by library: the title and the library legend."""
    suptitle(fig, what, data, env)
    library_legend(fig, sorted(data["library"].unique(), key=list(LIBRARY_COLORS).index))
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def series_titled(fig: Figure, what: str, data: pd.DataFrame, env: dict[str, Any] | None,
                  palette: dict[str, Any], per_row: int, margin: tuple[float, float],
                  extra: list[tuple[Any, str]] = ()) -> Figure:  # fmt: skip
    """The closing of a chart of lines, one a series: their legend (`per_row` a row, then
    `extra` handles and labels) under the panels, `margin` (base, per legend row) kept for it, and
    the title."""
    handles = [plt.Line2D([], [], color=c, marker="o") for c in palette.values()]
    labels = list(palette)
    for handle, label in extra:
        handles.append(handle)
        labels.append(label)
    ncol = min(per_row, len(labels))
    fig.legend(handles, labels, loc="lower center", ncol=ncol, frameon=False, fontsize=8.5)
    suptitle(fig, what, data, env)
    fig.tight_layout(rect=(0, margin[0] + margin[1] * (len(labels) // per_row), 1, 1))
    return fig


# ---------------------------------------------------------------- charts


@framed("Ingestion throughput per variant (end to end, median of repeats)", NO_RUNS)
def throughput(what: str, df: pd.DataFrame, _summary, env: dict[str, Any] | None) -> Figure:
    """rows/s and MiB/s end to end per variant, fastest first, min–max error bars."""
    groups = by_dataset(df)
    fig, axes = stacked_axes(groups, ncols=2, width_ratios=[1.25, 1])
    for (_, group), (ax_rows, ax_mib) in zip(groups, axes, strict=True):
        data = group.sort_values("rows_per_s_median", ascending=False)
        data = data.assign(variant=marked_variants(data))
        hbars(
            ax_rows, data, "rows_per_s_median", "rows_per_s_min", "rows_per_s_max", xlabel="rows/s"
        )
        hbars(
            ax_mib,
            data,
            "mib_per_s_median",
            "mib_per_s_min",
            "mib_per_s_max",
            fmt=lambda v: f"{v:.3g}",
            xlabel="MiB/s (ILP bytes)",
        )
        ax_mib.set_yticklabels([])
        ceiling = wire_ceilings(group).get(group["dataset"].iloc[0])
        if ceiling:  # what the server takes with no client work: the file sent as it is
            ax_rows.axvline(ceiling[0], color="0.2", linestyle="--", linewidth=1, label=LABEL)
            ax_rows.legend(loc="lower right", fontsize=7.5, frameon=False)
        ax_rows.xaxis.set_major_formatter(FuncFormatter(human))
        ax_rows.set_title(dataset_title(group), loc="left")
        proto = group["ilp_protocol_version"].dropna().unique()
        suffix = f" (ILP v{int(proto[0])})" if len(proto) == 1 else ""
        ax_mib.set_title("MiB/s" + suffix, loc="left")
    return titled(fig, what, df, env)


@framed("Where the time goes (median seconds per phase)", NO_RUNS)
def phases(what: str, df: pd.DataFrame, _summary, env: dict[str, Any] | None) -> Figure:
    """Stacked medians of read/convert/send/visible, and the separate serialize pass beside."""
    groups = by_dataset(df)
    fig, axes = stacked_axes(groups, ncols=2, width_ratios=[3, 1])
    for (_, group), (ax, ax_ser) in zip(groups, axes, strict=True):
        data = group.sort_values("end_to_end_s_median").reset_index(drop=True)
        stacked_hbars(ax, data, "{}_s_median", PHASE_COLORS)
        y = np.arange(len(data))
        ax.scatter(
            data["end_to_end_s_median"],
            y,
            marker="|",
            s=120,
            color="black",
            zorder=3,
            label="end to end (median)",
        )
        # End to end is wall time: streamed, the phases overlap and their stack runs past it.
        ax.set_xlabel("seconds (end to end: wall time; the phases' sum unless streamed)")
        ax.set_title(dataset_title(group), loc="left")
        ser = data["serialize_s_median"].to_numpy(dtype=float)
        ax_ser.barh(
            y, np.nan_to_num(ser), color=SERIALIZE_COLOR, hatch="//", height=0.75, edgecolor="white"
        )
        for yi, v in zip(y, ser, strict=True):
            if np.isnan(v):
                ax_ser.text(0, yi, " n/a", va="center", fontsize=8, color="0.4")
        ax_ser.set_yticks(y, [""] * len(y))
        ax_ser.set_ylim(ax.get_ylim())
        ax_ser.set_xlabel("seconds")
        ax_ser.set_title("serialize (separate pass,\nnot in end to end)", loc="left", fontsize=9)
    parts_legend(fig, axes[0][0], what, df, env)
    return fig


@framed(
    "Speedup against the row-by-row loop (rows/s ratio)",
    "no variant has a rows baseline of the same library and format (add method rows to the "
    "config).",
    speedup_data,
)
def speedup(what: str, data: pd.DataFrame, _summary, env: dict[str, Any] | None) -> Figure:
    """Median rows/s relative to the rows loop of the same dataset, library and format."""
    groups = by_dataset(data)
    fig, axes = stacked_axes(groups)
    for (_, group), (ax,) in zip(groups, axes, strict=True):
        group = group.sort_values("speedup_vs_rows", ascending=False)
        hbars(
            ax,
            group,
            "speedup_vs_rows",
            None,
            None,
            fmt=lambda v: f"{v:.1f}×",
            xlabel="× faster than the rows loop (log scale)",
        )
        ax.set_xscale("log")
        ax.set_xlim(
            min(0.8, group["speedup_vs_rows"].min() * 0.8), group["speedup_vs_rows"].max() * 2.2
        )
        ax.axvline(1, color="0.3", lw=1, ls="--")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}×"))
        ax.set_title(dataset_title(group), loc="left")
    return titled(fig, what, data, env)


@framed(
    "Scaling with client workers (rows/s, median and min–max)",
    "the config had no threads or processes variants.",
    lambda df: scaling_data(df)[1],
)
def scaling(what: str, data: pd.DataFrame, _summary, env: dict[str, Any] | None) -> Figure:
    """rows/s against worker count for threads and processes (dataframe = 1 worker)."""
    methods = list(dict.fromkeys(data["method"]))  # in scaling_data's order
    palette = series_palette(data["series"])
    groups = by_dataset(data)
    fig, axes = plt.subplots(
        len(groups),
        len(methods),
        figsize=(WIDTH_IN, 3.4 * len(groups) + 1),
        squeeze=False,
        sharey="row",
    )
    for (_, group), row in zip(groups, axes, strict=True):
        for method, ax in zip(methods, row, strict=True):
            part = group[group["method"] == method]
            if part.empty:
                ax.text(0.5, 0.5, f"no {method} variants", ha="center", transform=ax.transAxes)
            else:
                line_panel(ax, part, "workers", palette)
                ticks = sorted(part["workers"].dropna().astype(int).unique())
                ax.set_xticks(ticks)
            ax.set_xlabel(f"{method} (1 = the single-sender dataframe variant)")
            ax.set_title(f"{dataset_title(group)}: {method}", loc="left")
    return series_titled(fig, what, data, env, palette, per_row=4, margin=(0.06, 0.02))


@framed(
    "Reading the file: Parquet against CSV (read phase, seconds)",
    "the config had no pandas or polars variants.",
    read_times,
)
def parquet_vs_csv(what: str, data: pd.DataFrame, df: pd.DataFrame, env) -> Figure:
    """Time of the read phase, Parquet against CSV, for pandas and polars."""
    groups = by_dataset(data)
    fig, axes = plt.subplots(1, len(groups), figsize=(WIDTH_IN, 4.2), squeeze=False)
    formats = [f for f in ("parquet", "csv") if f in set(data["format"])]
    fmt_colors = dict(zip(("parquet", "csv"), sns.color_palette("colorblind", 2), strict=True))
    for (_, group), ax in zip(groups, axes[0], strict=True):
        libs = [lib for lib in LIBRARIES if lib in set(group["library"])]
        sns.barplot(
            data=group,
            x="library",
            y="read",
            hue="format",
            order=libs,
            hue_order=formats,
            palette=fmt_colors,
            ax=ax,
            errorbar=None,
        )
        width = 0.8 / len(formats)
        for i, lib in enumerate(libs):
            for j, fmt in enumerate(formats):
                row = group[(group["library"] == lib) & (group["format"] == fmt)]
                if row.empty:
                    continue
                r = row.iloc[0]
                x = i - 0.4 + width * (j + 0.5)
                ax.errorbar(
                    x,
                    r["read"],
                    yerr=[[r["read"] - r["lo"]], [r["hi"] - r["read"]]],
                    color="0.2",
                    capsize=3,
                    lw=1,
                )
                ax.text(x, r["hi"], f"{r['read']:.2f} s\n", ha="center", va="bottom", fontsize=8)
        ax.set_ylim(0, group["hi"].max() * 1.25 if group["hi"].max() > 0 else 1)
        ax.set_xlabel("")
        ax.set_ylabel("read phase, seconds")
        ax.set_title(dataset_title(group), loc="left")
        if ax.get_legend():
            ax.get_legend().set_title("")
    suptitle(fig, what, df, env)
    fig.tight_layout()
    return fig


@framed(
    "Batch-size sweep: rows/s against rows per flush",
    "the config had no batches variants.",
    batch_data,
)
def batch_sweep(what: str, data: pd.DataFrame, df: pd.DataFrame, env) -> Figure:
    """rows/s against the rows per flush of the batches method (log x)."""
    palette = series_palette(data["series"])
    groups = by_dataset(data)
    fig, axes = plt.subplots(
        len(groups), 1, figsize=(WIDTH_IN, 3.6 * len(groups) + 1), squeeze=False
    )
    for (dataset, group), (ax,) in zip(groups, axes, strict=True):
        line_panel(ax, group, "batch_rows", palette)
        ax.set_xscale("log")
        ax.set_xlabel("rows per flush (batch_rows, log scale)")
        ax.set_title(dataset_title(group), loc="left")
        # The same library, format and transport sending the whole frame at once, for reference.
        whole = df[(df["dataset"] == dataset) & (df["method"] == "dataframe")]
        for _, r in whole.assign(series=series_label(whole)).iterrows():
            if r["series"] in palette:
                ax.axhline(
                    r["rows_per_s_median"], color=palette[r["series"]], ls="--", lw=1, alpha=0.8
                )
    whole = (plt.Line2D([], [], color="0.4", ls="--"), "whole frame in one dataframe call")
    return series_titled(fig, what, data, env, palette, per_row=3, margin=(0.07, 0.03),
                         extra=[whole])  # fmt: skip


@framed(
    "CPU per 1M rows: the client's processes and the server's (median of repeats)",
    "no run recorded client and server CPU.",
    cpu_data,
)
def cpu(what: str, data: pd.DataFrame, df: pd.DataFrame, env: dict[str, Any] | None) -> Figure:
    """Client and server CPU-seconds per 1M rows per variant, stacked, cheapest total first."""
    groups = by_dataset(data)
    fig, axes = stacked_axes(groups)
    for (_, group), (ax,) in zip(groups, axes, strict=True):
        group = group.sort_values("cpu_total").reset_index(drop=True)
        left = stacked_hbars(ax, group, "{}_cpu_s_per_1m_rows", CPU_COLORS)
        y = np.arange(len(group))
        # The row loops cost tens of times the rest: cut the axis above the others, so that
        # the paths worth comparing stay readable; a cut bar's label says it goes on.
        edge = min(float(left.max()), 3 * float(np.quantile(left, 0.75)))
        for yi, client, total in zip(y, group["client_cpu_s_per_1m_rows"], left, strict=True):
            label = f" {client:.2f} + {total - client:.2f}"
            cut = total > edge
            ax.text(min(total, edge), yi, label + (" →" if cut else ""), va="center",
                    fontsize=7.5, color="white" if cut else "black")  # fmt: skip
        ax.set_xlim(0, edge * 1.3)
        ax.set_xlabel("CPU-seconds per 1M rows (client + server)")
        ax.set_title(dataset_title(group), loc="left")
    parts_legend(fig, axes[0][0], what, df, env)
    return fig


def render_chart(name: str, df: pd.DataFrame, env: dict[str, Any] | None, outputs,
                 dpi: int = DPI, data: Path | list[Path] | None = None) -> None:  # fmt: skip
    """Draw chart `name` from the summary table, or from `data` (its rule's input of its own,
    such as the paced chart's paced.csv or the delivery chart's delivery.csv of each server)
    with the summary for its title, and write it to every path in `outputs`."""
    known = {**report_charts("summary"), **report_charts("paced"), **report_charts("delivery")}
    if name not in known:
        raise ValueError(f"unknown chart {name!r}; the charts of a summary: {', '.join(known)}")
    theme()
    draw = drawing(name, "report")
    fig = draw(df, env) if known[name].source == "summary" else draw(data, df, env)
    try:
        for path in outputs:
            save(fig, path, dpi)
    finally:
        plt.close(fig)
    log.info("drew %s into %s", name, ", ".join(map(str, outputs)))


def render_chart_files(name: str, summary_csv: Path, environment_json: Path | None, outputs,
                       dpi: int = DPI, data: Path | list[Path] | None = None) -> None:  # fmt: skip
    df = read_summary(summary_csv)
    env = load_json(environment_json, "environment file") if environment_json else None
    render_chart(name, df, env, outputs, dpi, data)
