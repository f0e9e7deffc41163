"""The QuestDB server jar: downloaded once from Maven Central into a cache shared by every clone.

The cache is shared (several workflows, several users' runs), so a jar there is never rewritten
once it is present: a download goes to a temporary name and is linked into place only if no jar is
there yet. Its size and SHA-1 are recorded beside it (`questdb-<version>.jar.json`) and checked
before every use (about 50 ms), so a damaged jar is named instead of failing inside Java.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import urllib.error
import urllib.request
from pathlib import Path

from ingestbench.config import QuestDBSettings
from ingestbench.errors import UserError
from ingestbench.storage.files import write_json_atomic

log = logging.getLogger(__name__)
MAVEN = "https://repo1.maven.org/maven2/org/questdb/questdb/{v}/questdb-{v}.jar"


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ingestbench"


def cached_jar_path(version: str, cache_dir: Path | str | None = None) -> Path:
    return (Path(cache_dir).expanduser() if cache_dir else default_cache_dir()) / (
        f"questdb-{version}.jar"
    )


def record_path(jar: Path) -> Path:
    """Where the jar's size and SHA-1 are recorded: beside it."""
    return jar.with_name(jar.name + ".json")


def _get(url: str, timeout: float = 120) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (fixed https URL)
        return response.read()


def _sha1(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()  # noqa: S324 (Maven publishes SHA-1)


def _published_sha1(version: str) -> str:
    return _get(MAVEN.format(v=version) + ".sha1", timeout=30).decode().split()[0].strip().lower()


def _download_failed(version: str, exc: Exception) -> UserError:
    return UserError(
        f"could not download QuestDB {version} from Maven Central ({exc}); check the network "
        f"and questdb.version, or download questdb-{version}.jar yourself and set "
        f"questdb.jar to its path."
    )


def _corrupted(jar: Path, detail: str) -> UserError:
    return UserError(
        f"the cached QuestDB jar {jar} is corrupted ({detail}); delete {jar} and rerun, the "
        f"workflow downloads it again."
    )


def verify_jar(jar: Path, version: str) -> dict:
    """Check the cached jar against the size and SHA-1 recorded beside it; return that record.

    A jar cached before records existed is checked once against Maven Central's SHA-1.
    """
    data = jar.read_bytes()
    try:
        record = json.loads(record_path(jar).read_text())
    except (OSError, ValueError):
        return _record_unrecorded_jar(jar, version, data)
    if len(data) != record["size"]:
        raise _corrupted(
            jar, f"{len(data)} bytes, {record_path(jar).name} records {record['size']}"
        )
    if _sha1(data) != record["sha1"]:
        raise _corrupted(jar, f"its SHA-1 differs from the one in {record_path(jar).name}")
    return record


def _record_unrecorded_jar(jar: Path, version: str, data: bytes) -> dict:
    try:
        published = _published_sha1(version)
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise UserError(
            f"cannot check the cached QuestDB jar {jar} against Maven Central's SHA-1 "
            f"({exc}); check the network, or set questdb.jar to {jar} to use it unchecked."
        ) from None
    if _sha1(data) != published:
        raise _corrupted(jar, f"its SHA-1 is not {published}, the one Maven Central publishes")
    record = {"version": version, "size": len(data), "sha1": published}
    write_json_atomic(record_path(jar), record)
    return record


def fetch_jar(version: str, cache_dir: Path | str | None = None) -> Path:
    """Return the cached jar of `version`, verified; download it first if it is not there."""
    target = cached_jar_path(version, cache_dir)
    if target.exists():
        verify_jar(target, version)
        return target
    url = MAVEN.format(v=version)
    log.info("downloading %s", url)
    try:
        expected = _published_sha1(version)
        data = _get(url)
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise _download_failed(version, exc) from None
    actual = _sha1(data)
    if actual != expected:
        raise UserError(
            f"the downloaded QuestDB jar's SHA-1 is {actual} but Maven Central publishes "
            f"{expected}; retry later, or set questdb.jar to a jar you trust."
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(record_path(target), {"version": version, "size": len(data), "sha1": actual})
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    try:
        tmp.write_bytes(data)
        # link, not rename: it never replaces a jar another workflow put there meanwhile.
        with contextlib.suppress(FileExistsError):
            os.link(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    verify_jar(target, version)
    log.info("saved %s (%d bytes, sha1 %s)", target, len(data), actual)
    return target


def resolve_jar(settings: QuestDBSettings) -> Path:
    """The jar to run: the configured one, or the cached download of the configured version."""
    if settings.jar:
        jar = Path(settings.jar).expanduser()
        if not jar.is_file():
            raise UserError(f"questdb.jar points to {jar}, which does not exist; fix the path.")
        return jar
    return fetch_jar(settings.version, settings.cache_dir)


def server_jar(settings: QuestDBSettings) -> Path | None:
    """The verified jar an embedded server runs, or None for an external server."""
    return None if settings.external else resolve_jar(settings)


def class_java(jar: Path) -> int | None:
    """The Java release the jar's classes target (the oldest Java that runs it): the class-file
    major version of its main class (bytes 6-7; 55 is Java 11, 61 is 17), not the JDK that built
    it (the manifest's Build-Jdk: 9.3.4 was built by 24 for 17). None if it has no such class."""
    import zipfile

    try:
        with zipfile.ZipFile(jar) as z:
            head = z.read("io/questdb/ServerMain.class")[:8]
    except (OSError, KeyError, zipfile.BadZipFile):
        return None
    return int.from_bytes(head[6:8], "big") - 44
