"""Snakemake entry point of rule `dtype_matrix`: the dtype matrix on its own QuestDB."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.config import QuestDBSettings
from ingestbench.dtypes.job import MatrixFiles, matrix_job
from ingestbench.errors import run_reporting_user_errors
from ingestbench.logs import setup_logging
from ingestbench.server.jar import server_jar


def main(sm) -> None:
    setup_logging(sm.log.job)
    run_reporting_user_errors(
        lambda: matrix_job(
            sm.config,
            MatrixFiles(Path(sm.output.csv), Path(sm.output.table), Path(sm.output.chart)),
            jar=server_jar(QuestDBSettings.from_config(sm.config)),
            server_log=Path(sm.log.server),
        )
    )


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 (injected by Snakemake)
