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
from ingestbench.delivery.history import overlapped
from ingestbench.delivery.loaders import Batch, loader
from ingestbench.delivery.matrix import (
    ALTERED,
    DUPLICATES,
    EXACT,
    LOST_ACKNOWLEDGED,
    LOST_UNKNOWN,
    NOT_MEASURED,
    REPORTED,
    cells,
    matrix,
    position,
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
        rule = METHODS[path.method].resume if path.resume else METHODS[path.method].resend
        assert path.resend == rule and rule
        if path.resume:
            assert callable(loader(path.method, resume=True))


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
        if METHODS[name].resume:
            assert " ".join(str(METHODS[name].resume).split()) in flat, name
    for fault in FAULTS:
        assert f"`{fault}`" in section


@pytest.mark.parametrize("name", ["delivery.yaml", "delivery-full.yaml"])
def test_the_delivery_configs_pass_their_checks(name):
    config = load_config(ROOT / "configs" / name)
    assert check(config) == []
    settings = DeliverySettings.from_config(config)
    assert settings.paths == path_names() and settings.points == 3
    assert settings.max_points >= settings.points


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


def test_fault_times_come_from_the_seed_over_the_window():
    config = load_config(ROOT / "configs" / "delivery.yaml")
    s = DeliverySettings.from_config(config)
    times = s.fault_times("dataframe-tcp", "kill", 2.0)
    assert times == s.fault_times("dataframe-tcp", "kill", 2.0) and len(times) == s.max_points
    assert all(0 <= t <= 2.0 for t in times) and len(set(times)) == len(times)
    assert times != s.fault_times("dataframe-tcp", "pause_long", 2.0)


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


def _row(found, errors=0, fault="kill", path="p", overlapped=True) -> dict:
    return {"path": path, "fault": fault, "source_rows": found.source_rows, "lost": found.lost,
            "lost_acknowledged": found.lost_acknowledged, "lost_unknown": found.lost_unknown,
            "lost_reported": found.lost_reported, "duplicated": found.duplicated,
            "altered": found.altered, "errors_seen": errors, "overlapped": overlapped,
            "fault_at_s": 0.5, "load_s": 1.0}  # fmt: skip


#: Two batches of five rows: the first acknowledged, the second's fate unknown.
BATCHES = [(0, 5, "ok"), (5, 5, "unknown")]


def test_a_missing_row_is_lost_by_what_its_batch_was_told(source, tmp_path):
    export = _export(tmp_path, [(i, i) for i in range(10) if i not in (2, 7)])
    found = compare(source, export, cpu_spec(), BATCHES)
    assert (found.lost, found.duplicated, found.altered) == (2, 0, 0)
    assert (found.lost_acknowledged, found.lost_unknown, found.lost_reported) == (1, 1, 0)
    assert verdict(_row(found)).rank == LOST_ACKNOWLEDGED
    assert matrix([_row(found)])["p"]["kill"] == "lost 1 acknowledged (silent)"
    assert matrix([_row(found, errors=1)])["p"]["kill"] == "lost 1 acknowledged"
    # A resend of the second batch that failed: its rows' loss was reported to the caller.
    resent = compare(source, export, cpu_spec(), [*BATCHES, (5, 5, "fail")])
    assert (resent.lost_acknowledged, resent.lost_unknown, resent.lost_reported) == (1, 0, 1)
    # Rows of no batch: never sent after the load gave up.
    unsent = compare(source, export, cpu_spec(), [(0, 5, "unknown")])
    assert (unsent.lost_unknown, unsent.lost_reported) == (1, 1)
    assert verdict(_row(unsent, errors=1)).rank == LOST_UNKNOWN


def test_a_missing_row_hidden_by_a_duplicate_is_still_lost(source, tmp_path):
    rows = [(i, i) for i in range(9)] + [(0, 0)]  # the count is right, a row is not there
    found = compare(source, _export(tmp_path, rows), cpu_spec(), BATCHES)
    assert (found.lost, found.duplicated, found.table_rows) == (1, 1, 10)
    assert found.lost_unknown == 1  # row 9, of the second batch
    assert verdict(_row(found)).rank == LOST_UNKNOWN


def test_an_altered_row_is_altered_not_lost(source, tmp_path):
    rows = [(i, i) for i in range(9)] + [(9, 99)]
    found = compare(source, _export(tmp_path, rows), cpu_spec(), BATCHES)
    assert (found.lost, found.duplicated, found.altered) == (0, 0, 1)
    assert found.lost_unknown == 0  # the altered row stands for the missing one
    assert verdict(_row(found)).rank == ALTERED


def test_duplicates_are_counted_with_their_multiplicity(source, tmp_path):
    rows = [(i, i) for i in range(10)] + [(3, 3), (3, 3), (4, 4)]
    found = compare(source, _export(tmp_path, rows), cpu_spec())
    assert (found.lost, found.duplicated, found.altered) == (0, 3, 0)
    assert verdict(_row(found)).rank == DUPLICATES
    exact = compare(source, _export(tmp_path, [(i, i) for i in range(10)]), cpu_spec())
    assert verdict(_row(exact)).rank == EXACT


def test_the_cell_is_the_worst_measured_case_and_counts_points_that_overlapped():
    common = {"path": "p", "source_rows": 10, "altered": 0, "errors_seen": 1}
    rows = [
        {**common, "fault": "kill", "duplicated": 2, "overlapped": True},
        {**common, "fault": "kill", "lost_reported": 3, "duplicated": 0, "overlapped": True},
        {**common, "fault": "kill", "duplicated": 0, "overlapped": False},
        {**common, "fault": "pause_short", "duplicated": 0, "overlapped": False},
        {"path": "p", "fault": "cut_response", "not_applicable": "ILP/TCP answers nothing"},
        {"path": "p", "fault": "pause_long", "case_error": "boom"},
    ]  # fmt: skip
    cells = matrix(rows)["p"]
    assert cells["kill"] == "lost 3 reported (2 of 3 points overlapped a request)"
    assert cells["pause_short"].startswith("not measured")  # never `exact`
    assert verdict(rows[3]).rank == NOT_MEASURED
    assert cells["cut_response"] == "n/a (ILP/TCP answers nothing)"
    assert cells["pause_long"] == "no result"


def test_the_ranks_put_broken_promises_and_corruption_worst():
    assert LOST_ACKNOWLEDGED < LOST_UNKNOWN < REPORTED < DUPLICATES < EXACT
    assert ALTERED < LOST_UNKNOWN


def test_the_recommendation_skips_unreported_losses_and_cells_not_measured():
    def rows(path, rate, lost, dup=0, overlapped=True):
        common = {"path": path, "source_rows": rate, "altered": 0, "errors_seen": 1}
        return [{**common, "fault": "none", "duplicated": 0, "load_s": 1.0},
                {**common, "fault": "cut_response", "lost_unknown": lost, "duplicated": dup,
                 "overlapped": overlapped}]  # fmt: skip

    line = recommendation([*rows("fast-tcp", 900, 5), *rows("slow-http", 100, 0, dup=7)])
    assert "`slow-http`" in line and "fast-tcp" not in line
    assert "DEDUP" in line and "cut_response" in line
    # A path whose only fault case overlapped nothing is judged on its control alone.
    unmeasured = recommendation([*rows("fast-tcp", 900, 5, overlapped=False),
                                 *rows("slow-http", 100, 0, dup=7)])  # fmt: skip
    assert "`fast-tcp`" in unmeasured
    assert unmeasured.endswith("It was not measured under cut_response (too few fault points "
                               "overlapped a request).")  # fmt: skip


def test_an_exact_cell_needs_the_distinct_positions_its_run_wanted():
    """One case shows a loss; too few positions cannot show that none happens."""
    common = {"path": "p", "source_rows": 10, "altered": 0, "errors_seen": 0, "duplicated": 0,
              "overlapped": True, "points_wanted": 3}  # fmt: skip
    two = [{**common, "fault": "kill", "fault_at_s": at} for at in (0.5, 0.509, 0.9)]
    cell = cells(two)["p"]["kill"]
    assert cell["text"] == "not measured (2 of 3 points overlapped a request, 3 wanted)"
    assert cell["class"] == "not measured"
    three = [*two, {**common, "fault": "kill", "fault_at_s": 1.2}]
    assert cells(three)["p"]["kill"]["text"] == "exact (3 of 4 points overlapped a request)"
    # one slot per hundredth, the experiment's and the matrix's alike (0.065 is not 0.07)
    assert [position(at) for at in (0.065, 0.068, 0.07, 0.071)] == [6, 6, 7, 7]
    lost = [{**common, "fault": "kill", "fault_at_s": 0.5, "lost_unknown": 4}]
    assert cells(lost)["p"]["kill"]["text"] == (
        "lost 4 unknown (silent) (1 of 1 points overlapped a request, 3 wanted)"
    )


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
    common = {"path": "p-http", "source_rows": 10, "altered": 0, "errors_seen": 1}
    rows = [{**common, "fault": "none", "lost": 0, "duplicated": 0, "load_s": 1.0},
            {**common, "fault": "cut_response", "duplicated": 2, "overlapped": True},
            {"path": "q-http-dedup", "fault": "none", "unsupported": OWN_DEDUP}]  # fmt: skip
    line = recommendation(rows)
    assert "`p-http`" in line and "DEDUP UPSERT KEYS for exactly-once" not in line
    assert "DEDUP cannot undo here" in line and OWN_DEDUP in line


def _batch(*attempts) -> Batch:
    return Batch(0, 10, "ok", [(start, end, None) for start, end in attempts])


def test_a_fault_overlaps_a_request_only_as_the_attempts_times_say():
    batches = [_batch((1.0, 2.0)), _batch((3.0, 4.0))]
    assert overlapped("kill", 1.5, None, batches, True, None)  # inside an attempt
    assert not overlapped("kill", 2.5, None, batches, True, None)  # between two
    assert overlapped("pause_short", 2.5, 3.5, batches, True, None)  # the pause meets one
    assert not overlapped("pause_long", 4.5, 9.0, batches, True, None)  # after the load
    assert not overlapped("cut_stream", None, None, batches, True, None)  # never cut
    assert overlapped("cut_response", 2.5, None, batches, True, None)  # it did cut
    # ILP/TCP: from the first write until the table showed every row.
    assert overlapped("kill", 4.5, None, batches, False, 5.0)
    assert not overlapped("kill", 5.5, None, batches, False, 5.0)
    assert overlapped("kill", 9.0, None, batches, False, None)  # never all visible
