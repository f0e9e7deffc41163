"""The partition unit of an own table: the dataset's `partition_by`, or one chosen from the file's
rows per day by QuestDB's schema-design guidance (its "Partitioning" table: under 100K rows a
day MONTH or YEAR, 100K to 10M DAY, more HOUR). Of MONTH and YEAR the rule takes the finer one
whose partitions still hold 100K rows or more (the guidance's lower bound for a partition of a
day). NONE is no choice: every table here is WAL, and a WAL table needs a partition.

The decision and the rule it followed are kept in the dataset's manifest, so what a run measured
says how its table was partitioned and why. Light: the standard library only.
"""

from __future__ import annotations

from typing import Any

UNITS = ("HOUR", "DAY", "WEEK", "MONTH", "YEAR")
#: Rows a day from which a partition of a day, then of an hour, is QuestDB's advice.
DAY_FROM, HOUR_FROM = 100_000, 10_000_000
#: Days in a month, for the rows a MONTH partition would hold.
MONTH_DAYS = 30.44
#: What the rule says, in the manifest and in the docs.
RULE = (
    "QuestDB's guidance by rows per day: 10M or more HOUR, 100K or more DAY, fewer MONTH, "
    "or YEAR when a month would hold fewer than 100K rows"
)


def rows_per_day(rows: int, span_s: float) -> float | None:
    """The file's rows per day over the span of its timestamps; None for a span of 0 (one
    instant: no rate)."""
    return rows * 86_400 / span_s if span_s > 0 else None


def by_rate(per_day: float | None) -> str:
    """The unit QuestDB's guidance gives a table of `per_day` rows a day (DAY without a rate)."""
    if per_day is None:
        return "DAY"
    if per_day >= HOUR_FROM:
        return "HOUR"
    if per_day >= DAY_FROM:
        return "DAY"
    return "MONTH" if per_day * MONTH_DAYS >= DAY_FROM else "YEAR"


def choose(configured: str | None, rows: int, span_s: float) -> dict[str, Any]:
    """{"by", "rule", "rows_per_day", "span_days"}: the dataset's unit if it sets one, else the
    guidance's for its rows and time span."""
    per_day = rows_per_day(rows, span_s)
    facts = {
        "rows_per_day": None if per_day is None else round(per_day, 1),
        "span_days": round(span_s / 86_400, 3),
    }
    if configured:
        return {"by": configured, "rule": "datasets[].partition_by", **facts}
    if per_day is None:
        rule = "every row has the same timestamp, so there is no rate: QuestDB's default, DAY"
    else:
        rule = f"{RULE}; here {per_day:,.0f} rows a day over {span_s / 86_400:,.2f} days"
    return {"by": by_rate(per_day), "rule": rule, **facts}
