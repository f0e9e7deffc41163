"""Snakemake entry point of rule `summarize`: run and validation files to summary.csv and .md, and
the datasets' profiles (from their manifests and expected files) to profiles.json and .csv."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.results.summary import write_summary
from ingestbench.workflow.rule_records import run_rule


def main(sm) -> None:
    write_summary(
        [Path(p) for p in sm.input.runs],
        [Path(p) for p in sm.input.validations],
        Path(sm.input.environment),
        csv_path=Path(sm.output.csv),
        md_path=Path(sm.output.md),
        expected_settings=sm.params.settings["runs"],
        profile_paths=[Path(p) for p in sm.input.profiles],
        profiles_path=Path(sm.output.profiles),
    )
    if sm.input.paced:  # paced ingestion: its rows and section (ingestbench.paced.summary)
        from ingestbench.paced.summary import extend_summary

        extend_summary(Path(sm.input.paced), Path(sm.output.csv), Path(sm.output.md))

    # The delivery experiment's matrix (ingestbench.delivery), when the config runs it.
    if sm.input.delivery:
        from ingestbench.delivery.summary import append_to_summary

        append_to_summary(Path(sm.output.md), Path(sm.input.delivery[0]))


# Guarded: methods that spawn processes re-import this module.
if __name__ == "__main__":
    run_rule(snakemake, main)  # noqa: F821 (injected by Snakemake)
