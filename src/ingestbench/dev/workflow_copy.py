"""A runnable copy of the workflow in another directory (for tests and the cluster benchmark):
what a run needs, without results/, .snakemake/ or the venv."""

from __future__ import annotations

import shutil
from pathlib import Path

from ingestbench import CHECKOUT

REPO = CHECKOUT
FILES = ("Snakefile", "config.yaml", "requirements.lock")
FOLDERS = ("rules", "scripts", "schemas", "profiles", "report", "envs", "src")


def copy_workflow(target: Path) -> Path:
    """Copy the workflow into `target` (an existing directory) and return it."""
    for name in FILES:
        shutil.copy(REPO / name, target / name)
    for name in FOLDERS:
        shutil.copytree(REPO / name, target / name, ignore=shutil.ignore_patterns("__pycache__"))
    return target
