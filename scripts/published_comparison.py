"""Snakemake entry point of rule `published_comparison`: the summary beside QuestDB's own run."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.results.published import write_published_comparison
from ingestbench.workflow.rule_records import run_rule


def main(sm) -> None:
    write_published_comparison(Path(sm.input.summary), Path(sm.output[0]))


# Guarded: methods that spawn processes re-import this module.
if __name__ == "__main__":
    run_rule(snakemake, main)  # noqa: F821 (injected by Snakemake)
