"""Snakemake entry point of rule `validate`: expected vs QuestDB, aggregates and row for row."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.validate import validate_files
from ingestbench.workflow.rule_records import run_rule


def main(sm) -> None:
    validate_files(
        run=Path(sm.input.run),
        actual=Path(sm.input.actual),
        export=Path(sm.input.export),
        expected=Path(sm.input.expected),
        parquet=Path(sm.input.parquet),
        output=Path(sm.output[0]),
        validation=dict(sm.params.settings),
        log_path=sm.log[0],
        spill_root=Path(sm.params.spill_root),
    )


# Guarded: methods that spawn processes re-import this module.
if __name__ == "__main__":
    run_rule(snakemake, main)  # noqa: F821 (injected by Snakemake)
