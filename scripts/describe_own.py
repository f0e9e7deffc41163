"""Snakemake script of the describe rules: one own dataset's manifest (the file hashed, counted
and described as a table) and, where a variant sends it, its ILP text."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.errors import run_reporting_user_errors
from ingestbench.logs import setup_logging
from ingestbench.own.dataset import OwnDataset
from ingestbench.own.ilp import write_ilp
from ingestbench.own.manifest import spec_of, write_own_manifest
from ingestbench.own.methods import ilp_text_possible


def main(smk) -> None:
    setup_logging(smk.log[0])
    dataset = OwnDataset.from_config(smk.params.dataset)
    manifest = write_own_manifest(dataset, Path(smk.output.manifest))
    if "ilp" in dict(smk.output.items()):
        write_ilp(
            spec_of(manifest),
            manifest["rows"],
            lines_possible=ilp_text_possible(spec_of(manifest), manifest),
            output=Path(smk.output.ilp),
        )


run_reporting_user_errors(lambda: main(snakemake))  # noqa: F821 (injected by Snakemake)
