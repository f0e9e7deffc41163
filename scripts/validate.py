"""Snakemake entry point of rule `validate`: expected vs QuestDB, aggregates and row for row."""

from pathlib import Path

import _src_on_path  # noqa: F401 (makes ingestbench importable under --sdm conda)

from ingestbench.errors import run_reporting_user_errors
from ingestbench.logs import setup_logging
from ingestbench.validate import validate_files

sm = snakemake  # noqa: F821 (injected by Snakemake)
setup_logging(sm.log[0])
run_reporting_user_errors(
    lambda: validate_files(
        run=Path(sm.input.run),
        actual=Path(sm.input.actual),
        export=Path(sm.input.export),
        expected=Path(sm.input.expected),
        parquet=Path(sm.input.parquet),
        output=Path(sm.output[0]),
        validation={**sm.params.validation, "memory_limit": sm.params.memory_limit},
        log_path=sm.log[0],
        spill_root=Path(sm.params.spill_root),
    )
)
