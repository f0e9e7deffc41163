"""requirements.lock, the one source of versions, read as {package: version}: the versions a run
records beside the installed ones (environment), and that dev.lockfile derives the conda
environment from. Light: the standard library only."""

from __future__ import annotations

import re
from pathlib import Path

from ingestbench import CHECKOUT

LOCK = CHECKOUT / "requirements.lock"


def normalise(name: str) -> str:
    """A package's name as the lock and the installed metadata compare it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_versions(lock: Path = LOCK) -> dict[str, str]:
    pairs = re.findall(r"^([A-Za-z0-9_.-]+)==([^\s\\;]+)", lock.read_text(), re.M)
    return {normalise(name): version for name, version in pairs}
