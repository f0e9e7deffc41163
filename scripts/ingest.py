"""Snakemake entry point of rule `ingest`: one variant, R repeats, on its own QuestDB."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.config import QuestDBSettings, Settings
from ingestbench.errors import run_reporting_user_errors
from ingestbench.ingest.job import IngestFiles, ingest_job
from ingestbench.logs import setup_logging
from ingestbench.server.jar import server_jar
from ingestbench.variants import parse_variant_name


def main(sm) -> None:
    setup_logging(sm.log.job)
    files = IngestFiles(
        data=Path(sm.input.data),
        manifest=Path(sm.input.manifest),
        run=Path(sm.output.run),
        actual=Path(sm.output.actual),
        export=Path(sm.output.export),
    )
    run_reporting_user_errors(
        lambda: ingest_job(
            Settings.from_config(sm.config),
            parse_variant_name(sm.wildcards.variant),
            files,
            jar=server_jar(QuestDBSettings.from_config(sm.config)),
            server_log=Path(sm.log.server),
            recorded_settings=sm.params.settings,
        )
    )


# The guard matters: the `processes` method spawns workers, which re-import this module.
if __name__ == "__main__":
    main(snakemake)  # noqa: F821 (injected by Snakemake)
