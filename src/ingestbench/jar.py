"""Fetch the QuestDB server jar from Maven Central and check it against the published SHA-1."""

from __future__ import annotations

import hashlib
import logging
import os
import urllib.error
import urllib.request
from pathlib import Path

from .errors import UserError
from .files import write_bytes_atomic

log = logging.getLogger(__name__)
MAVEN = "https://repo1.maven.org/maven2/org/questdb/questdb/{v}/questdb-{v}.jar"


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ingestbench"


def _get(url: str, timeout: float = 120) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (fixed https URL)
        return response.read()


def fetch_jar(version: str, cache_dir: Path | None = None) -> Path:
    """Return the cached jar of `version`, downloading and verifying it on first use."""
    cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
    target = cache_dir / f"questdb-{version}.jar"
    url = MAVEN.format(v=version)
    if target.exists():
        return target
    log.info("downloading %s", url)
    try:
        expected = _get(url + ".sha1", timeout=30).decode().split()[0].strip().lower()
        data = _get(url)
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise UserError(
            f"could not download QuestDB {version} from Maven Central ({exc}); check the network "
            f"and questdb.version, or download questdb-{version}.jar yourself and set "
            f"questdb.jar to its path."
        ) from None
    actual = hashlib.sha1(data).hexdigest()  # noqa: S324 (Maven publishes SHA-1)
    if actual != expected:
        raise UserError(
            f"the downloaded QuestDB jar's SHA-1 is {actual} but Maven Central publishes "
            f"{expected}; delete {cache_dir} and retry, or set questdb.jar to a jar you trust."
        )
    write_bytes_atomic(target, data)
    log.info("saved %s (%d bytes, sha1 %s)", target, len(data), actual)
    return target


def resolve_jar(qdb_config: dict) -> Path:
    """The jar to run: the configured one, or the cached download of the configured version."""
    if qdb_config.get("jar"):
        jar = Path(qdb_config["jar"]).expanduser()
        if not jar.is_file():
            raise UserError(f"questdb.jar points to {jar}, which does not exist; fix the path.")
        return jar
    return fetch_jar(qdb_config["version"], qdb_config.get("cache_dir"))
