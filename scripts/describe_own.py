"""Snakemake script of the describe rules: one own dataset's manifest (the file hashed, counted
and described as a table) and, where a variant sends it, its ILP text."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.own.dataset import OwnDataset
from ingestbench.own.ilp import write_ilp
from ingestbench.own.manifest import spec_of, write_own_manifest
from ingestbench.own.methods import ilp_text_possible
from ingestbench.rule_records import run_rule


def main(smk) -> None:
    dataset = OwnDataset.from_config(smk.params.settings["dataset"])
    manifest = write_own_manifest(dataset, Path(smk.output.manifest))
    if "ilp" in dict(smk.output.items()):
        write_ilp(
            spec_of(manifest),
            manifest["rows"],
            lines_possible=ilp_text_possible(spec_of(manifest), manifest),
            output=Path(smk.output.ilp),
        )


# Guarded: methods that spawn processes re-import this module.
if __name__ == "__main__":
    run_rule(snakemake, main)  # noqa: F821 (injected by Snakemake)
