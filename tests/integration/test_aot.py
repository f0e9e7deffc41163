"""The server's JVM AOT cache against the real JVM: made once, used, and never a reason for a start
to fail (damaged, cut short, half made when its job is cancelled, or not makeable at all)."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

from ingestbench.server import aot
from ingestbench.server.process import embedded_server, java_executable
from tests.helpers import STARTUP_S, ctrl_c_default


def _copy_jar(questdb_jar, folder):
    """A private copy of the jar (a cache is made beside its jar, and the user's is not touched)."""
    folder.mkdir()
    return shutil.copy2(questdb_jar, folder / questdb_jar.name)


@pytest.fixture(scope="module")
def made(questdb_jar, tmp_path_factory):
    """A private jar and its cache, made the way a job's first server start makes it."""
    jar = _copy_jar(questdb_jar, tmp_path_factory.mktemp("aot") / "cache")
    java = java_executable(None)
    options = aot.aot_cache_options(java, jar, STARTUP_S)
    return java, jar, options


def _start(jar, options, log):
    """Start and stop a server with these JVM options; its log's AOT lines."""
    with embedded_server(jar, jvm_options=options, startup_timeout_s=STARTUP_S, log_path=log) as q:
        assert q.scalar("SELECT 1") == 1
    return [line for line in log.read_text().splitlines() if "[aot]" in line]


def test_a_cache_is_made_once_beside_its_jar_and_starts_the_server(made, tmp_path, monkeypatch):
    java, jar, options = made
    cache = aot.cache_path(java, jar)
    assert options == [f"-XX:AOTCache={cache}", "-XX:+VerifySharedSpaces"]
    names = sorted(p.name for p in jar.parent.iterdir())
    assert names == sorted([jar.name, cache.name, f".{cache.name}.lock"])  # no temporary left
    monkeypatch.setattr(aot, "_make", lambda *a: pytest.fail("made again"))
    assert aot.aot_cache_options(java, jar, STARTUP_S) == options
    assert _start(jar, options, tmp_path / "s.log") == []  # mapped: nothing to say about it


def _flip_bytes(data: bytes) -> bytes:
    """Bytes flipped past the header, in the classes: unchecked, such a cache crashes the JVM."""
    spoilt = bytearray(data)
    for i in range(len(data) // 4, len(data), len(data) // 40):
        spoilt[i] ^= 0xFF
    return bytes(spoilt)


DAMAGE = {
    "bytes flipped": (_flip_bytes, "Checksum verification failed"),
    "cut short": (lambda data: data[: len(data) // 3], "truncated"),
    "not a cache": (lambda data: b"not an AOT cache" * 300, "bad magic number"),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_cache_is_not_used_and_the_server_starts(made, tmp_path, damage):
    java, jar, options = made
    cache = aot.cache_path(java, jar)
    spoil, said = DAMAGE[damage]
    damaged = jar.with_name(f"damaged-{tmp_path.name}.aot")  # beside the jar: for that jar
    damaged.write_bytes(spoil(cache.read_bytes()))
    try:
        lines = _start(jar, [o.replace(str(cache), str(damaged)) for o in options],
                       tmp_path / "s.log")  # fmt: skip
    finally:
        damaged.unlink()
    assert any(said in line for line in lines), lines
    assert any("Unable to map shared spaces" in line for line in lines), lines


def test_a_cache_that_cannot_be_made_costs_only_its_speed_up(tmp_path):
    bogus = tmp_path / "cache" / "not-a-jar.jar"
    bogus.parent.mkdir()
    bogus.write_text("not a jar")
    java = java_executable(None)
    assert aot.aot_cache_options(java, bogus, STARTUP_S) == []
    cache = aot.cache_path(java, bogus)
    assert "exited with code" in aot._failed(cache).read_text()
    assert not [p.name for p in bogus.parent.iterdir() if ".tmp-" in p.name]


MAKE_IN_A_CHILD = textwrap.dedent("""
    import sys
    from pathlib import Path
    from ingestbench.server import aot
    from ingestbench.server.process import java_executable
    aot.aot_cache_options(java_executable(None), Path(sys.argv[1]), 300)
""")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_job_cancelled_while_it_makes_the_cache_leaves_no_process_and_no_cache(
    questdb_jar, tmp_path, sig
):
    jar = _copy_jar(questdb_jar, tmp_path / "cache")
    child = subprocess.Popen([sys.executable, "-c", MAKE_IN_A_CHILD, str(jar)],
                             preexec_fn=ctrl_c_default)  # fmt: skip
    try:
        deadline = time.monotonic() + STARTUP_S
        while not (training := [p for p in psutil.Process(child.pid).children()
                                if "-XX:AOTMode=record" in p.cmdline()]):  # fmt: skip
            assert time.monotonic() < deadline and child.poll() is None, "no training server"
            time.sleep(0.05)
        child.send_signal(sig)
        child.wait(60)
        assert not training[0].is_running() or training[0].status() == psutil.STATUS_ZOMBIE
    finally:
        child.kill()
        child.wait()
    # Nothing half made, and no note of a failure: the next job makes it.
    names = {p.name for p in jar.parent.iterdir()}
    assert {n for n in names if not n.endswith(".lock")} == {jar.name}, names
