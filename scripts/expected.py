"""Snakemake entry point of rule `expected`: DuckDB aggregates of one dataset's Parquet."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.errors import run_reporting_user_errors
from ingestbench.files import load_json
from ingestbench.logs import setup_logging
from ingestbench.validate import write_expected

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm.log[0])
run_reporting_user_errors(
    lambda: write_expected(
        Path(sm.input.parquet),
        Path(sm.output[0]),
        sm.wildcards.dataset,
        manifest=load_json(Path(sm.input.manifest), "dataset manifest"),
    )
)
