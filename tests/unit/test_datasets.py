"""The dataset kinds (ingestbench.datasets): the registry and the interface agree, each entry,
manifest, spec and run summary has exactly one kind, and no stage or rule asks which kind it runs
(the kinds' package and their implementations, tsbs/ and own/, are the only places that may)."""

from __future__ import annotations

import inspect
import re

import pytest

from ingestbench.datasets import (
    KINDS,
    DatasetKind,
    of_entry,
    of_manifest,
    of_run,
    of_spec,
)
from ingestbench.datasets.own import OWN
from ingestbench.datasets.tsbs import TSBS_CPU, TSBS_IOT
from ingestbench.own.dataset import OwnDataError, OwnDataset
from ingestbench.own.spec import OwnSource, OwnTableSpec
from ingestbench.tsbs.columns import READINGS, cpu_spec
from ingestbench.validate.repeat_checks import FAMILIES
from tests.helpers import REPO

#: The interface: every abstract method, and the attributes each kind sets.
METHODS = sorted(DatasetKind.__abstractmethods__)
ATTRIBUTES = ("name", "checks", "data_rule")


def test_the_interface_is_what_a_kind_answers():
    assert {"run_summary", "table_sources", "source_relation", "frames", "csv_import",
            "formats", "variants", "derived", "rows", "derived_bytes"} <= set(METHODS)  # fmt: skip


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_every_kind_implements_every_method_of_the_interface(kind):
    assert isinstance(kind, DatasetKind)
    for name in METHODS:
        method = getattr(type(kind), name)
        assert not getattr(method, "__isabstractmethod__", False), f"{kind.name} lacks {name}"
        wanted = inspect.signature(getattr(DatasetKind, name)).parameters
        assert list(inspect.signature(method).parameters) == list(wanted), (
            f"{kind.name}.{name} takes other arguments than the interface"
        )
    for name in ATTRIBUTES:
        assert isinstance(getattr(kind, name, None), str), f"{kind.name} does not set {name}"


def test_the_registry_names_each_kind_once_and_every_name_it_uses_exists():
    assert len({k.name for k in KINDS}) == len(KINDS)
    data_rules = (REPO / "rules" / "data.smk").read_text()
    for kind in KINDS:
        assert kind.checks in FAMILIES, f"{kind.name}'s check family {kind.checks!r}"
        assert f'datasets_made_by("{kind.data_rule}")' in data_rules, kind.data_rule


CPU_ENTRY = {"label": "main", "scale": 10, "epochs": 5}
IOT_ENTRY = {"label": "trucks", "scale": 10, "epochs": 5, "use_case": "iot"}
OWN_ENTRY = {"label": "mine", "path": "data/mine.parquet"}
CPU_MANIFEST = {"name": "cpu-s10-e5-seed42", "rows": 50, "params": {
    "scale": 10, "epochs": 5, "seed": 42, "field_type": "double"}}  # fmt: skip
IOT_MANIFEST = {"name": "iot-s10-e5-seed42", "rows": 90, "params": {
    "scale": 10, "epochs": 5, "seed": 42, "field_type": "double", "use_case": "iot"}}  # fmt: skip
OWN_MANIFEST = {"name": "own-mine", "rows": 500, "label": "mine", "columns": 4, "bytes": 9_000,
                "sha256": "0" * 64, "table": {"table": "mine"}, "own": True}  # fmt: skip
OWN_SPEC = OwnTableSpec("mine", (), ("v",), ("double",), source=OwnSource("x.parquet", "parquet"))


@pytest.mark.parametrize(
    ("entry", "manifest", "spec", "kind"),
    [(CPU_ENTRY, CPU_MANIFEST, cpu_spec(), TSBS_CPU),
     (IOT_ENTRY, IOT_MANIFEST, READINGS, TSBS_IOT),
     (OWN_ENTRY, OWN_MANIFEST, OWN_SPEC, OWN)],
    ids=["cpu", "iot", "own"],
)  # fmt: skip
def test_each_entry_manifest_and_run_has_exactly_one_kind(entry, manifest, spec, kind):
    assert [k for k in KINDS if k.claims_entry(entry)] == [kind]
    assert of_entry(entry) is kind and of_manifest(manifest) is kind
    assert [k for k in KINDS if k.claims_manifest(manifest)] == [kind]
    # a run file names its dataset by the kind's run summary, which finds the kind again
    assert of_run(kind.run_summary(manifest)) is kind
    # a table's answers are its shape's: every TSBS table, cpu's or iot's, is read alike
    assert of_spec(spec).checks == kind.checks


def test_an_own_entry_takes_its_defaults_from_the_schema_and_is_checked_by_it():
    dataset = OwnDataset.from_config({"label": "mine", "path": "data/m.tsv"})
    assert dataset.unsupported_columns == "refuse"  # the schema's default
    assert dataset.csv.null_values == ("",) and dataset.csv.delimiter == "\t"
    wanted = r"unsupported_columns.*'drop' is not one of refuse, skip; set datasets\[\]\."
    with pytest.raises(OwnDataError, match=wanted):
        OwnDataset.from_config({**OWN_ENTRY, "unsupported_columns": "drop"})


#: What asks "is this own data?" or "which use case?": allowed only in the kinds.
ASKS_THE_KIND = re.compile(
    r"is_own|OWN_DATASETS|own_data_path|use_case ==|use_case !=|get\(\"own\"\)"
)
KINDS_HOME = ("src/ingestbench/datasets/",)


def test_no_stage_or_rule_branches_on_the_dataset_kind():
    files = [*(REPO / "src").rglob("*.py"), *(REPO / "rules").glob("*.smk"),
             REPO / "Snakefile", *(REPO / "scripts").glob("*.py")]  # fmt: skip
    asking = [
        f"{path.relative_to(REPO)}:{n}"
        for path in files
        if not str(path.relative_to(REPO)).startswith(KINDS_HOME)
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if ASKS_THE_KIND.search(line)
    ]
    assert not asking, f"ask the dataset's kind (ingestbench.datasets) instead: {asking}"
