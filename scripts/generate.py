"""Snakemake script of the generate rules: one TSBS dataset (cpu or iot) in its formats, and its
manifest."""

import logging
import sys
from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.tsbs import DatasetParams, GeneratorError, generate


def main(smk) -> None:
    logging.basicConfig(
        filename=smk.log[0],
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        force=True,
    )
    try:
        params = DatasetParams.from_config(smk.params.dataset)
        parquet = Path(smk.output.parquet)
        if parquet.name != f"{params.name}.parquet":
            raise GeneratorError(
                f"the output {parquet} does not match the dataset's name {params.name}: "
                "request results/data/<name>.parquet with the name DatasetParams gives."
            )
        generate(params, parquet.parent, formats=smk.params.formats, progress=False)
    except GeneratorError as exc:
        logging.getLogger("ingestbench").error("%s", exc)
        print(f"ERROR: {exc}", file=sys.stderr)
        sys.exit(1)


main(snakemake)  # noqa: F821  (injected by Snakemake)
