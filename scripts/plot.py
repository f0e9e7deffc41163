"""Snakemake entry point of the chart rules: one chart from summary.csv, as PNG and SVG."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.charts.draw import render_chart_files
from ingestbench.errors import run_reporting_user_errors
from ingestbench.logs import setup_logging

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm.log[0])
run_reporting_user_errors(
    lambda: render_chart_files(
        sm.params.chart,
        Path(sm.input.summary),
        Path(sm.input.environment),
        [Path(sm.output.png), Path(sm.output.svg)],
        dpi=sm.params.settings["dpi"],
    )
)
