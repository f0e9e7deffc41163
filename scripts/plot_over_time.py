"""Snakemake entry point of the readers' chart rules (rules/over_time.smk): a chart of the
registry drawn from the series files beside the run files of a run with readers."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.charts.registry import drawing
from ingestbench.workflow.rule_records import run_rule


def main(sm) -> None:
    draw = drawing(sm.params.chart, "report")
    draw([Path(p) for p in sm.input.runs], [Path(sm.output.png), Path(sm.output.svg)],
         dpi=sm.params.settings["dpi"])  # fmt: skip


if __name__ == "__main__":
    run_rule(snakemake, main)  # noqa: F821 (injected by Snakemake)
