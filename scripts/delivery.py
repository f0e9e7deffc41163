"""Snakemake entry point of rule `delivery`: every path under every fault, checked row for row."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.config import QuestDBSettings
from ingestbench.delivery.job import delivery_job
from ingestbench.server.jar import server_jar
from ingestbench.workflow.result_keys import job_config
from ingestbench.workflow.rule_records import run_rule


def main(sm) -> None:
    config = job_config(sm.params.settings, sm.config)  # its params, and keys without effect
    settings = QuestDBSettings.from_config(config)
    delivery_job(
        config,
        Path(sm.input.manifest),
        Path(sm.input.data),
        Path(sm.output.csv),
        Path(sm.output.matrix),
        jar=server_jar(settings),
        server_log=Path(sm.log.server),
        histories=Path(sm.output.histories),
    )


# Guarded: methods that spawn processes re-import this module.
if __name__ == "__main__":
    run_rule(snakemake, main)  # noqa: F821 (injected by Snakemake)
