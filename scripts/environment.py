"""Snakemake entry point of rule `environment`: record versions, machine and QuestDB settings."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.config import QuestDBSettings
from ingestbench.ingest.environment import record_environment
from ingestbench.server.jar import server_jar
from ingestbench.workflow.rule_records import run_rule


def main(sm) -> None:
    record_environment(
        sm.config,
        Path(sm.output[0]),
        lock_path=Path(sm.input.lock),
        workflow_dir=Path(sm.params.workflow_dir),
        jar=server_jar(QuestDBSettings.from_config(sm.config)),
        server_log=Path(sm.log.server),
    )


# Guarded: methods that spawn processes re-import this module.
if __name__ == "__main__":
    run_rule(snakemake, main)  # noqa: F821 (injected by Snakemake)
