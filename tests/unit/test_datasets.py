"""The dataset kinds (ingestbench.datasets): the registry and the interface agree, each entry,
manifest, spec and run summary has exactly one kind, and no stage or rule asks which kind it runs
(the kinds' package and their implementations, tsbs/ and own/, are the only places that may)."""

from __future__ import annotations

import inspect
import re

import pytest

from ingestbench.datasets import (
    KINDS,
    PROTOCOLS,
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

#: Every question a kind answers: each protocol's methods, and the attributes a kind sets.
METHODS = sorted(DatasetKind.__abstractmethods__)
ATTRIBUTES = ("name", "checks", "data_rule")


def _attributes(protocol: type) -> set[str]:
    return set(protocol.__dict__.get("__annotations__", {}))


def test_the_protocols_split_the_interface_each_question_asked_by_one_caller():
    assert {p.__name__ for p in PROTOCOLS} == {
        "ClaimingKind",
        "PlanKind",
        "IngestKind",
        "TableKind",
        "ValidationKind",
        "PacedDeliveryKind",
    }
    asked = [name for p in PROTOCOLS for name in sorted(p.__abstractmethods__)]
    assert sorted(asked) == METHODS  # every method in one protocol and one only
    assert sorted(a for p in PROTOCOLS for a in _attributes(p)) == sorted(ATTRIBUTES)
    assert {"run_summary", "table_sources", "source_relation", "frames", "csv_import",
            "formats", "variants", "derived", "rows", "derived_bytes", "why_not_paced",
            "keys_unique", "stated_rows", "one_table"} <= set(METHODS)  # fmt: skip


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda p: p.__name__)
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_every_kind_implements_every_protocol(kind, protocol):
    assert isinstance(kind, protocol) and isinstance(kind, DatasetKind)
    for name in protocol.__abstractmethods__:
        method = getattr(type(kind), name)
        assert not getattr(method, "__isabstractmethod__", False), f"{kind.name} lacks {name}"
        wanted = inspect.signature(getattr(protocol, name)).parameters
        assert list(inspect.signature(method).parameters) == list(wanted), (
            f"{kind.name}.{name} takes other arguments than {protocol.__name__}"
        )
    for name in _attributes(protocol):
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


def test_paced_and_delivery_learn_from_the_kind_what_an_entry_is_and_its_rows():
    assert (
        TSBS_CPU.why_not_paced(CPU_ENTRY) is None and TSBS_CPU.why_not_delivered(CPU_ENTRY) is None
    )
    assert TSBS_IOT.why_not_paced(IOT_ENTRY) == "a TSBS iot dataset"
    assert TSBS_IOT.why_not_delivered(IOT_ENTRY) == "a TSBS iot dataset"
    assert TSBS_CPU.why_not_delivered({**CPU_ENTRY, "dedup": True}) == "a dataset with dedup"
    late = {**CPU_ENTRY, "out_of_order": {"lag": "30s"}}
    assert (
        TSBS_CPU.why_not_paced(late) == "out of order" and TSBS_CPU.why_not_delivered(late) is None
    )
    # paced sends your rows in file order, stamped when due (or with their own times)
    assert OWN.why_not_paced(OWN_ENTRY) is None and OWN.why_not_delivered(OWN_ENTRY) is None
    # rows as the entry states them: TSBS's from its parameters, an own file's only once described
    assert TSBS_CPU.stated_rows(CPU_ENTRY) == 50
    assert TSBS_CPU.stated_rows({"label": "r", "scale": 10, "rows": 41}) == 50  # whole epochs
    assert OWN.stated_rows(OWN_ENTRY) is None
    assert TSBS_CPU.more_rows(CPU_ENTRY, 101) == "raise its epochs to at least 11"
    # DEDUP keeps every row only where no two share their keys: generated rows, not a user's
    assert TSBS_CPU.keys_unique(CPU_MANIFEST) and not OWN.keys_unique(OWN_MANIFEST)


def test_the_one_table_a_client_reads_is_the_kinds(tmp_path):
    one = TSBS_CPU.one_table(CPU_MANIFEST, tmp_path / "cpu.parquet", "loads")
    assert (one.spec.table, one.path, one.rows) == ("loads", tmp_path / "cpu.parquet", 50)
    with pytest.raises(ValueError, match="several tables"):
        TSBS_IOT.one_table(IOT_MANIFEST, tmp_path / "iot.parquet", "loads")
    manifest = {**OWN_MANIFEST, "table": OWN_SPEC.to_dict()}
    one = OWN.one_table(manifest, tmp_path / "ignored.parquet", "loads")
    assert (one.spec.table, str(one.path), one.rows) == ("loads", "x.parquet", 500)


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
