"""Snakemake entry point of rule `paced`: one path and flush mode through its paced steps, on
its own QuestDB (ingestbench.paced.job)."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.config import QuestDBSettings
from ingestbench.paced.job import paced_job
from ingestbench.paced.names import parse_paced_name
from ingestbench.paced.settings import PacedSettings
from ingestbench.server.jar import server_jar
from ingestbench.workflow.result_keys import job_config
from ingestbench.workflow.rule_records import run_rule


def main(sm) -> None:
    config = job_config(sm.params.settings, sm.config)
    server = QuestDBSettings.from_config(config)
    paced_job(
        server,
        config["table"],
        config["ilp_protocol_version"],
        PacedSettings.from_config(config["paced"]),
        parse_paced_name(sm.wildcards.paced),
        Path(sm.input.parquet),
        Path(sm.input.manifest),
        Path(sm.output[0]),
        jar=server_jar(server),
        server_log=Path(sm.log.server),
        work_dir=Path(sm.params.work_dir),
    )


# Guarded: methods that spawn processes re-import this module.
if __name__ == "__main__":
    run_rule(snakemake, main)  # noqa: F821 (injected by Snakemake)
