"""Snakemake script of rule `own_example`: an example own table (trades of configs/own.yaml,
flights of configs/sorted.yaml)."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.own.example import write_example
from ingestbench.own.flights import write_flights
from ingestbench.workflow.rule_records import run_rule

WRITERS = {"trades": write_example, "flights": write_flights}


def main(sm) -> None:
    WRITERS[sm.wildcards.table](Path(sm.output[0]), int(sm.wildcards.rows))


# Guarded: methods that spawn processes re-import this module.
if __name__ == "__main__":
    run_rule(snakemake, main)  # noqa: F821 (injected by Snakemake)
