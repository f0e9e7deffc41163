"""Snakemake entry point of rule `fetch_questdb`: download the jar and check its SHA-1."""

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.errors import run_reporting_user_errors
from ingestbench.jar import fetch_jar
from ingestbench.logs import setup_logging

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm.log[0])
run_reporting_user_errors(lambda: fetch_jar(sm.params.version, sm.params.cache_dir))
