"""Snakemake script of the generate rules: one TSBS dataset (cpu or iot) in its formats, and its
manifest."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.tsbs import DatasetParams, GeneratorError, generate
from ingestbench.workflow.rule_records import run_rule


def main(sm) -> None:
    params = DatasetParams.from_config(sm.params.settings["dataset"])
    manifest = Path(sm.output.manifest)
    if manifest.name != f"{params.name}.manifest.json":
        raise GeneratorError(
            f"the output {manifest} does not match the dataset's name {params.name}: "
            "request results/data/<name>.manifest.json with the name DatasetParams gives."
        )
    generate(params, manifest.parent, formats=sm.params.settings["formats"], progress=False)


# Guarded: methods that spawn processes re-import this module.
if __name__ == "__main__":
    run_rule(snakemake, main)  # noqa: F821 (injected by Snakemake)
