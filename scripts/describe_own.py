"""Snakemake script of the describe rules: one own dataset's manifest (the file hashed, counted,
profiled and described as a table) and, where a variant sends it, its ILP text."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.own.dataset import OwnDataset
from ingestbench.own.ilp import write_ilp
from ingestbench.own.manifest import spec_of, write_own_manifest
from ingestbench.own.profile import with_ilp_file
from ingestbench.own.sort import as_sorted_copy, derived
from ingestbench.own.support import ilp_text_possible
from ingestbench.storage.files import load_json, write_json_atomic
from ingestbench.workflow.rule_records import run_rule


def main(sm) -> None:
    dataset = OwnDataset.from_config(sm.params.settings["dataset"])
    inputs = dict(sm.input.items())
    if "source" in inputs:  # a sorted copy: the table its source was loaded as
        source = load_json(Path(inputs["source"]), "dataset manifest")
        dataset = as_sorted_copy(dataset, source)
    manifest = write_own_manifest(dataset, Path(sm.output.manifest))
    if "sort" in inputs:
        record = load_json(Path(inputs["sort"]), "sort record")
        manifest = derived(manifest, dataset.derived_from, record)
    if "ilp" in dict(sm.output.items()):
        written = write_ilp(
            spec_of(manifest),
            manifest["rows"],
            lines_possible=ilp_text_possible(spec_of(manifest), manifest),
            output=Path(sm.output.ilp),
        )
        if written:  # the ILP text's own size, where the profile had an estimate
            manifest = {**manifest, "profile": with_ilp_file(manifest["profile"], written)}
    write_json_atomic(Path(sm.output.manifest), manifest)


# Guarded: methods that spawn processes re-import this module.
if __name__ == "__main__":
    run_rule(snakemake, main)  # noqa: F821 (injected by Snakemake)
