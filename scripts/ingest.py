"""Snakemake entry point of rule `ingest`: one variant, R repeats, on its own QuestDB."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.errors import run_reporting_user_errors
from ingestbench.ingest import ingest_job
from ingestbench.jar import server_jar
from ingestbench.logs import setup_logging
from ingestbench.variants import parse_variant_name


def main(sm) -> None:
    setup_logging(sm.log.job)
    run_reporting_user_errors(
        lambda: ingest_job(
            sm.config,
            parse_variant_name(sm.wildcards.variant),
            Path(sm.input.data),
            Path(sm.input.manifest),
            Path(sm.output.run),
            Path(sm.output.actual),
            Path(sm.output.export),
            jar=server_jar(sm.config["questdb"]),
            server_log=Path(sm.log.server),
        )
    )


# The guard matters: the `processes` method spawns workers, which re-import this module.
if __name__ == "__main__":
    main(snakemake)  # noqa: F821 (injected by Snakemake)
