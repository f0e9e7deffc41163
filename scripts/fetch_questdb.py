"""Snakemake entry point of rule `fetch_questdb`: download the jar once, record it for this run."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.server.jar import fetch_jar, verify_jar
from ingestbench.storage.files import write_json_atomic
from ingestbench.workflow.rule_records import run_rule


def main(sm) -> None:
    jar = fetch_jar(sm.params.version, sm.params.cache_dir)
    record = {"schema_version": 1, "jar": str(jar), **verify_jar(jar, sm.params.version)}
    write_json_atomic(Path(sm.output.record), record)


# Guarded: methods that spawn processes re-import this module.
if __name__ == "__main__":
    run_rule(snakemake, main)  # noqa: F821 (injected by Snakemake)
