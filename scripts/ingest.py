"""Snakemake entry point of rule `ingest`: one variant, R repeats, on its own QuestDB."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.config import Settings
from ingestbench.ingest.job import IngestFiles, ingest_job
from ingestbench.server.jar import server_jar
from ingestbench.variants import parse_variant_name
from ingestbench.workflow.result_keys import job_config
from ingestbench.workflow.rule_records import run_rule


def main(sm) -> None:
    files = IngestFiles(
        data=Path(sm.input.data),
        manifest=Path(sm.input.manifest),
        run=Path(sm.output.run),
        actual=Path(sm.output.actual),
        export=Path(sm.output.export),
    )
    # Its params and the keys without effect, nothing else of the config (rule_inputs).
    settings = Settings.from_config(job_config(sm.params.settings, sm.config))
    ingest_job(
        settings,
        parse_variant_name(sm.wildcards.variant),
        files,
        jar=server_jar(settings.questdb),
        server_log=Path(sm.log.server),
        recorded_settings=sm.params.settings,
    )


# Guarded: methods that spawn processes re-import this module.
if __name__ == "__main__":
    run_rule(snakemake, main)  # noqa: F821 (injected by Snakemake)
