"""Snakemake script of rule `own_example`: the example trades table of config.own.yaml."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.own.example import write_example
from ingestbench.rule_records import run_rule


def main(sm) -> None:
    write_example(Path(sm.output[0]), int(sm.wildcards.rows))


# Guarded: methods that spawn processes re-import this module.
if __name__ == "__main__":
    run_rule(snakemake, main)  # noqa: F821 (injected by Snakemake)
