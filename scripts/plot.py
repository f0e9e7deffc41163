"""Snakemake entry point of the chart rules: one chart from summary.csv (or from its rule's input
of its own, such as paced.csv, titled by the summary), as PNG and SVG."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.charts.draw import render_chart_files
from ingestbench.workflow.rule_records import run_rule


def _data(sm) -> Path | list[Path] | None:
    """The chart's input of its own: paced.csv, or the delivery.csv of each server."""
    if "paced" in sm.input.keys():  # noqa: SIM118 (Snakemake's InputFiles)
        return Path(sm.input.paced)
    if "delivery" in sm.input.keys():  # noqa: SIM118
        return [Path(p) for p in sm.input.delivery]
    return None


def main(sm) -> None:
    render_chart_files(
        sm.params.settings["chart"],
        Path(sm.input.summary),
        Path(sm.input.environment),
        [Path(sm.output.png), Path(sm.output.svg)],
        dpi=sm.params.settings["dpi"],
        data=_data(sm),
    )


# Guarded: methods that spawn processes re-import this module.
if __name__ == "__main__":
    run_rule(snakemake, main)  # noqa: F821 (injected by Snakemake)
