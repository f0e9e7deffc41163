"""The chart registry: every chart's name and title, in the order the report shows them.

Light on purpose (no matplotlib): rules/report.smk reads it at parse time to make one rule per
chart, and ingestbench.charts.draw draws each one (a function registered under the same name).
A new chart is one entry here, one function in draw.py and a caption in report/<name>.rst.
"""

from __future__ import annotations

CHARTS: dict[str, str] = {
    "throughput": "Throughput",
    "phases": "Phases",
    "speedup": "Speedup",
    "scaling": "Scaling",
    "parquet_vs_csv": "Parquet vs CSV",
    "batch_sweep": "Batch size",
    "cpu": "CPU per row",
    "paced": "Paced latency",  # drawn by ingestbench.paced.chart, from paced.csv
}
#: Every chart is written in each of these formats.
CHART_FORMATS = ("png", "svg")


def chart_paths(out_dir: str = "results/plots") -> list[str]:
    return [f"{out_dir}/{name}.{ext}" for name in CHARTS for ext in CHART_FORMATS]
