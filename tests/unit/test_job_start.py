"""How an ingest job starts: its dataframe libraries are imported while its server starts (never
before), and the server's JVM AOT cache is named, locked and given up on safely. No server here:
tests/integration/test_aot.py starts real ones."""

from __future__ import annotations

import fcntl
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ingestbench.errors import UserError
from ingestbench.server import aot
from tests.helpers import REPO

HEAVY = {"pandas", "polars", "pyarrow", "questdb"}


def _heavy_loaded_after(code: str) -> set[str]:
    code += "\nimport sys; print(' '.join(sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO, check=True)  # fmt: skip
    return HEAVY & set(done.stdout.split())


def test_the_job_script_imports_no_dataframe_library_before_its_server_starts():
    # As a `processes` worker imports it: not as __main__, so the guard keeps main() from running.
    script = "import runpy, sys; sys.path.insert(0, 'scripts'); runpy.run_path('scripts/ingest.py')"
    assert _heavy_loaded_after(script) == set()


def test_the_measuring_code_the_job_imports_while_its_server_starts_brings_them():
    code = "from ingestbench.ingest.job import import_measuring_code as f; f('polars')"
    assert _heavy_loaded_after(code) == HEAVY


def _java_home(tmp_path: Path, version: str | None = "25.0.2") -> str:
    """A stand-in Java installation (only what cache_path reads), and its `java`."""
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    (home / "lib").mkdir()
    (home / "lib" / "modules").write_bytes(b"modules")
    (home / "bin" / "java").write_text("")
    if version is not None:
        (home / "release").write_text(f'JAVA_VERSION="{version}"\nMODULES="java.base"\n')
    return str(home / "bin" / "java")


@pytest.fixture
def jar(tmp_path) -> Path:
    path = tmp_path / "cache" / "questdb-9.3.4.jar"
    path.parent.mkdir()
    path.write_bytes(b"a jar")
    return path


def test_the_cache_lives_beside_the_jar_named_by_the_jar_and_the_java(tmp_path, jar):
    java = _java_home(tmp_path)
    cache = aot.cache_path(java, jar)
    assert cache.parent == jar.parent
    assert cache.name.startswith("questdb-9.3.4.jar.java25-") and cache.suffix == ".aot"
    assert aot.cache_path(java, jar) == cache
    os.utime(jar, ns=(1, 1))  # the jar replaced in place: the JVM would refuse the old cache
    assert aot.cache_path(java, jar) != cache


@pytest.mark.parametrize("version", ["21.0.4", "1.8.0_392", None])
def test_a_java_without_aot_caches_gets_no_options(tmp_path, jar, version, monkeypatch):
    monkeypatch.setattr(aot, "_make", lambda *a: pytest.fail("no cache for this Java"))
    assert aot.aot_cache_options(_java_home(tmp_path, version), jar, 60) == []


def test_while_another_process_makes_the_cache_a_start_goes_without_it(tmp_path, jar, monkeypatch):
    java = _java_home(tmp_path)
    cache = aot.cache_path(java, jar)
    monkeypatch.setattr(aot, "_make", lambda *a: pytest.fail("made twice"))
    # flock locks belong to an open file: this one stands for another process's.
    with open(cache.with_name(f".{cache.name}.lock"), "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert aot.aot_cache_options(java, jar, 60) == []
    assert not aot._failed(cache).exists()  # nothing failed: the next start tries


def test_a_cache_that_could_not_be_made_is_named_and_not_tried_again(
    tmp_path, jar, monkeypatch, caplog
):
    java = _java_home(tmp_path)
    cache = aot.cache_path(java, jar)

    def fail(*args):
        raise UserError("QuestDB exited with code 1 while starting")

    monkeypatch.setattr(aot, "_make", fail)
    with caplog.at_level(logging.WARNING, logger="ingestbench.server.aot"):
        assert aot.aot_cache_options(java, jar, 60) == []
    note = aot._failed(cache)
    assert "exited with code 1" in note.read_text()
    assert f"delete {note} to try again" in caplog.text
    monkeypatch.setattr(aot, "_make", lambda *a: pytest.fail("tried again"))
    assert aot.aot_cache_options(java, jar, 60) == []
    note.unlink()  # what the warning says to do
    monkeypatch.setattr(aot, "_make", lambda java, jar, cache, timeout_s: cache.write_bytes(b"x"))
    assert f"-XX:AOTCache={cache}" in aot.aot_cache_options(java, jar, 60)
