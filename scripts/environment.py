"""Snakemake entry point of rule `environment`: record versions, machine and QuestDB settings."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.config import QuestDBSettings
from ingestbench.environment import record_environment
from ingestbench.errors import run_reporting_user_errors
from ingestbench.logs import setup_logging
from ingestbench.server.jar import server_jar

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm.log.job)
run_reporting_user_errors(
    lambda: record_environment(
        sm.config,
        Path(sm.output[0]),
        lock_path=Path(sm.input.lock),
        workflow_dir=Path(sm.params.workflow_dir),
        jar=server_jar(QuestDBSettings.from_config(sm.config)),
        server_log=Path(sm.log.server),
    )
)
