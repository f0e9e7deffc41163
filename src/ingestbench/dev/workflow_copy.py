"""A runnable copy of the workflow in another directory (for tests and the cluster benchmark):
what a fresh clone holds, as the working tree has it now.

That is every file git tracks, as it is in the working tree (so uncommitted work is tested too),
and every new file git does not ignore; never `.snakemake/`, `results/` or the venv, which a
clone does not have. Outside a git checkout (an unpacked archive), the whole tree but those.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ingestbench import CHECKOUT

REPO = CHECKOUT
#: What a clone never has at its top, also where git cannot tell (no checkout).
NOT_IN_A_CLONE = (".git", ".snakemake", ".venv", "results", "site")


def clone_files(repo: Path = REPO) -> list[Path]:
    """The files a fresh clone of `repo` would hold, relative to it."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=repo, capture_output=True, check=True,
        ).stdout.decode()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        # Top-level folders only (and caches anywhere): src/ingestbench/results is code.
        return [
            rel
            for rel in (p.relative_to(repo) for p in repo.rglob("*") if p.is_file())
            if rel.parts[0] not in NOT_IN_A_CLONE and "__pycache__" not in rel.parts
        ]
    # Tracked but deleted in the working tree: a commit would not have them either.
    return [Path(name) for name in listed.split("\0") if name and (repo / name).is_file()]


def copy_workflow(target: Path, repo: Path = REPO) -> Path:
    """Copy what a clone of `repo` holds into `target` (an existing directory); return it."""
    for rel in clone_files(repo):
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(repo / rel, target / rel)  # new times, as a checkout gives
    return target
