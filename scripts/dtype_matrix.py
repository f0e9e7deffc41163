"""Snakemake entry point of rule `dtype_matrix`: the dtype matrix on its own QuestDB."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.config import QuestDBSettings
from ingestbench.dtypes.job import MatrixFiles, matrix_job
from ingestbench.server.jar import server_jar
from ingestbench.workflow.rule_records import run_rule


def main(sm) -> None:
    matrix_job(
        sm.config,
        MatrixFiles(Path(sm.output.csv), Path(sm.output.table), Path(sm.output.chart)),
        jar=server_jar(QuestDBSettings.from_config(sm.config)),
        server_log=Path(sm.log.server),
    )


# Guarded: methods that spawn processes re-import this module.
if __name__ == "__main__":
    run_rule(snakemake, main)  # noqa: F821 (injected by Snakemake)
