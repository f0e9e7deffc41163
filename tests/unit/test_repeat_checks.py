"""The per-repeat checks of a source: the same from its Parquet and its CSV, capped to its first
rows in file order, and every difference named."""

from __future__ import annotations

import copy

from ingestbench.tsbs.columns import cpu_spec
from ingestbench.validate.repeat_checks import check_query, differences, source_checks


def test_parquet_and_csv_give_the_same_checks(tiny_dataset):
    spec = cpu_spec()
    parquet = source_checks(tiny_dataset["parquet"], spec)
    assert parquet["row_count"] == 2000 and len(parquet["rows_per_key"]) == 40
    assert differences(parquet, source_checks(tiny_dataset["csv"], spec), 1e-9) == []
    first = source_checks(tiny_dataset["parquet"], spec, limit=100)
    assert first["row_count"] == 100 and set(first["rows_per_key"].values()) == {2, 3}
    assert (
        source_checks(tiny_dataset["csv"], spec, limit=100)["rows_per_key"] == first["rows_per_key"]
    )


def test_each_difference_is_named_with_both_values(tiny_dataset):
    spec = cpu_spec()
    expected = source_checks(tiny_dataset["parquet"], spec)
    found = copy.deepcopy(expected)
    found["rows_per_key"]["host_1"] += 1
    found["rows_per_key"]["host_2"] -= 1
    found["fields"]["usage_idle"]["max"] = 101.0
    found["fields"]["usage_user"]["sum"] *= 1 + 1e-12  # within the tolerance
    found["timestamp"]["sum"] += 10
    assert differences(expected, found, 1e-9) == [
        "rows_per_key (host_1: expected 50, found 51, host_2: expected 50, found 49)",
        f"sum:timestamp (expected {expected['timestamp']['sum']}, "
        f"found {expected['timestamp']['sum'] + 10})",
        f"max:usage_idle (expected {expected['fields']['usage_idle']['max']!r}, found 101.0)",
    ]
    query = check_query("cpu", spec, expected)
    assert query.startswith("SELECT hostname, count(), sum(cast(timestamp AS long) - ")
    assert query.endswith(" FROM cpu") and "ksum(usage_user)" in query


def test_an_own_tables_checks_are_the_same_from_its_parquet_and_its_csv(tmp_path):
    """Per column as its kind allows; a prefix is the file's first rows; a change is named."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    from ingestbench.own.dataset import OwnDataset
    from ingestbench.own.manifest import own_manifest
    from ingestbench.own.spec import OwnTableSpec
    from ingestbench.validate.own_checks import own_differences, own_source_checks

    table = pa.table({"ts": pa.array([3, 1, 2, 2], pa.timestamp("us")),
                      "sym": pa.array(["a", None, "b", "a"]).dictionary_encode(),
                      "note": ["x", "y", None, "y"], "qty": pa.array([5, None, 7, 1], pa.int64()),
                      "px": [1.5, float("nan"), None, 2.0]})  # fmt: skip
    pq.write_table(table, tmp_path / "t.parquet")
    pacsv.write_csv(table, tmp_path / "t.csv")
    specs = []
    for ext in ("parquet", "csv"):
        dataset = OwnDataset("t", tmp_path / f"t.{ext}", symbols=("sym",))
        specs.append(OwnTableSpec.from_dict(own_manifest(dataset, tmp_path / "h.json")["table"]))
    parquet, csv = (own_source_checks(s) for s in specs)
    assert parquet["row_count"] == 4 and parquet["columns"]["note"] == {"count": 3, "distinct": 2}
    assert parquet["columns"]["px"] == {"count": 2, "sum": 3.5, "min": 1.5, "max": 2.0}
    assert parquet["columns"]["qty"] == {"count": 3, "sum": 13, "min": 1, "max": 7}

    def same(e, a, exact):
        return e == a if exact else abs(e - a) <= 1e-9 * abs(e)

    assert own_differences(parquet, csv, specs[0], same) == []
    first = own_source_checks(specs[0], limit=2)
    assert first["row_count"] == 2 and first["columns"]["qty"]["sum"] == 5
    assert own_differences(parquet, first, specs[0], same)[:2] == [
        "row_count (expected 4, found 2)", "count:ts (expected 4, found 2)"]  # fmt: skip
