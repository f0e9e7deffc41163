"""Snakemake entry point of rule `paced_table`: every paced job's steps into paced.csv."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.paced.table import write_paced_table
from ingestbench.workflow.rule_records import run_rule


def main(sm) -> None:
    write_paced_table([Path(p) for p in sm.input.records], Path(sm.output.csv))


if __name__ == "__main__":
    run_rule(snakemake, main)  # noqa: F821 (injected by Snakemake)
