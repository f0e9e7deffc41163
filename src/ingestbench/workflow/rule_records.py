"""What each job ran under, kept beside its output, so that a rerun needs no Snakemake metadata.

Every rule passes two params: `settings`, its slice of the config
(ingestbench.workflow.rule_inputs), and `code`, the digest of the code it runs. When a job succeeds,
`run_rule` writes both into a record beside its first output (`<folder>/.settings/<name>.json`, so
it travels with `cp -r` and goes with `make clean`). When Snakemake has built the DAG,
`rerun_what_changed` compares, by content, each job's record with the settings and code it would run
with now, and forces the jobs whose record differs or is missing (and so, as Snakemake does,
everything after them). Nothing is written then: a dry run leaves every record as it was, and plans
what a real run would run.

Snakemake's own params trigger keeps working where its metadata exists; this works without it:
on a fresh clone, after `rm -rf .snakemake`, after `git pull`, and on a results folder copied
from another machine (whose file times say nothing of what made them).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ingestbench.errors import run_reporting_user_errors
from ingestbench.storage.files import write_json_atomic
from ingestbench.workflow.logs import setup_logging

RECORDS = ".settings"


def settings_digest(settings: Mapping[str, Any], code: str) -> str:
    """16 hex digits over a job's settings and code: equal digests, equal claims."""
    doc = json.dumps({"settings": settings, "code": code}, sort_keys=True, default=str)
    return hashlib.sha256(doc.encode()).hexdigest()[:16]


def record_path(output: str | Path) -> Path:
    """Where the record of the job that wrote `output` (its first output) is kept."""
    output = Path(output)
    return output.parent / RECORDS / f"{output.name}.json"


def recorded_digest(output: str | Path) -> str | None:
    """The digest the job that wrote `output` recorded, or None (no record, or unreadable)."""
    try:
        return json.loads(record_path(output).read_text())["digest"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def needs_rerun(output: str | Path, settings: Any, code: str) -> bool:
    """True if `output` exists but was not made under these settings and this code (or says
    nothing of what it was made under). A missing output reruns anyway: Snakemake sees it."""
    if not Path(output).exists():
        return False
    return recorded_digest(output) != settings_digest(_plain(settings), code)


def write_record(output: str | Path, settings: Mapping[str, Any], code: str) -> None:
    write_json_atomic(
        record_path(output),
        {"digest": settings_digest(settings, code), "code": code, "settings": settings},
    )


def run_rule(smk: Any, main: Callable[[Any], object]) -> None:
    """The one entry of every rule's script: log to the rule's log, run `main(smk)` (a UserError
    ends it with its sentence and exit code 1), then record what the outputs were made under."""
    setup_logging(smk.log.get("job") or (smk.log[0] if smk.log else None))
    run_reporting_user_errors(lambda: main(smk))
    params = dict(smk.params.items())
    write_record(smk.output[0], _plain(params.get("settings", {})), params.get("code", ""))


def _plain(value: Any) -> Any:
    """Snakemake's Namedlist and other mappings as JSON-ready dicts and lists."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def stale_outputs(jobs: Iterable[Any]) -> list[str]:
    """The first output of each job (Snakemake's) that exists but was made under other settings
    or code than the job's params say now."""
    stale = []
    for job in jobs:
        params = dict(job.params.items())
        if (
            job.output
            and "settings" in params
            and needs_rerun(job.output[0], params["settings"], params.get("code", ""))
        ):
            stale.append(job.output[0])
    return stale


def rerun_what_changed() -> None:
    """Have Snakemake rerun the jobs of every DAG it builds whose outputs' records differ.

    Snakemake has no hook for a rerun trigger of one's own. Its DAG, once built, turns outputs
    left incomplete into forced ones (`DAG.check_incomplete`); the stale outputs join them there,
    so only jobs of the DAG the command asked for are forced, none is made a target, and the
    dry run says "Forced execution" for each. The pinned Snakemake (requirements.lock) has it;
    a test runs it on a fresh copy of the workflow."""
    from snakemake.dag import DAG
    from snakemake.logging import logger

    if getattr(DAG, "_reruns_what_changed", False):
        return
    if not hasattr(DAG, "check_incomplete"):
        raise RuntimeError(
            "this Snakemake's DAG has no check_incomplete, where the workflow finds the outputs "
            "made under other settings: run it with the Snakemake of requirements.lock "
            "(make install)"
        )
    check_incomplete = DAG.check_incomplete

    async def check_incomplete_and_records(self: Any) -> None:
        await check_incomplete(self)
        stale = stale_outputs(self.jobs)
        if stale:
            self.forcefiles.update(stale)
            logger.info(
                f"{len(stale)} output(s) were made under other settings or code than now; their "
                f"jobs rerun: {', '.join(sorted(map(str, stale))[:5])}"
                + (", ..." if len(stale) > 5 else "")
            )

    DAG.check_incomplete = check_incomplete_and_records
    DAG._reruns_what_changed = True
