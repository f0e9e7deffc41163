"""Snakemake entry point of rule `chart_throughput_over_time`: rows accepted and visible over
time, from the series files beside the run files of a run with readers."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.charts.over_time import draw_over_time
from ingestbench.workflow.rule_records import run_rule


def main(sm) -> None:
    draw_over_time([Path(p) for p in sm.input.runs], [Path(sm.output.png), Path(sm.output.svg)],
                   dpi=sm.params.settings["dpi"])  # fmt: skip


if __name__ == "__main__":
    run_rule(snakemake, main)  # noqa: F821 (injected by Snakemake)
