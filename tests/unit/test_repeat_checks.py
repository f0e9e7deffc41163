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
