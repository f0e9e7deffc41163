"""The delivery experiment's parts that need no server: the paths and their resend rules against
the catalogue, the schema and the docs; the config checks; the plan on own data (which paths are
unsupported, and why); the checker (a real DuckDB) and the matrix's verdicts."""

from __future__ import annotations

import copy
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ingestbench.catalogue import METHODS, delivery_names
from ingestbench.config import load_config
from ingestbench.delivery.check import compare
from ingestbench.delivery.experiment import TABLE, unsupported_rows
from ingestbench.delivery.loaders import loader
from ingestbench.delivery.matrix import (
    DUPLICATES,
    EXACT,
    REPORTED,
    SILENT,
    matrix,
    recommendation,
    verdict,
)
from ingestbench.delivery.paths import FAULTS, all_paths, by_name, path_names
from ingestbench.delivery.settings import DeliverySettings, check
from ingestbench.delivery.source import OWN_DEDUP, DeliverySource, delivery_source, why_unsupported
from ingestbench.delivery.summary import matrix_markdown
from ingestbench.own.dataset import OwnDataset
from ingestbench.own.example import write_example
from ingestbench.own.manifest import write_own_manifest
from ingestbench.schema import load_schema
from ingestbench.tsbs.columns import cpu_spec
from tests.helpers import TESTS

ROOT = TESTS.parent

SCHEMA = load_schema()  # with the enums the catalogue fills in
DELIVERY = SCHEMA["properties"]["delivery"]["properties"]


def test_the_paths_are_the_catalogues_delivery_methods():
    for method in delivery_names():
        assert METHODS[method].delivery_transports and callable(loader(method)), method
    assert {p.method for p in all_paths()} == set(delivery_names())
    for path in all_paths():
        assert path.resend == METHODS[path.method].resend


def test_the_schema_lists_every_path_and_fault():
    assert DELIVERY["paths"]["items"] == {"$ref": "#/$defs/delivery_path"}
    assert SCHEMA["$defs"]["delivery_path"]["enum"] == list(path_names())
    assert DELIVERY["paths"]["default"] == list(path_names())
    assert DELIVERY["faults"]["items"]["enum"] == list(FAULTS)


def test_the_docs_show_each_methods_resend_rule_as_the_catalogue_has_it():
    docs = (ROOT / "docs" / "faults.md").read_text()
    section = docs.split("## Delivery under faults", 1)[1]
    flat = " ".join(section.split())
    for name in delivery_names():
        assert f"`{name}`" in section
        assert " ".join(str(METHODS[name].resend).split()) in flat, name
    for fault in FAULTS:
        assert f"`{fault}`" in section


def test_the_delivery_config_passes_its_checks():
    config = load_config(ROOT / "configs" / "delivery.yaml")
    assert check(config) == []
    settings = DeliverySettings.from_config(config)
    assert settings.paths == path_names() and settings.points == 3


def test_a_config_without_the_section_has_no_delivery():
    config = load_config(ROOT / "config.yaml")
    assert "delivery" not in config and check(config) == []


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (lambda c: c["delivery"].update(pause_short_s=3), "delivery.pause_short_s is 3"),
        (lambda c: c["delivery"].update(pause_long_s=2), "delivery.pause_long_s is 2"),
        (lambda c: c["delivery"].update(batch_rows=50_000), "delivery.batch_rows is 50000"),
        (lambda c: c["delivery"].update(dataset="nope"), "delivery.dataset is 'nope'"),
        (lambda c: c["questdb"].update(mode="external"), "questdb.mode is 'external'"),
        (lambda c: c["datasets"][0].update(dedup=True), "delivery.dataset names 'delivery'"),
    ],
)
def test_each_bad_setting_is_one_sentence_naming_its_key(change, key):
    config = copy.deepcopy(load_config(ROOT / "configs" / "delivery.yaml"))
    change(config)
    problems = check(config)
    assert len(problems) == 1 and problems[0].startswith(key), problems
    assert problems[0].endswith(".")


def test_fault_points_come_from_the_seed():
    config = load_config(ROOT / "configs" / "delivery.yaml")
    s = DeliverySettings.from_config(config)
    points = s.fault_points("dataframe-tcp", "kill")
    assert points == s.fault_points("dataframe-tcp", "kill") and len(points) == 3
    assert all(0.1 <= p <= 0.9 for p in points)
    assert points != s.fault_points("dataframe-tcp", "pause_long")


def _table(rows: list[tuple]) -> pa.Table:
    spec = cpu_spec()
    cols = {t: [f"{t}_{r[0]}" for r in rows] for t in spec.tags}
    cols |= {f: [float(r[1]) for r in rows] for f in spec.fields}
    cols[spec.timestamp] = pa.array([r[0] * 1_000_000 for r in rows], pa.timestamp("us", "UTC"))
    return pa.table(cols)


@pytest.fixture
def source(tmp_path) -> Path:
    path = tmp_path / "source.parquet"
    pq.write_table(_table([(i, i) for i in range(10)]), path)
    return path


def _export(tmp_path: Path, rows: list[tuple]) -> Path:
    path = tmp_path / "export.parquet"
    pq.write_table(_table(rows), path)
    return path


def _row(found, claimed=True, fault="kill", path="p") -> dict:
    return {"path": path, "fault": fault, "source_rows": found.source_rows, "lost": found.lost,
            "duplicated": found.duplicated, "altered": found.altered, "claimed_success": claimed,
            "fault_at_s": 0.5, "load_s": 1.0}  # fmt: skip


def test_a_missing_row_is_lost_and_never_exact(source, tmp_path):
    found = compare(source, _export(tmp_path, [(i, i) for i in range(9)]), cpu_spec())
    assert (found.lost, found.duplicated, found.altered) == (1, 0, 0)
    assert verdict(_row(found)).rank == SILENT
    assert verdict(_row(found, claimed=False)).rank == REPORTED
    assert matrix([_row(found)])["p"]["kill"] == "lost 1 (silent)"


def test_a_missing_row_hidden_by_a_duplicate_is_still_lost(source, tmp_path):
    rows = [(i, i) for i in range(9)] + [(0, 0)]  # the count is right, a row is not there
    found = compare(source, _export(tmp_path, rows), cpu_spec())
    assert (found.lost, found.duplicated, found.table_rows) == (1, 1, 10)
    assert verdict(_row(found)).rank == SILENT


def test_an_altered_row_is_altered_not_lost(source, tmp_path):
    rows = [(i, i) for i in range(9)] + [(9, 99)]
    found = compare(source, _export(tmp_path, rows), cpu_spec())
    assert (found.lost, found.duplicated, found.altered) == (0, 0, 1)


def test_duplicates_are_counted_with_their_multiplicity(source, tmp_path):
    rows = [(i, i) for i in range(10)] + [(3, 3), (3, 3), (4, 4)]
    found = compare(source, _export(tmp_path, rows), cpu_spec())
    assert (found.lost, found.duplicated, found.altered) == (0, 3, 0)
    assert verdict(_row(found)).rank == DUPLICATES
    exact = compare(source, _export(tmp_path, [(i, i) for i in range(10)]), cpu_spec())
    assert verdict(_row(exact)).rank == EXACT


def test_the_cell_is_the_worst_case_and_marks_points_not_reached():
    rows = [
        {"path": "p", "fault": "kill", "source_rows": 10, "lost": 0, "duplicated": 2,
         "altered": 0, "claimed_success": True, "fault_at_s": 0.2},
        {"path": "p", "fault": "kill", "source_rows": 10, "lost": 3, "duplicated": 0,
         "altered": 0, "claimed_success": False, "fault_at_s": 0.4},
        {"path": "p", "fault": "kill", "source_rows": 10, "lost": 0, "duplicated": 0,
         "altered": 0, "claimed_success": True, "fault_at_s": None},
        {"path": "p", "fault": "cut_response", "not_applicable": "ILP/TCP answers nothing"},
        {"path": "p", "fault": "pause_long", "case_error": "boom"},
    ]  # fmt: skip
    cells = matrix(rows)["p"]
    assert cells["kill"] == "lost 3 (reported) (1 of 3 points not reached)"
    assert cells["cut_response"] == "n/a (ILP/TCP answers nothing)"
    assert cells["pause_long"] == "no result"


def test_the_recommendation_skips_paths_that_lost_rows_silently():
    def rows(path, rate, lost, dup=0):
        common = {"path": path, "source_rows": rate, "altered": 0, "claimed_success": True}
        return [{**common, "fault": "none", "lost": 0, "duplicated": 0, "load_s": 1.0},
                {**common, "fault": "cut_response", "lost": lost, "duplicated": dup,
                 "fault_at_s": 0.1}]  # fmt: skip

    line = recommendation([*rows("fast-tcp", 900, 5), *rows("slow-http", 100, 0, dup=7)])
    assert "`slow-http`" in line and "fast-tcp" not in line
    assert "DEDUP" in line and "cut_response" in line


def _own_config(tmp_path: Path, **entry) -> dict:
    config = copy.deepcopy(load_config(ROOT / "configs" / "delivery.yaml"))
    config["datasets"] = [{"label": "mine", "path": str(tmp_path / "t.parquet"), **entry}]
    config["delivery"]["dataset"] = "mine"
    return config


def test_an_own_dataset_passes_the_checks_and_an_iot_one_does_not(tmp_path):
    assert check(_own_config(tmp_path)) == []
    config = copy.deepcopy(load_config(ROOT / "configs" / "delivery.yaml"))
    config["datasets"][0]["use_case"] = "iot"
    problems = check(config)
    assert len(problems) == 1 and "which is a TSBS iot dataset" in problems[0], problems


def test_the_delivery_check_asks_the_kind_for_the_rows_it_knows(tmp_path, monkeypatch):
    from ingestbench.datasets.own import OWN

    config = _own_config(tmp_path)
    assert check(config) == []  # an own file's rows: not known before it is described
    monkeypatch.setattr(OWN, "stated_rows", lambda entry: 100)
    (problem,) = check(config)
    assert problem.startswith("delivery.batch_rows is") and "dataset's 100 rows" in problem


def _own_source(tmp_path: Path, suffix: str, **entry) -> DeliverySource:
    """The example trades table as the workflow describes it, as the delivery loads take it."""
    path = tmp_path / f"trades.{suffix}"
    write_example(path, 2_000)
    dataset = OwnDataset.from_config({"label": f"t{suffix}", "path": str(path), **entry})
    manifest = write_own_manifest(dataset, tmp_path / f"{dataset.name}.manifest.json")
    return delivery_source(manifest, path, TABLE)


def test_on_own_data_dedup_and_what_a_method_cannot_load_are_unsupported(tmp_path):
    parquet = _own_source(tmp_path, "parquet")
    assert parquet.spec.table == TABLE and parquet.spec.tags == ("venue", "instrument", "side")
    assert not parquet.keys_unique
    why = {p.name: why_unsupported(p, parquet) for p in all_paths()}
    assert {n for n, w in why.items() if w is not None} == {p.name for p in all_paths() if p.dedup}
    assert {w for w in why.values() if w is not None} == {OWN_DEDUP}
    # A CSV file: server_parquet hands the server a Parquet file, so it cannot load this one.
    csv = _own_source(tmp_path, "csv", csv={"delimiter": ";"})
    why = {p.name: why_unsupported(p, csv) for p in all_paths() if not p.dedup}
    assert why.pop("server_parquet-http") == "the file is csv and this variant reads parquet"
    assert set(why.values()) == {None}


def test_an_unsupported_path_is_a_cell_and_a_reason_never_a_verdict():
    settings = DeliverySettings.from_config(load_config(ROOT / "configs" / "delivery.yaml"))
    rows = unsupported_rows(by_name("dataframe-http-dedup"), settings, OWN_DEDUP)
    assert [r["fault"] for r in rows] == list(settings.faults)
    assert all(verdict(r) is None for r in rows)
    assert set(matrix(rows)["dataframe-http-dedup"].values()) == {"unsupported"}
    text = matrix_markdown(rows)
    assert f"- `dataframe-http-dedup` is unsupported: {OWN_DEDUP}." in text


def test_on_own_data_the_recommendation_does_not_offer_the_unsupported_dedup():
    common = {"path": "p-http", "source_rows": 10, "altered": 0, "claimed_success": True}
    rows = [{**common, "fault": "none", "lost": 0, "duplicated": 0, "load_s": 1.0},
            {**common, "fault": "cut_response", "lost": 0, "duplicated": 2, "fault_at_s": 0.1},
            {"path": "q-http-dedup", "fault": "none", "unsupported": OWN_DEDUP}]  # fmt: skip
    line = recommendation(rows)
    assert "`p-http`" in line and "DEDUP UPSERT KEYS for exactly-once" not in line
    assert "DEDUP cannot undo here" in line and OWN_DEDUP in line
