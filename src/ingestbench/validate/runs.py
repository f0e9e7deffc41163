"""One run checked: the aggregates check by check, then the rows; the validation result."""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

from ingestbench.datasets import of_run
from ingestbench.errors import UserError
from ingestbench.results.records import SCHEMA_VERSION, RunFile, run_from_dict
from ingestbench.tables.spec import TableSpec
from ingestbench.validate.aggregates import expected_aggregates, numeric_fields
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
    exp: dict[str, Any],
    act: dict[str, Any],
    rel_tolerance: float,
    max_differences: int,
    spec: TableSpec,
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
    for f in numeric_fields(spec):
        e, a = exp["fields"][f], act["fields"][f]
        checks.append(_check(f"field_sum:{f}", _close(e["sum"], a["sum"], rel_tolerance),
                             e["sum"], a["sum"]))  # fmt: skip
        for stat in ("min", "max"):
            same = e[stat] == a[stat] or (e[stat] is not None and a[stat] is not None
                                          and float(e[stat]) == float(a[stat]))  # fmt: skip
            checks.append(_check(f"field_{stat}:{f}", same, e[stat], a[stat]))
    for t in spec.tags:
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

    `expected` and `actual` hold the aggregates of each table (keyed by table); each table is
    checked against the rows the run sent to it (its `table_rows`): a table capped to its first
    N rows against the aggregates and rows of that prefix. In a dataset of several tables (iot)
    each check is named after its table ("readings:row_count").
    """
    if isinstance(run, dict):
        run = run_from_dict(run)
    extra = run.dataset.extra
    described = {"name": run.dataset.name, **extra}  # the run summary as its kind wrote it
    source_tables = of_run(described).source_tables(Path(dataset_parquet), extra.get("table"))
    sent = run.table_rows
    if sent is None:
        raise UserError(f"the run file of {run.variant.name} on {run.dataset.name} lists no "
                        f"table_rows (it predates them): rerun its ingestion.")  # fmt: skip
    several = len(sent) > 1  # each check then names its table ("readings:row_count")
    tables = [(spec, f"{spec.table}:" if several else "", parquet, expected["tables"][spec.table],
               actual["tables"][spec.table], Path(export_parquet) / spec.table, sent[spec.table])
              for spec, parquet in source_tables]  # fmt: skip
    checks: list[dict[str, Any]] = []
    first = {"missing_in_questdb": [], "unexpected_in_questdb": []}
    differing: dict[str, Any] = {"missing": 0, "unexpected": 0}
    limited, timestamp_types = [], {}
    for spec, prefix, parquet, exp, act, export, rows in tables:
        table_checks, table_first, table_differing, limit, ts_type = _table_checks(
            spec, parquet, exp, act, export, rows, rel_tolerance, max_differences, limits
        )
        checks += [{**c, "name": prefix + c["name"]} for c in table_checks]
        for key in first:
            first[key] += [{**r, **({"table": spec.table} if prefix else {})}
                           for r in table_first[key]]  # fmt: skip
        for key in differing:
            value = table_differing[key]
            differing[key] = None if value is None or differing[key] is None else (
                differing[key] + value)  # fmt: skip
        limited.append(limit)
        timestamp_types[spec.table] = ts_type
    passed = all(c["passed"] for c in checks)
    capped = [n for n in limited if n is not None]
    return {
        "schema_version": SCHEMA_VERSION,
        "variant": run.variant.to_dict(),
        "dataset": run.dataset.name,
        "passed": passed,
        "source_rows": "all"
        if not capped
        else f"first {min(capped)} in file order" + (" of each table" if several else ""),
        "export_timestamp_type": next(iter(timestamp_types.values())),
        "rel_tolerance": rel_tolerance,
        "failed_checks": [c["name"] for c in checks if not c["passed"]],
        "checks": checks,
        "first_differences": first,
        "differing_rows": differing,
    }


def _table_checks(
    spec: TableSpec,
    parquet: Path,
    expected: dict[str, Any],
    actual: dict[str, Any],
    export: Path,
    run_rows: int | None,
    rel_tolerance: float,
    max_differences: int,
    limits: dict[str, Any] | None,
) -> tuple[list[dict[str, Any]], dict[str, list], dict[str, Any], int | None, str | None]:
    """One table's checks: (checks, first differing rows, differing counts, the row limit
    of a capped run or None, the export's timestamp type)."""
    limit = None
    if run_rows is not None and int(run_rows) != expected["row_count"]:
        limit = int(run_rows)
        log.info("%s: run capped to %d rows: recomputing the expected aggregates of that prefix",
                 spec.table, limit)  # fmt: skip
        expected = expected_aggregates(parquet, limit=limit, limits=limits, spec=spec)
    checks = []
    if limit is not None and expected["row_count"] != limit:
        checks.append(_check("run_rows", False, expected["row_count"], limit))
    checks += _aggregate_checks(expected, actual, rel_tolerance, max_differences, spec)
    rows = row_level_comparison(parquet, export, limit, max_differences, limits, spec=spec)
    missing_cols = rows["columns_missing_in_export"]
    if missing_cols:
        checks.append(_check("export_columns", False, list(spec.columns),
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
    return checks, first, differing, limit, rows.get("export_timestamp_type")
