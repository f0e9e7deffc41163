"""Snakemake entry point of rule `summarize`: run and validation files, and the files of each
experiment the config runs (ingestbench.workflow.experiments), to summary.csv and .md; the
datasets' profiles (from their manifests and expected files) to profiles.json and .csv."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.results.summary import write_summary
from ingestbench.workflow.experiments import EXPERIMENTS, summary_parts
from ingestbench.workflow.rule_records import run_rule


def main(sm) -> None:
    # The experiments' inputs are named by their keys (rules/report.smk): a list, or one file.
    named = {e.key: sm.input[e.key] for e in EXPERIMENTS if e.key in sm.input.keys()}  # noqa: SIM118
    named = {k: [v] if isinstance(v, str) else list(v) for k, v in named.items()}
    write_summary(
        [Path(p) for p in sm.input.runs],
        [Path(p) for p in sm.input.validations],
        Path(sm.input.environment),
        csv_path=Path(sm.output.csv),
        md_path=Path(sm.output.md),
        expected_settings=sm.params.settings["runs"],
        profile_paths=[Path(p) for p in sm.input.profiles],
        profiles_path=Path(sm.output.profiles),
        experiments=summary_parts(named),
    )


# Guarded: methods that spawn processes re-import this module.
if __name__ == "__main__":
    run_rule(snakemake, main)  # noqa: F821 (injected by Snakemake)
