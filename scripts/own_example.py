"""Snakemake script of rule `own_example`: the example trades table of config.own.yaml."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.errors import run_reporting_user_errors
from ingestbench.logs import setup_logging
from ingestbench.own.example import write_example

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm.log[0])
run_reporting_user_errors(lambda: write_example(Path(sm.output[0]), int(sm.wildcards.rows)))
