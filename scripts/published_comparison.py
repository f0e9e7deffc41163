"""Snakemake entry point of rule `published_comparison`: the summary beside QuestDB's own run."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.errors import run_reporting_user_errors
from ingestbench.logs import setup_logging
from ingestbench.results.published import write_published_comparison

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm.log[0])
run_reporting_user_errors(
    lambda: write_published_comparison(Path(sm.input.summary), Path(sm.output[0]))
)
