"""Snakemake entry point of rule `expected`: DuckDB aggregates of one dataset's Parquet."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.storage.files import load_json
from ingestbench.validate import write_expected
from ingestbench.workflow.rule_records import run_rule


def main(sm) -> None:
    write_expected(
        Path(sm.input.parquet),
        Path(sm.output[0]),
        sm.wildcards.dataset,
        manifest=load_json(Path(sm.input.manifest), "dataset manifest"),
    )


# Guarded: methods that spawn processes re-import this module.
if __name__ == "__main__":
    run_rule(snakemake, main)  # noqa: F821 (injected by Snakemake)
