"""The summary's refusal of a run file that ran under other settings than the config's."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ingestbench.results.records import RunFile
from ingestbench.results.summary.rows import SummaryError
from ingestbench.workflow.rule_inputs import settings_differences


def check_settings(path: Path, record: RunFile, expected: Mapping[str, Any]) -> None:
    """Refuse a run file that ran under other settings than the config's (one sentence naming
    the variant and the keys)."""
    what = f"{record.variant.name} on {record.dataset.name} ({path})"
    if record.settings is None:
        raise SummaryError(
            f"{what} does not record the settings it ran under (it predates that record); "
            f"rerun it: {rerun_command(path)}"
        )
    differ = settings_differences(record.settings, expected)
    if differ:
        keys = ", ".join(
            f"{k} ({_dotted(record.settings, k)!r} in the run file, "
            f"{_dotted(expected, k)!r} in the config)"
            for k in differ
        )
        raise SummaryError(
            f"{what} ran under other settings than the config's: {keys}; rerun it "
            f"({rerun_command(path)}), or use the config it ran under."
        )


def rerun_command(path: Path) -> str:
    """A command that reruns the ingestion of `path` and what follows it, whatever Snakemake
    recorded (or did not) of it."""
    return f"snakemake --cores all --forcerun {path}"


def _dotted(values: Mapping[str, Any], key: str) -> Any:
    for part in key.split("."):
        values = values.get(part) if isinstance(values, Mapping) else None
    return values
