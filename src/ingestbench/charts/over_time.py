"""Throughput over time: rows accepted and rows visible during a repeat, from the series files
beside the run files of a run with readers (ingestbench.readers.series).

Unlike the other charts it reads run files (and the series beside them), not the summary: the
series are not figures of the summary. One row of panels per dataset, one panel per reader count
(0: the sampler alone); in each, the leading variants (by the plain repeats' median rows/s), rows
accepted as a solid line and rows visible dashed, of each variant's first repeat with that many
readers. A stall is a flat stretch; a WAL backlog is the gap between a variant's two lines.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from ingestbench.charts.style import DPI, WIDTH_IN, human, save, series_palette, theme  # noqa: E402
from ingestbench.results.records import RunFile, read_run  # noqa: E402

#: Variants drawn per dataset: the fastest, so that the panels stay readable.
LEADING = 4
SERIES_SUFFIX = ".series.csv"  # written beside each run file (readers.series)


def leading_series(run_paths: list[Path], leading: int = LEADING) -> pd.DataFrame:
    """The series of the `leading` fastest variants of each dataset that ran with readers,
    with their dataset and variant: one row per sample."""
    runs: list[tuple[RunFile, Path]] = []
    for path in run_paths:
        run = read_run(path)
        series = Path(path).with_name(Path(path).stem + SERIES_SUFFIX)
        if run.readers and series.exists():
            runs.append((run, series))
    frames = []
    by_dataset: dict[str, list[tuple[float, RunFile, Path]]] = {}
    for run, series in runs:
        rate = statistics.median(run.rows / r.end_to_end for r in run.repeats)
        by_dataset.setdefault(run.dataset.name, []).append((rate, run, series))
    for dataset, entries in by_dataset.items():
        for _rate, run, series in sorted(entries, key=lambda e: -e[0])[:leading]:
            df = pd.read_csv(series)
            first = df.groupby("readers")["repeat"].transform("min")
            df = df[df["repeat"] == first]
            frames.append(df.assign(dataset=dataset, variant=run.variant.name))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def draw_over_time(run_paths: list[Path], outputs: list[Path], dpi: int = DPI) -> None:
    """The chart, as every file of `outputs` (PNG, SVG); a placeholder when no run has series."""
    theme()
    data = leading_series(run_paths)
    if data.empty:
        fig, ax = plt.subplots(figsize=(WIDTH_IN, 2.5))
        ax.axis("off")
        ax.text(0.5, 0.5, "no run with readers (readers.counts is empty)", ha="center")
    else:
        fig = _panels(data)
    for path in outputs:
        save(fig, path, dpi)
    plt.close(fig)


def _panels(data: pd.DataFrame):
    datasets = list(dict.fromkeys(data["dataset"]))
    counts = sorted(data["readers"].unique())
    fig, axes = plt.subplots(len(datasets), len(counts), squeeze=False, sharey="row",
                             figsize=(WIDTH_IN, 3.2 * len(datasets)))  # fmt: skip
    palette = series_palette(data["variant"])
    for i, dataset in enumerate(datasets):
        for j, count in enumerate(counts):
            ax = axes[i][j]
            panel = data[(data["dataset"] == dataset) & (data["readers"] == count)]
            for variant, rows in panel.groupby("variant"):
                color = palette[variant]
                ax.plot(rows["t_s"], rows["rows_accepted"], color=color, lw=1.4)
                ax.plot(rows["t_s"], rows["rows_visible"], color=color, lw=1.4, ls="--")
            ax.set_title(f"{dataset}\n{count} readers" if j == 0 else f"{count} readers")
            ax.set_xlabel("seconds since the repeat's start")
            ax.yaxis.set_major_formatter(FuncFormatter(human))
            ax.set_xlim(left=0)
            ax.set_ylim(bottom=0)
        axes[i][0].set_ylabel("rows")
    handles = [Line2D([], [], color=c, lw=2, label=v) for v, c in palette.items()]
    handles += [Line2D([], [], color="black", lw=1.4, label="accepted"),
                Line2D([], [], color="black", lw=1.4, ls="--", label="visible")]  # fmt: skip
    fig.suptitle("Rows accepted and visible over time, readers beside ingestion")
    fig.tight_layout()
    # Below the panels (the saved figure grows to hold it): never over an axis label.
    fig.legend(handles=handles, loc="upper center", ncol=3, frameon=False,
               bbox_to_anchor=(0.5, 0.0))  # fmt: skip
    return fig
