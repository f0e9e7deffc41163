# Helpers shared by all the .smk files — the validated config, datasets and the variant matrix.
# The matrix itself is decided in ingestbench.variants; this file only turns it into file lists.

from pathlib import Path

from ingestbench.jar import default_cache_dir
from ingestbench.tsbs import FORMATS as DATASET_FORMATS
from ingestbench.tsbs import DatasetParams
from ingestbench.variants import parse_variant_name, variants_by_dataset

DATASET_CONFIGS = {DatasetParams.from_config(d).name: d for d in config["datasets"]}
LABEL_TO_DATASET = {d["label"]: name for name, d in DATASET_CONFIGS.items()}
VARIANTS = {
    LABEL_TO_DATASET[label]: variants
    for label, variants in variants_by_dataset(config, list(LABEL_TO_DATASET)).items()
}


def dataset_config(name):
    return DATASET_CONFIGS[name]


def dataset_formats(name):
    """Files the dataset is generated as: Parquet always (validation reads it), and the formats
    its variants read. The ILP text is big (~490 B/row), so only for datasets that send it.
    """
    needed = {"parquet"} | {v.format for v in VARIANTS.get(name, [])}
    return [fmt for fmt in DATASET_FORMATS if fmt in needed]


def variant_config(name):
    return parse_variant_name(name).to_dict()


def run_pairs():
    return [(ds, v.name) for ds, variants in VARIANTS.items() for v in variants]


def run_files():
    return [f"results/runs/{ds}/{v}.json" for ds, v in run_pairs()]


def validation_files():
    return [f"results/validation/{ds}/{v}.json" for ds, v in run_pairs()]


def questdb_jar():
    """The jar the server jobs need: a configured path, the cached download, or none (external)."""
    qdb = config["questdb"]
    if qdb["mode"] == "external":
        return []
    if qdb["jar"]:
        return qdb["jar"]
    cache = (
        Path(qdb["cache_dir"]).expanduser() if qdb["cache_dir"] else default_cache_dir()
    )
    return str(cache / f"questdb-{qdb['version']}.jar")


def charts_files():
    # CHARTS is defined in report.smk, which is included after this file.
    return [
        f"results/plots/{chart}.{ext}" for chart in CHARTS for ext in ("png", "svg")
    ]
