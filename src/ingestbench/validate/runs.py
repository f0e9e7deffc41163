"""One run checked: the aggregates check by check, then the rows; the validation result."""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

from ingestbench.results.records import SCHEMA_VERSION, RunFile, run_from_dict
from ingestbench.tsbs.columns import FIELDS, TAGS, TIMESTAMP
from ingestbench.validate.aggregates import expected_aggregates, unwrap
from ingestbench.validate.rows import row_level_comparison

log = logging.getLogger(__name__)


def _check(name: str, passed: bool, expected: Any, actual: Any, **detail: Any) -> dict[str, Any]:
    out = {"name": name, "passed": bool(passed), "expected": expected, "actual": actual}
    if detail:
        out["differences"] = detail
    return out


def _close(expected: Any, actual: Any, rel_tolerance: float) -> bool:
    if expected is None or actual is None:
        return expected is None and actual is None
    return math.isclose(float(expected), float(actual), rel_tol=rel_tolerance, abs_tol=0.0)


def _aggregate_checks(
    exp: dict[str, Any], act: dict[str, Any], rel_tolerance: float, max_differences: int
) -> list[dict[str, Any]]:
    checks = [_check("row_count", exp["row_count"] == act["row_count"], exp["row_count"],
                     act["row_count"])]  # fmt: skip
    e_hosts, a_hosts = exp["rows_per_host"], act["rows_per_host"]
    differing = sorted(h for h in set(e_hosts) | set(a_hosts) if e_hosts.get(h) != a_hosts.get(h))
    checks.append(
        _check(
            "rows_per_host",
            not differing,
            {"hosts": len(e_hosts), "rows": sum(e_hosts.values())},
            {"hosts": len(a_hosts), "rows": sum(a_hosts.values())},
            **(
                {"hosts": len(differing),
                 "first": [{"hostname": h, "expected": e_hosts.get(h), "actual": a_hosts.get(h)}
                           for h in differing[:max_differences]]}
                if differing else {}
            ),
        )
    )  # fmt: skip
    for key in ("first_ts", "last_ts"):
        checks.append(_check(key, exp[key] == act[key], exp[key], act[key]))
    for f in FIELDS:
        e, a = exp["fields"][f], act["fields"][f]
        checks.append(_check(f"field_sum:{f}", _close(e["sum"], a["sum"], rel_tolerance),
                             e["sum"], a["sum"]))  # fmt: skip
        for stat in ("min", "max"):
            same = e[stat] == a[stat] or (e[stat] is not None and a[stat] is not None
                                          and float(e[stat]) == float(a[stat]))  # fmt: skip
            checks.append(_check(f"field_{stat}:{f}", same, e[stat], a[stat]))
    for t in TAGS:
        e, a = exp["tags"][t], act["tags"][t]
        same = e["count"] == a["count"] and e["sha256"] == a["sha256"]
        detail = {}
        if not same and "values" in e and "values" in a:
            detail = {
                "missing_in_questdb": [v for v in e["values"] if v not in a["values"]],
                "unexpected_in_questdb": [v for v in a["values"] if v not in e["values"]],
            }
        shown_e = {k: e[k] for k in ("count", "sha256", "values") if k in e}
        shown_a = {k: a[k] for k in ("count", "sha256", "values") if k in a}
        checks.append(_check(f"tag_distinct:{t}", same, shown_e, shown_a, **detail))
    return checks


def validate_run(
    run: RunFile | dict[str, Any],
    dataset_parquet: Path,
    expected: dict[str, Any],
    actual: dict[str, Any],
    export_parquet: Path,
    rel_tolerance: float = 1e-9,
    max_differences: int = 5,
    limits: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The validation result of one run (results.records.Validation as a dict); `passed`
    is False if any check fails.

    `expected` holds the aggregates of the whole dataset; a run capped to its first N rows (N =
    run.rows) is checked against the aggregates and rows of that prefix instead.
    """
    if isinstance(run, dict):
        run = run_from_dict(run)
    expected, actual = unwrap(expected), unwrap(actual)
    dataset_name = run.dataset.name
    run_rows = run.rows
    limit = None
    if run_rows is not None and int(run_rows) != expected["row_count"]:
        limit = int(run_rows)
        log.info("run capped to %d rows: recomputing the expected aggregates of that prefix", limit)
        expected = expected_aggregates(dataset_parquet, limit=limit, limits=limits)
    checks = []
    if limit is not None and expected["row_count"] != limit:
        checks.append(_check("run_rows", False, expected["row_count"], limit))
    checks += _aggregate_checks(expected, actual, rel_tolerance, max_differences)
    rows = row_level_comparison(dataset_parquet, export_parquet, limit, max_differences, limits)
    missing_cols = rows["columns_missing_in_export"]
    if missing_cols:
        checks.append(_check("export_columns", False, [*TAGS, *FIELDS, TIMESTAMP],
                             list(rows.get("columns_unexpected_in_export", [])),
                             missing=missing_cols))  # fmt: skip
        checks.append(_check("row_level", False, {"missing": 0, "unexpected": 0},
                             "not compared: export lacks columns"))  # fmt: skip
        differing = {"missing": None, "unexpected": None}
        first = {"missing_in_questdb": [], "unexpected_in_questdb": []}
    else:
        differing = {"missing": rows["missing"], "unexpected": rows["unexpected"]}
        checks.append(
            _check(
                "row_level",
                rows["missing"] == 0 and rows["unexpected"] == 0,
                {"rows": rows["source_rows"], "missing": 0, "unexpected": 0},
                {"rows": rows["export_rows"], **differing},
            )
        )
        first = {"missing_in_questdb": rows["first_missing"],
                 "unexpected_in_questdb": rows["first_unexpected"]}  # fmt: skip
    passed = all(c["passed"] for c in checks)
    result = {
        "schema_version": SCHEMA_VERSION,
        "variant": run.variant.to_dict(),
        "dataset": dataset_name,
        "passed": passed,
        "source_rows": "all" if limit is None else f"first {limit} in file order",
        "export_timestamp_type": rows.get("export_timestamp_type"),
        "rel_tolerance": rel_tolerance,
        "failed_checks": [c["name"] for c in checks if not c["passed"]],
        "checks": checks,
        "first_differences": first,
        "differing_rows": differing,
    }
    return result
