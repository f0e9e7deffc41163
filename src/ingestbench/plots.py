"""Charts from results/summary.csv (and environment.json for the titles), with seaborn.

All chart styling lives here. Every chart reads only the summary table, so charts regenerate
without touching a run file, and every chart file is always written: when the config had no
variants of the kind a chart needs, it shows a "no data" placeholder instead.

Each figure is 9 inches wide and saved at 150 dpi, so text stays legible when a README shows the
PNG 900 px wide. Several datasets become stacked panels, each titled with its size.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
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

from .ceiling import LABEL, wire_ceilings  # noqa: E402
from .summary import read_summary  # noqa: E402

log = logging.getLogger(__name__)

WIDTH_IN = 9.0
DPI = 150
LIBRARY_COLORS = {"pandas": "#4C72B0", "polars": "#DD8452", "none": "#55A868"}
PHASE_COLORS = {"read": "#8172B3", "convert": "#CCB974", "send": "#4C72B0", "visible": "#C44E52"}
SERIALIZE_COLOR = "#937860"
CLIENT_LIBRARIES = ("pandas", "polars")


# ---------------------------------------------------------------- helpers


def _theme() -> None:
    sns.set_theme(style="whitegrid", context="notebook", font_scale=0.9)
    plt.rcParams.update(
        {
            "svg.hashsalt": "ingestbench",
            "axes.titleweight": "bold",
            "figure.titlesize": 12,
            "axes.titlesize": 10.5,
        }
    )


def short_cpu(model: str | None) -> str:
    """'Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz' -> 'Intel Xeon E5-2680 v4'."""
    if not model:
        return "unknown CPU"
    text = re.sub(r"\((R|TM|tm|r)\)", "", model)
    text = re.sub(r"@.*$", "", text)
    text = re.sub(r"\b(CPU|Processor|\d+-Core)\b", "", text)
    return re.sub(r"\s+", " ", text).strip() or model


def machine_label(env: dict[str, Any] | None) -> str:
    if not env:
        return "machine not recorded"
    m = env.get("machine", {})
    cores = m.get("cores_available") or m.get("cores_logical")
    return f"{cores} cores, {short_cpu(m.get('cpu_model'))}"


def _human(value: float, _pos: Any = None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:.3g}{suffix}"
    return f"{value:.3g}"


def _datasets(df: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    order = df.sort_values(["dataset_rows", "dataset"], ascending=[False, True])["dataset"]
    order = order.drop_duplicates()
    return [(name, df[df["dataset"] == name]) for name in order]


def _rows_label(rows: Any) -> str:
    return f"{int(rows):,} rows" if pd.notna(rows) else "? rows"


def _dataset_title(group: pd.DataFrame) -> str:
    """Panel title: the dataset's name (its parameters) and size."""
    return f"{group['dataset'].iloc[0]}\n{_rows_label(group['dataset_rows'].iloc[0])}"


def _suptitle(fig: Figure, what: str, df: pd.DataFrame, env: dict[str, Any] | None) -> None:
    sizes = (
        ", ".join(_rows_label(r) for r in df["dataset_rows"].drop_duplicates())
        if not df.empty
        else ""
    )
    subject = f"{what} — TSBS cpu, {sizes}" if sizes else what
    fig.suptitle(f"{subject}\n{machine_label(env)}", x=0.01, ha="left")


def _series(df: pd.DataFrame) -> pd.Series:
    return df["library"] + " · " + df["format"] + " · " + df["transport"]


def _bar_height(n: int) -> float:
    return 0.32 * n + 0.9


def _stacked_axes(heights: list[float], ncols: int = 1, width_ratios=None, sharex=False):
    """A figure with one row of panels per dataset, each as tall as its content needs."""
    total = sum(heights) + 1.0
    fig, axes = plt.subplots(
        len(heights),
        ncols,
        figsize=(WIDTH_IN, total),
        squeeze=False,
        gridspec_kw={"height_ratios": heights, "width_ratios": width_ratios},
        sharex=sharex,
    )
    return fig, axes


def _no_data(what: str, reason: str, df: pd.DataFrame, env: dict[str, Any] | None) -> Figure:
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
    _suptitle(fig, what, df, env)
    fig.tight_layout()
    return fig


def _hbars(
    ax,
    data: pd.DataFrame,
    value: str,
    lo: str | None,
    hi: str | None,
    fmt=_human,
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


def _library_legend(fig: Figure, libraries) -> None:
    handles = [
        plt.Rectangle((0, 0), 1, 1, color=LIBRARY_COLORS.get(lib, "0.5")) for lib in libraries
    ]
    labels = [("none: server import, ILP file" if lib == "none" else lib) for lib in libraries]
    fig.legend(handles, labels, loc="lower right", ncol=len(labels), frameon=False, fontsize=8.5)


# ---------------------------------------------------------------- charts


def throughput(df: pd.DataFrame, env: dict[str, Any] | None) -> Figure:
    """rows/s and MiB/s end to end per variant, fastest first, min–max error bars."""
    what = "Ingestion throughput per variant (end to end, median of repeats)"
    if df.empty:
        return _no_data(what, "the summary has no runs.", df, env)
    groups = _datasets(df)
    fig, axes = _stacked_axes(
        [_bar_height(len(g)) for _, g in groups], ncols=2, width_ratios=[1.25, 1]
    )
    for (_, group), (ax_rows, ax_mib) in zip(groups, axes, strict=True):
        data = group.sort_values("rows_per_s_median", ascending=False)
        _hbars(
            ax_rows, data, "rows_per_s_median", "rows_per_s_min", "rows_per_s_max", xlabel="rows/s"
        )
        _hbars(
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
        ax_rows.xaxis.set_major_formatter(FuncFormatter(_human))
        ax_rows.set_title(_dataset_title(group), loc="left")
        proto = group["ilp_protocol_version"].dropna().unique()
        suffix = f" (ILP v{int(proto[0])})" if len(proto) == 1 else ""
        ax_mib.set_title("MiB/s" + suffix, loc="left")
    _suptitle(fig, what, df, env)
    _library_legend(fig, sorted(df["library"].unique(), key=list(LIBRARY_COLORS).index))
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def phases(df: pd.DataFrame, env: dict[str, Any] | None) -> Figure:
    """Stacked medians of read/convert/send/visible, and the separate serialize pass beside."""
    what = "Where the time goes (median seconds per phase)"
    if df.empty:
        return _no_data(what, "the summary has no runs.", df, env)
    groups = _datasets(df)
    fig, axes = _stacked_axes(
        [_bar_height(len(g)) for _, g in groups], ncols=2, width_ratios=[3, 1]
    )
    for (_, group), (ax, ax_ser) in zip(groups, axes, strict=True):
        data = group.sort_values("end_to_end_s_median").reset_index(drop=True)
        y = np.arange(len(data))
        left = np.zeros(len(data))
        for phase, color in PHASE_COLORS.items():
            values = data[f"{phase}_s_median"].fillna(0).to_numpy(dtype=float)
            ax.barh(y, values, left=left, color=color, label=phase, height=0.75)
            left += values
        ax.scatter(
            data["end_to_end_s_median"],
            y,
            marker="|",
            s=120,
            color="black",
            zorder=3,
            label="end to end (median)",
        )
        ax.set_yticks(y, data["variant"], fontsize=8.5)
        ax.invert_yaxis()
        ax.set_xlabel("seconds (end to end = read + convert + send + visible)")
        ax.set_title(_dataset_title(group), loc="left")
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
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False, fontsize=8.5)
    _suptitle(fig, what, df, env)
    fig.tight_layout(rect=(0, 0.035, 1, 1))
    return fig


def speedup(df: pd.DataFrame, env: dict[str, Any] | None) -> Figure:
    """Median rows/s relative to the rows loop of the same dataset, library and format."""
    what = "Speedup against the row-by-row loop (rows/s ratio)"
    data = df[(df["method"] != "rows") & df["speedup_vs_rows"].notna()]
    if data.empty:
        return _no_data(
            what,
            "no variant has a rows baseline of the same library and format "
            "(add method rows to the config).",
            df,
            env,
        )
    groups = _datasets(data)
    fig, axes = _stacked_axes([_bar_height(len(g)) for _, g in groups])
    for (_, group), (ax,) in zip(groups, axes, strict=True):
        group = group.sort_values("speedup_vs_rows", ascending=False)
        _hbars(
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
        ax.set_title(_dataset_title(group), loc="left")
    _suptitle(fig, what, data, env)
    _library_legend(fig, sorted(data["library"].unique(), key=list(LIBRARY_COLORS).index))
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def _line_panel(ax, data: pd.DataFrame, x: str, palette: dict[str, Any]) -> None:
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
    ax.yaxis.set_major_formatter(FuncFormatter(_human))
    ax.set_ylim(bottom=0)
    ax.set_ylabel("rows/s (end to end)")


def _palette(series: pd.Series) -> dict[str, Any]:
    names = sorted(series.unique())
    return dict(zip(names, sns.color_palette("colorblind", len(names)), strict=True))


def scaling(df: pd.DataFrame, env: dict[str, Any] | None) -> Figure:
    """rows/s against worker count for threads and processes (dataframe = 1 worker)."""
    what = "Scaling with client workers (rows/s, median and min–max)"
    parallel = df[df["method"].isin(["threads", "processes"])]
    if parallel.empty:
        return _no_data(what, "the config had no threads or processes variants.", df, env)
    methods = [m for m in ("threads", "processes") if m in set(parallel["method"])]
    frames = []
    for method in methods:
        part = parallel[parallel["method"] == method].copy()
        keys = set(
            zip(part["dataset"], part["library"], part["format"], part["transport"], strict=True)
        )
        single = df[df["method"] == "dataframe"]
        single = single[
            [
                k in keys
                for k in zip(
                    single["dataset"],
                    single["library"],
                    single["format"],
                    single["transport"],
                    strict=True,
                )
            ]
        ]
        single = single.assign(workers=1, method=method)
        have_one = set(
            zip(
                part.loc[part["workers"] == 1, "dataset"],
                part.loc[part["workers"] == 1, "variant"],
                strict=True,
            )
        )
        if not have_one:
            part = pd.concat([part, single])
        frames.append(part)
    data = pd.concat(frames).assign(series=lambda d: _series(d))
    palette = _palette(data["series"])
    groups = _datasets(data)
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
                _line_panel(ax, part, "workers", palette)
                ticks = sorted(part["workers"].dropna().astype(int).unique())
                ax.set_xticks(ticks)
            ax.set_xlabel(f"{method} (1 = the single-sender dataframe variant)")
            ax.set_title(f"{_dataset_title(group)}: {method}", loc="left")
    handles = [plt.Line2D([], [], color=c, marker="o") for c in palette.values()]
    fig.legend(
        handles,
        list(palette),
        loc="lower center",
        ncol=min(4, len(palette)),
        frameon=False,
        fontsize=8.5,
    )
    _suptitle(fig, what, data, env)
    fig.tight_layout(rect=(0, 0.06 + 0.02 * (len(palette) // 4), 1, 1))
    return fig


def parquet_vs_csv(df: pd.DataFrame, env: dict[str, Any] | None) -> Figure:
    """Time of the read phase, Parquet against CSV, for pandas and polars."""
    what = "Reading the file: Parquet against CSV (read phase, seconds)"
    client = df[df["library"].isin(CLIENT_LIBRARIES) & (df["method"] != "rows")]
    # The dataframe runs when there are any for a library and format, else all client runs.
    parts = []
    for _, part in client.groupby(["dataset", "library", "format"]):
        pref = part[part["method"] == "dataframe"]
        parts.append(pref if not pref.empty else part)
    if not parts:
        return _no_data(what, "the config had no pandas or polars variants.", df, env)
    data = (
        pd.concat(parts)
        .groupby(["dataset", "dataset_rows", "library", "format"], as_index=False)
        .agg(
            read=("read_s_median", "median"),
            lo=("read_s_min", "min"),
            hi=("read_s_max", "max"),
            convert=("convert_s_median", "median"),
        )
    )
    groups = _datasets(data)
    fig, axes = plt.subplots(1, len(groups), figsize=(WIDTH_IN, 4.2), squeeze=False)
    formats = [f for f in ("parquet", "csv") if f in set(data["format"])]
    fmt_colors = dict(zip(("parquet", "csv"), sns.color_palette("colorblind", 2), strict=True))
    for (_, group), ax in zip(groups, axes[0], strict=True):
        libs = [lib for lib in CLIENT_LIBRARIES if lib in set(group["library"])]
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
        ax.set_title(_dataset_title(group), loc="left")
        if ax.get_legend():
            ax.get_legend().set_title("")
    _suptitle(fig, what, df, env)
    fig.tight_layout()
    return fig


def batch_sweep(df: pd.DataFrame, env: dict[str, Any] | None) -> Figure:
    """rows/s against the rows per flush of the batches method (log x)."""
    what = "Batch-size sweep: rows/s against rows per flush"
    batches = df[df["method"] == "batches"]
    if batches.empty:
        return _no_data(what, "the config had no batches variants.", df, env)
    data = batches.assign(series=lambda d: _series(d))
    palette = _palette(data["series"])
    groups = _datasets(data)
    fig, axes = plt.subplots(
        len(groups), 1, figsize=(WIDTH_IN, 3.6 * len(groups) + 1), squeeze=False
    )
    for (dataset, group), (ax,) in zip(groups, axes, strict=True):
        _line_panel(ax, group, "batch_rows", palette)
        ax.set_xscale("log")
        ax.set_xlabel("rows per flush (batch_rows, log scale)")
        ax.set_title(_dataset_title(group), loc="left")
        # The same library, format and transport sending the whole frame at once, for reference.
        whole = df[(df["dataset"] == dataset) & (df["method"] == "dataframe")]
        for _, r in whole.assign(series=lambda d: _series(d)).iterrows():
            if r["series"] in palette:
                ax.axhline(
                    r["rows_per_s_median"], color=palette[r["series"]], ls="--", lw=1, alpha=0.8
                )
    handles = [plt.Line2D([], [], color=c, marker="o") for c in palette.values()]
    labels = list(palette)
    handles.append(plt.Line2D([], [], color="0.4", ls="--"))
    labels.append("whole frame in one dataframe call")
    fig.legend(
        handles, labels, loc="lower center", ncol=min(3, len(labels)), frameon=False, fontsize=8.5
    )
    _suptitle(fig, what, data, env)
    fig.tight_layout(rect=(0, 0.07 + 0.03 * (len(labels) // 3), 1, 1))
    return fig


CHARTS: dict[str, Callable[[pd.DataFrame, dict[str, Any] | None], Figure]] = {
    "throughput": throughput,
    "phases": phases,
    "speedup": speedup,
    "scaling": scaling,
    "parquet_vs_csv": parquet_vs_csv,
    "batch_sweep": batch_sweep,
}
FORMATS = ("png", "svg")


def chart_paths(out_dir: str = "results/plots") -> list[str]:
    return [f"{out_dir}/{name}.{ext}" for name in CHARTS for ext in FORMATS]


def _save(fig: Figure, path: Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp-{os.getpid()}{path.suffix}")
    metadata = {"Date": None} if path.suffix == ".svg" else {"Software": None}
    fig.savefig(tmp, dpi=DPI, metadata=metadata, bbox_inches="tight", pad_inches=0.15)
    os.replace(tmp, path)


def render_chart(name: str, df: pd.DataFrame, env: dict[str, Any] | None, outputs) -> None:
    """Draw chart name from the summary table and write it to every path in outputs."""
    if name not in CHARTS:
        raise ValueError(f"unknown chart {name!r}; known: {', '.join(CHARTS)}")
    _theme()
    fig = CHARTS[name](df, env)
    try:
        for path in outputs:
            _save(fig, path)
    finally:
        plt.close(fig)
    log.info("drew %s into %s", name, ", ".join(map(str, outputs)))


def render_chart_files(
    name: str, summary_csv: Path, environment_json: Path | None, outputs
) -> None:
    df = read_summary(summary_csv)
    env = json.loads(Path(environment_json).read_text()) if environment_json else None
    render_chart(name, df, env, outputs)
