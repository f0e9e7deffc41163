"""The partition unit an own table gets: the dataset's, or QuestDB's advice by its rows per day;
and NONE refused with the reason."""

from __future__ import annotations

import pytest

from ingestbench.config import validate_config
from ingestbench.errors import UserError
from ingestbench.own.partition import by_rate, choose


@pytest.mark.parametrize(
    ("per_day", "unit"),
    [(2e7, "HOUR"), (1e7, "HOUR"), (9.9e6, "DAY"), (1e5, "DAY"), (99_999, "MONTH"),
     (3_286, "MONTH"), (3_284, "YEAR"), (None, "DAY")],
)  # fmt: skip
def test_the_default_unit_follows_rows_per_day(per_day, unit):
    assert by_rate(per_day) == unit


def test_the_decision_records_its_rule():
    chosen = choose(None, 336_776, 365 * 86_400)
    assert chosen["by"] == "YEAR" and chosen["rows_per_day"] == pytest.approx(922.7, abs=0.1)
    assert chosen["rule"].endswith("here 923 rows a day over 365.00 days")
    assert choose("WEEK", 10, 86_400)["rule"] == "datasets[].partition_by"
    assert choose(None, 5, 0)["by"] == "DAY"


def test_none_is_refused_with_its_reason():
    config = {"datasets": [{"label": "x", "path": "x.csv", "partition_by": "NONE"}],
              "variants": [{"method": "dataframe"}]}  # fmt: skip
    with pytest.raises(UserError) as caught:
        validate_config(config)
    assert (
        "'datasets[0].partition_by': 'NONE' is refused: every table here is WAL, and a WAL "
        "table needs a partition; use one of HOUR, DAY, WEEK, MONTH, YEAR"
    ) in str(caught.value)
