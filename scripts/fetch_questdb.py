"""Snakemake entry point of rule `fetch_questdb`: download the jar once, record it for this run."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.errors import run_reporting_user_errors
from ingestbench.files import write_json_atomic
from ingestbench.logs import setup_logging
from ingestbench.server.jar import fetch_jar, verify_jar


def record_jar(version: str, cache_dir: str | None, out: Path) -> None:
    jar = fetch_jar(version, cache_dir)
    write_json_atomic(out, {"schema_version": 1, "jar": str(jar), **verify_jar(jar, version)})


sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm.log[0])
run_reporting_user_errors(
    lambda: record_jar(sm.params.version, sm.params.cache_dir, Path(sm.output.record))
)
