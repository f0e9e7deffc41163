"""The QuestDB pattern found for a CSV's time column (what the server's imports are told)."""

from __future__ import annotations

import re

import pytest

from ingestbench.own.csv_times import detect, pattern_regex


@pytest.mark.parametrize(
    ("values", "pattern"),
    [(["2024-03-01 10:00:00.000000Z"], "yyyy-MM-dd HH:mm:ss.N+Z"),
     (["2024-03-01T10:00:00.123456789"], "yyyy-MM-ddTHH:mm:ss.N+"),
     (["2024-03-01 10:00:00+00", "2024-03-01 10:00:01+05:30"], "yyyy-MM-dd HH:mm:ssZ"),
     (["2024-03-01 10:00:00.5+0000", "2024-03-01 10:00:00.123+00:00"],
      "yyyy-MM-dd HH:mm:ss.N+Z"),
     (["2024-03-01 10:00", None, ""], "yyyy-MM-dd HH:mm")],
)  # fmt: skip
def test_one_shape_is_one_pattern_and_its_regex_reads_the_values(values, pattern):
    found = detect("ts", values)
    assert (found.pattern, found.problem) == (pattern, None)
    assert all(re.fullmatch(pattern_regex(pattern), v) for v in values if v)


def test_with_and_without_a_fraction_is_no_pattern():
    found = detect("ts", ["2024-03-01 10:00:00", "2024-03-01 10:00:00.5"])
    assert found.pattern is None
    assert "times with a fraction and times without one" in found.problem


@pytest.mark.parametrize(
    ("values", "words"),
    [(["2024-03-01 10:00:00", "2024-03-01T10:00:00"], "in more than one shape"),
     (["01/03/2024 10:00"], "set datasets[].csv.timestamp_format")],
)  # fmt: skip
def test_other_mixes_and_other_formats_say_why(values, words):
    found = detect("ts", values)
    assert found.pattern is None and words in found.problem
