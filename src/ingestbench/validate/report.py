"""The report of differences: one sentence for the terminal, details for the log, the file."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from ingestbench.columnar.duckdb_sql import duckdb_limits
from ingestbench.errors import UserError
from ingestbench.results.records import SCHEMA_VERSION, read_run, write_validation
from ingestbench.server.versions import label_of
from ingestbench.storage.files import load_json
from ingestbench.validate.runs import validate_run

log = logging.getLogger(__name__)


class ValidationFailed(UserError):
    """An ingestion did not land what the source holds (the message names variant and check)."""


def failure_message(
    result: dict[str, Any],
    log_path: Path | str | None = None,
    hint: bool = True,
    server: str | None = None,
) -> str:
    """One sentence naming the variant, the server it ran on (its label: version and settings
    set; server.versions) and the first failed check."""
    variant = (result.get("variant") or {}).get("name", "?")
    on = f" on QuestDB {server}" if server else ""
    failed = [c for c in result["checks"] if not c["passed"]]
    first = failed[0]
    more = f" and {len(failed) - 1} more" if len(failed) > 1 else ""
    where = f"; the full report is in {log_path}" if log_path else ""
    return (
        f"validation of variant {variant} on dataset {result.get('dataset')}{on} failed check "
        f"{first['name']} (expected {_short(first['expected'])}, QuestDB has "
        f"{_short(first['actual'])}){more}{where}"
        + ("; set validation.on_failure: report in the config to record failures without "
           "stopping." if hint else ".")
    )  # fmt: skip


def _short(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _to_log_file(text: str) -> None:
    """Details for the rule's log file only (the terminal gets the one-sentence summary)."""
    handlers = [h for h in logging.getLogger().handlers if isinstance(h, logging.FileHandler)]
    if not handlers:
        log.info("%s", text)
        return
    record = log.makeRecord(log.name, logging.INFO, __file__, 0, text, None, None)
    for handler in handlers:
        handler.handle(record)


def validate_files(
    run: Path,
    actual: Path,
    export: Path,
    expected: Path,
    parquet: Path,
    output: Path,
    validation: dict[str, Any] | None = None,
    log_path: Path | str | None = None,
    spill_root: Path | None = None,
) -> dict[str, Any]:
    """Rule `validate`: write the validation JSON; on failure with on_failure=fail, raise.

    DuckDB runs within `validation["memory_limit"]` and spills under `spill_root`.
    """
    validation = validation or {}
    on_failure = validation.get("on_failure", "fail")
    record = read_run(run)
    if record.extra.get("unsupported"):  # nothing landed: the reason is the record
        reason = record.extra["unsupported"]
        result = {"schema_version": SCHEMA_VERSION, "variant": record.variant.to_dict(),
                  "dataset": record.dataset.name, "passed": False,
                  "unsupported": reason}  # fmt: skip
        write_validation(output, result)
        log.info("%s is unsupported on this table (%s); wrote %s", record.variant.name, reason,
                 output)  # fmt: skip
        return result
    with duckdb_limits(validation.get("memory_limit"), spill_root) as limits:
        result = validate_run(
            record,
            Path(parquet),
            load_json(expected, "expected aggregates file"),
            load_json(actual, "QuestDB aggregates file"),
            Path(export),
            rel_tolerance=float(validation.get("rel_tolerance", 1e-9)),
            max_differences=int(validation.get("max_differences", 5)),
            limits=limits,
        )
    # The server it ran on, from the settings its run file recorded (None: an older file)
    server = label_of((record.settings or {}).get("questdb"))
    for c in result["checks"]:
        if not c["passed"]:
            _to_log_file(f"check {c['name']} failed: expected {_short(c['expected'], 300)}, "
                         f"actual {_short(c['actual'], 300)}")  # fmt: skip
    if not result["passed"]:
        _to_log_file("the full validation report:\n" + json.dumps(result, indent=2))
        if on_failure == "fail":
            raise ValidationFailed(failure_message(result, log_path, server=server))
        log.warning("%s", failure_message(result, log_path, hint=False, server=server))
    write_validation(output, result)
    status = "passed" if result["passed"] else "FAILED (recorded only: on_failure is report)"
    log.info("validation of %s %s; wrote %s", result["variant"].get("name"), status, output)
    return result
