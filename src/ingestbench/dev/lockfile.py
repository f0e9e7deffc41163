"""envs/ingestbench.yaml, derived from requirements.lock (the single source of versions, read by
ingestbench.ingest.pins).

`python -m ingestbench.dev.lockfile` rewrites the conda environment (run by `make lock`).
"""

from __future__ import annotations

import re
from pathlib import Path

from ingestbench import CHECKOUT
from ingestbench.ingest.pins import LOCK, locked_versions, normalise
from ingestbench.storage.files import write_text_atomic

ROOT = CHECKOUT
DIRECT = ROOT / "requirements.in"
CONDA_ENV = ROOT / "envs" / "ingestbench.yaml"
DEV_ONLY = {"pytest", "ruff", "snakefmt"}  # not needed inside a rule's environment


def direct_dependencies(path: Path = DIRECT) -> list[str]:
    names = []
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            names.append(normalise(re.split(r"[<>=!~\[ ]", line)[0]))
    return names


def conda_env_text(lock: Path = LOCK, direct: Path = DIRECT) -> str:
    versions = locked_versions(lock)
    pins = [f"      - {n}=={versions[n]}" for n in direct_dependencies(direct) if n not in DEV_ONLY]
    return "\n".join(
        [
            "# Environment of every rule under `snakemake --sdm conda`, generated from",
            "# requirements.lock by `make lock` (python -m ingestbench.dev.lockfile); do not edit.",
            "channels:",
            "  - conda-forge",
            "  - nodefaults",
            "dependencies:",
            "  - python=3.11",
            "  - pip",
            "  - pip:",
            *pins,
            "",
        ]
    )


if __name__ == "__main__":
    write_text_atomic(CONDA_ENV, conda_env_text())
    print(f"wrote {CONDA_ENV}")
