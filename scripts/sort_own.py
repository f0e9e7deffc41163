"""Snakemake script of the sort rules: an own dataset's sorted copy (`sorted: true`), written by
DuckDB into the data folder from the user's file, and the record of the sort's time."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.own.manifest import spec_of
from ingestbench.own.sort import write_sorted
from ingestbench.storage.files import load_json
from ingestbench.workflow.rule_records import run_rule


def main(sm) -> None:
    settings = sm.params.settings
    write_sorted(
        spec_of(load_json(Path(sm.input.manifest), "dataset manifest")),
        Path(sm.output.data),
        Path(sm.output.record),
        memory_limit=settings["memory_limit"],
        null_value=settings["null_value"],
    )


if __name__ == "__main__":
    run_rule(snakemake, main)  # noqa: F821 (injected by Snakemake)
