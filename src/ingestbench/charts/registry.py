"""The chart registry: every chart of the project, once, whichever way it is drawn.

A chart is one entry: its title, what it is drawn from, and the functions that draw it, named as
"module:function" so that this module stays light (no matplotlib, no altair): the Snakefile
reads it at parse time. `report` draws the chart's files (matplotlib/seaborn) into a results
folder's plots/, which the Snakemake report shows; `page` returns its Vega-Lite spec (altair),
which the results page embeds. A chart drawn both ways has both.

What a chart is drawn from (its `source`) decides the rule that draws its files and the
signature of its `report` function:

- "summary": a results folder's summary.csv and environment.json; one rule per chart
  (rules/charts.smk), also redrawn by reference/Snakefile. `f(summary, environment) -> Figure`.
- "paced": paced.csv, with the summary and environment.json for its title; one rule per chart
  (rules/paced.smk), in a run with a `paced` section. `f(paced_csv, summary, environment) ->
  Figure`.
- "readers": the run files of the variants that ran with readers, and their series
  (rules/over_time.smk). `f(run_paths, outputs, dpi)`.
- "dtype_matrix": the dtype matrix's cells (rules/dtypes.smk, `make run-dtypes`).
  `f(cells, path, versions)`.
- "page": none: a page-only chart, its spec fed by the page's script from the runs it selects.

A `page` function takes no argument and returns the spec; the page's script embeds it under the
chart's name (DATA.specs.<name>). Adding a chart: docs/development.md ("Adding a chart").
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from typing import Any, Literal

SOURCES = ("summary", "paced", "delivery", "readers", "dtype_matrix", "page")
#: A report chart's files, unless its entry says otherwise.
CHART_FORMATS = ("png", "svg")


@dataclasses.dataclass(frozen=True)
class Chart:
    title: str
    source: str  # one of SOURCES
    report: str = ""  # "module:function" drawing its files; "" for a page-only chart
    page: str = ""  # "module:function" returning its Vega-Lite spec; "" if not on the page
    formats: tuple[str, ...] = CHART_FORMATS  # the files `report` writes


_DRAW = "ingestbench.charts.draw:"
_SPECS = "ingestbench.publish.specs:"

#: Every chart by name, in the order the report shows them.
CHARTS: dict[str, Chart] = {
    "throughput": Chart("Throughput", "summary", report=_DRAW + "throughput"),
    "phases": Chart("Phases", "summary", report=_DRAW + "phases"),
    "speedup": Chart("Speedup", "summary", report=_DRAW + "speedup"),
    "scaling": Chart("Scaling", "summary", report=_DRAW + "scaling"),
    "parquet_vs_csv": Chart("Parquet vs CSV", "summary", report=_DRAW + "parquet_vs_csv"),
    "batch_sweep": Chart("Batch size", "summary", report=_DRAW + "batch_sweep"),
    "cpu": Chart("CPU per row", "summary", report=_DRAW + "cpu"),
    # From paced.csv, in a run with a paced section (rules/paced.smk).
    "paced": Chart(
        "Paced latency",
        "paced",
        report="ingestbench.paced.chart:draw_paced",
        page=_SPECS + "paced_chart",
    ),  # fmt: skip
    # From each server's delivery.csv, in a run with a delivery section (rules/delivery.smk).
    "delivery": Chart(
        "Delivery under faults", "delivery", report="ingestbench.delivery.chart:draw_delivery"
    ),  # fmt: skip
    "throughput_over_time": Chart(
        "Throughput over time",
        "readers",
        report="ingestbench.charts.over_time:draw_over_time",
        page=_SPECS + "over_time_chart",
    ),
    "dtype_matrix": Chart(
        "Dtype matrix",
        "dtype_matrix",
        report="ingestbench.dtypes.chart:draw_heatmap",
        formats=("png",),
    ),  # fmt: skip
    "costs": Chart("CPU and disk per run", "page", page=_SPECS + "cost_charts"),
    "history": Chart("Rows/s across archived runs", "page", page=_SPECS + "history_chart"),
}


def report_charts(source: str) -> dict[str, Chart]:
    """The charts whose files are drawn from `source` (one of SOURCES), in the report's order."""
    if source not in SOURCES:
        raise ValueError(f"no chart source {source!r}; the sources: {', '.join(SOURCES)}")
    return {name: c for name, c in CHARTS.items() if c.source == source and c.report}


def page_charts() -> dict[str, Chart]:
    """The charts the results page shows."""
    return {name: c for name, c in CHARTS.items() if c.page}


def chart_files(name: str, out_dir: str = "results/plots") -> list[str]:
    """The files chart `name` is drawn into, one per format."""
    return [f"{out_dir}/{name}.{ext}" for ext in CHARTS[name].formats]


def chart_paths(out_dir: str = "results/plots") -> list[str]:
    """The files of every chart drawn from a summary (what `charts` and the reference redraw)."""
    return [path for name in report_charts("summary") for path in chart_files(name, out_dir)]


def drawing(name: str, way: Literal["report", "page"]) -> Callable[..., Any]:
    """The function that draws chart `name` for the report or the page (imported here)."""
    chart = CHARTS.get(name)
    if chart is None:
        raise ValueError(f"unknown chart {name!r}; known: {', '.join(CHARTS)}")
    target = getattr(chart, way)
    if not target:
        raise ValueError(f"chart {name!r} is not drawn for the {way}")
    module, function = target.split(":")
    return getattr(importlib.import_module(module), function)


def page_specs() -> dict[str, dict[str, Any]]:
    """{name: Vega-Lite spec} of every page chart, as the page's script reads them."""
    return {name: drawing(name, "page")() for name in page_charts()}
