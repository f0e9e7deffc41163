"""The embedded QuestDB: loopback only, no clashes, clear errors, and nothing left running."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

from ingestbench.server import process as server
from ingestbench.server.handle import QuestDBError
from ingestbench.server.process import embedded_server, free_port
from tests.helpers import QUESTDB_VERSION, STARTUP_S, ctrl_c_default


def _gone(pid: int, within_s: float = 15) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
            return True
        time.sleep(0.1)
    return False


def test_start_and_stop_leave_no_process_and_no_data_dir(questdb_jar, tmp_path):
    with embedded_server(
        questdb_jar, startup_timeout_s=STARTUP_S, log_path=tmp_path / "server.log"
    ) as qdb:
        pid, root = qdb.pid, qdb.data_dir
        assert psutil.pid_exists(pid)
        assert f"QuestDB {QUESTDB_VERSION}" in qdb.version()
        assert qdb.cpu_seconds() > 0
        # The native libraries QuestDB unpacks at start go under the data directory, not /tmp.
        assert list((root / "tmp").glob("libquestdb*.so"))
    assert _gone(pid)
    assert not root.exists()


def test_server_listens_on_loopback_only(questdb):
    listening = {
        c.laddr
        for c in psutil.Process(questdb.pid).net_connections(kind="inet")
        if c.status == psutil.CONN_LISTEN
    }
    assert {questdb.http_port, questdb.ilp_port} <= {addr.port for addr in listening}
    assert {addr.ip for addr in listening} == {"127.0.0.1"}


IDLE_KEYS = ("shared.worker.nap.threshold", "shared.worker.sleep.threshold",
             "shared.worker.sleep.timeout")  # fmt: skip


def idle_settings(qdb) -> dict[str, tuple[str, str]]:
    keys = ", ".join(f"'{k}'" for k in IDLE_KEYS)
    rows = qdb.rows(f"SELECT property_path, value, value_source FROM (SHOW PARAMETERS) "
                    f"WHERE property_path IN ({keys})")  # fmt: skip
    return {path: (value, source) for path, value, source in rows}


@pytest.fixture(scope="module")
def spin_with_pools(questdb_jar, tmp_path_factory):
    """One server for both settings the session's server lacks: worker_idle spin and pool sizes
    (they set apart environment variables, so one start serves both tests)."""
    pools = {"shared": 2, "wal_apply": 1, "line_tcp_io": None}
    log = tmp_path_factory.mktemp("spin") / "spin.log"
    with embedded_server(questdb_jar, worker_idle="spin", pools=pools,
                         startup_timeout_s=STARTUP_S, log_path=log) as qdb:  # fmt: skip
        yield qdb


def test_worker_idle_reaches_the_server(questdb, spin_with_pools):
    # park, the default: idle workers nap and sleep early, set through the environment.
    assert idle_settings(questdb) == {
        "shared.worker.nap.threshold": ("20", "env"),
        "shared.worker.sleep.threshold": ("100", "env"),
        "shared.worker.sleep.timeout": ("1", "env"),
    }
    assert {source for _, source in idle_settings(spin_with_pools).values()} == {"default"}


def test_pool_sizes_reach_the_server(spin_with_pools):
    rows = spin_with_pools.rows(
        "SELECT property_path, value, value_source FROM (SHOW PARAMETERS) WHERE "
        "property_path IN ('shared.worker.count', 'wal.apply.worker.count', "
        "'line.tcp.io.worker.count')"
    )
    got = {path: (value, source) for path, value, source in rows}
    assert got["shared.worker.count"] == ("2", "env")
    assert got["wal.apply.worker.count"] == ("1", "env")
    assert got["line.tcp.io.worker.count"][1] == "default"  # null keeps QuestDB's size


def test_two_servers_at_once_do_not_clash(questdb_jar, tmp_path):
    with (
        embedded_server(questdb_jar, startup_timeout_s=STARTUP_S, log_path=tmp_path / "a.log") as a,
        embedded_server(questdb_jar, startup_timeout_s=STARTUP_S, log_path=tmp_path / "b.log") as b,
    ):
        assert {a.http_port, a.ilp_port, a.pg_port}.isdisjoint({b.http_port, b.ilp_port, b.pg_port})
        a.sql("CREATE TABLE only_in_a (x INT)")
        assert a.rows("SELECT table_name FROM tables() WHERE table_name = 'only_in_a'")
        assert not b.rows("SELECT table_name FROM tables() WHERE table_name = 'only_in_a'")
        pids = (a.pid, b.pid)
    assert all(_gone(pid) for pid in pids)


def test_readiness_timeout_names_the_fix_and_shows_the_log(questdb_jar, tmp_path):
    started = set()
    with (
        pytest.raises(QuestDBError, match="did not answer .* within 0.3 s; raise") as err,
        embedded_server(questdb_jar, startup_timeout_s=0.3, log_path=tmp_path / "s.log"),
    ):
        pass
    assert "startup_timeout_s" in str(err.value)
    for proc in psutil.process_iter(["cmdline"]):
        if str(tmp_path / "s.log") in " ".join(proc.info["cmdline"] or []):
            started.add(proc.pid)
    assert not started


def test_a_server_that_cannot_start_reports_its_log(tmp_path):
    bogus = tmp_path / "not-a-jar.jar"
    bogus.write_text("not a jar")
    with pytest.raises(QuestDBError, match="exited with code"), embedded_server(bogus):
        pass


def _server_in_child_job(questdb_jar) -> tuple[subprocess.Popen, int, str]:
    """A child Python process (a stand-in for a Snakemake job) holding an embedded server."""
    script = textwrap.dedent(
        f"""
        import time
        from pathlib import Path
        from ingestbench.server.process import embedded_server
        with embedded_server(Path({str(questdb_jar)!r})) as qdb:
            print(qdb.pid, qdb.data_dir, flush=True)
            time.sleep(120)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             preexec_fn=ctrl_c_default)  # fmt: skip
    pid, root = child.stdout.readline().split()
    return child, int(pid), root


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_the_server_stops_when_its_job_is_terminated_or_interrupted(questdb_jar, tmp_path, sig):
    """Snakemake sends SIGTERM to a cancelled job; Ctrl-C sends SIGINT."""
    child, pid, root = _server_in_child_job(questdb_jar)
    try:
        assert psutil.pid_exists(pid)
        os.kill(child.pid, sig)
        child.wait(30)
        assert _gone(pid)
        assert not os.path.exists(root)
    finally:
        child.kill()
        child.wait()


def test_the_server_dies_with_a_killed_job(questdb_jar):
    """Even SIGKILL of the job (no cleanup possible) takes the server down (PR_SET_PDEATHSIG)."""
    child, pid, root = _server_in_child_job(questdb_jar)
    try:
        child.kill()
        child.wait(30)
        assert _gone(pid)
    finally:
        child.kill()
        child.wait()
        shutil.rmtree(root, ignore_errors=True)  # nobody was left to remove it


def test_a_port_taken_before_the_server_binds_it_is_replaced(questdb_jar, tmp_path, monkeypatch):
    # Another process takes the port we picked before QuestDB binds it: start again, fresh ports.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        picks = iter([port])
        monkeypatch.setattr(server, "free_port", lambda: next(picks, None) or free_port())
        log = tmp_path / "race.log"
        with embedded_server(questdb_jar, startup_timeout_s=STARTUP_S, log_path=log) as qdb:
            assert qdb.http_port != port
            assert qdb.scalar("SELECT 1") == 1
        # At least the planted clash; any other process on this machine may take a port too.
        assert log.read_text().count("could not bind socket") >= 1


def test_a_fixed_port_in_use_is_named(questdb_jar, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        in_use = f"the ilp port {port} is in use by another process"
        with (
            pytest.raises(QuestDBError, match=in_use),
            embedded_server(
                questdb_jar,
                startup_timeout_s=STARTUP_S,
                ports={"ilp": port},
                log_path=tmp_path / "fixed.log",
            ),  # fmt: skip
        ):
            pass


def _java_children() -> list[psutil.Process]:
    return [p for p in psutil.Process().children() if "io.questdb" in " ".join(p.cmdline())]


def test_work_while_the_server_starts_runs_beside_its_jvm_and_a_failure_stops_it(
    questdb_jar, tmp_path
):
    others = {p.pid for p in _java_children()}  # the session's server
    started = []

    def work():
        # The JVM is launched before the work runs.
        started.extend(p for p in _java_children() if p.pid not in others)
        raise QuestDBError("the work failed")

    with (
        pytest.raises(QuestDBError, match="the work failed"),
        embedded_server(
            questdb_jar,
            startup_timeout_s=STARTUP_S,
            log_path=tmp_path / "s.log",
            while_starting=work,
        ),
    ):
        pytest.fail("the server was yielded after its work failed")
    assert len(started) == 1
    assert _gone(started[0].pid)


WORK_IN_A_CHILD_JOB = """
import sys, time
from pathlib import Path
import psutil
from ingestbench.server.process import embedded_server

def work():  # what a job imports while its server starts, made slow
    (java,) = psutil.Process().children()
    print(java.pid, java.cmdline()[java.cmdline().index("-d") + 1], flush=True)
    time.sleep(120)

with embedded_server(Path(sys.argv[1]), while_starting=work):
    pass
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_the_server_stops_when_its_job_is_cancelled_during_its_work_while_starting(
    questdb_jar, sig
):
    cmd = [sys.executable, "-c", WORK_IN_A_CHILD_JOB, str(questdb_jar)]
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, preexec_fn=ctrl_c_default)
    try:
        pid, root = child.stdout.readline().split()
        os.kill(child.pid, sig)
        child.wait(30)
        assert _gone(int(pid))
        assert not os.path.exists(root)
    finally:
        child.kill()
        child.wait()
