"""Snakemake entry point of rule `summarize`: run and validation files to summary.csv and .md."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.errors import run_reporting_user_errors
from ingestbench.logs import setup_logging
from ingestbench.results.summary import write_summary

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm.log[0])
run_reporting_user_errors(
    lambda: write_summary(
        [Path(p) for p in sm.input.runs],
        [Path(p) for p in sm.input.validations],
        Path(sm.input.environment),
        csv_path=Path(sm.output.csv),
        md_path=Path(sm.output.md),
        expected_settings=sm.params.settings,
    )
)
