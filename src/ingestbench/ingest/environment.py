"""Record what the benchmark ran on: results/environment.json.

Package versions (locked and installed), the QuestDB server's version and non-default settings,
Java, CPU, cores, RAM, OS, Python, the workflow's git commit, the config hash and the time; with
several servers (server.versions), each one's version, Java and non-default properties as the
server reports them (`servers`).
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import json
import logging
import os
import platform
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil

from ingestbench.config import QuestDBSettings, masked_config, readers_off
from ingestbench.ingest.pins import locked_versions
from ingestbench.server.handle import QuestDB, QuestDBError
from ingestbench.server.process import java_executable
from ingestbench.storage.files import write_text_atomic
from ingestbench.workflow.result_keys import config_hash

log = logging.getLogger(__name__)
SCHEMA_VERSION = 1


def installed_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def package_versions(lock_path: Path) -> list[dict[str, Any]]:
    return [
        {"name": name, "locked": locked, "installed": installed_version(name)}
        for name, locked in sorted(locked_versions(Path(lock_path)).items())
    ]


def cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith(("model name", "hardware")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    if sys.platform == "darwin":
        try:
            out = subprocess.run(
                ["sysctl", "-n", "machdep.cpu.brand_string"],
                capture_output=True,
                text=True,
                timeout=10,
            )
            if out.stdout.strip():
                return out.stdout.strip()
        except OSError:
            pass
    return platform.processor() or None


def host_info() -> dict[str, Any]:
    """Where a job ran: on a cluster each run may land on a different node (run files keep it)."""
    return {
        "hostname": socket.gethostname(),
        "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
    }


def machine_info() -> dict[str, Any]:
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:
        available = os.cpu_count()
    return {
        "node": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cores_logical": psutil.cpu_count(logical=True),
        "cores_physical": psutil.cpu_count(logical=False),
        "cores_available": available,
        "ram_bytes": psutil.virtual_memory().total,
        "os": platform.platform(),
        "system": platform.system(),
        "release": platform.release(),
        "arch": platform.machine(),
    }


def python_info() -> dict[str, Any]:
    return {
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
    }


def java_info(configured: str | None) -> dict[str, Any]:
    """`java -version` of the runtime the embedded server uses."""
    try:
        java = java_executable(configured)
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except Exception as exc:  # noqa: BLE001 (recorded, not fatal)
        return {"executable": configured, "version": None, "version_output": str(exc)}
    text = (out.stderr or out.stdout).strip()
    m = re.search(r'version "([^"]+)"', text)
    return {"executable": java, "version": m.group(1) if m else None, "version_output": text}


#: Committed outputs of runs and benchmarks, not inputs: changes there leave a checkout clean.
RECORD_PATHS = ("results", "reference", "archive", "findings", "docs/images", "README.md")


def git_info(workflow_dir: Path | None) -> dict[str, Any]:
    """The commit of the workflow's checkout (None if not a git checkout or no commit yet)."""
    if workflow_dir is None:
        return {"git_commit": None, "git_dirty": None}

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(
                ["git", "-C", str(workflow_dir), *args], capture_output=True, text=True, timeout=30
            )
        except OSError:
            return None
        return out.stdout.strip() if out.returncode == 0 else None

    commit = git("rev-parse", "--verify", "-q", "HEAD")
    # Dirty means code or config that differ from the commit: the committed outputs (a run
    # rewrites results/, findings and the archive grow) say nothing about what ran.
    outputs = [f":(exclude){path}" for path in RECORD_PATHS]
    status = (
        git("status", "--porcelain", "--untracked-files=no", "--", ".", *outputs)
        if commit
        else None
    )
    return {"git_commit": commit or None, "git_dirty": None if status is None else bool(status)}


#: Settings that hold secrets, for a server whose SHOW PARAMETERS has no `sensitive` column.
_SECRET_SETTING = re.compile(r"password|secret|token", re.IGNORECASE)


def _sensitive(param: dict[str, Any]) -> bool:
    """A setting QuestDB marks sensitive (http.password, ...): left out, value and all."""
    return bool(param.get("sensitive")) or bool(
        _SECRET_SETTING.search(str(param.get("property_path", "")))
    )


def questdb_info(qdb: QuestDB, mode: str) -> dict[str, Any]:
    """Version and non-default parameters of a running server."""
    try:
        body = qdb.sql("(SHOW PARAMETERS) WHERE value_source <> 'default'")
    except QuestDBError:  # a release whose SHOW PARAMETERS cannot be filtered: filtered here
        body = qdb.sql("SHOW PARAMETERS")
    names = [c["name"] for c in body.get("columns", [])]
    params = [p for row in body.get("dataset", [])
              if not _sensitive(p := dict(zip(names, row, strict=False)))
              and p.get("value_source", "set") != "default"]  # fmt: skip
    params.sort(key=lambda p: str(p.get("property_path")))
    return {
        "mode": mode,
        "version": qdb.release(),
        "build": qdb.version(),  # "Build Information: QuestDB 9.3.4, JDK 24.0.2, Commit Hash …"
        "non_default_parameters": params,
    }


def collect_environment(
    config: dict[str, Any],
    qdb: QuestDB,
    lock_path: Path,
    workflow_dir: Path | None = None,
    jar: Path | None = None,
) -> dict[str, Any]:
    qdb_config = config.get("questdb", {})
    mode = qdb_config.get("mode", "embedded")
    questdb = questdb_info(qdb, mode)
    questdb["jar"] = str(jar) if jar else None
    if qdb_config.get("tls"):  # whether the server's certificate was verified (tls_verify)
        questdb["tls_verify"] = bool(qdb_config.get("tls_verify", True))
    java = java_info(qdb_config.get("java")) if mode == "embedded" else None
    return {
        "schema_version": SCHEMA_VERSION,
        "timestamp_utc": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        # The config as the run resolved it (schema defaults filled in): a run file set explains
        # itself without the checkout it came from.
        "workflow": {
            **git_info(workflow_dir),
            "config_hash": config_hash(config),
            "config": recorded_config(config),
        },  # fmt: skip
        "machine": machine_info(),
        "python": python_info(),
        "java": java
        or {"executable": None, "version": None, "version_output": "external server: not known"},
        "questdb": questdb,
        "ilp_protocol_version": config.get("ilp_protocol_version"),
        "packages": package_versions(lock_path),
        # The server and the client on cores of their own (readers.pin_cores), when asked.
        **(
            {"pinning": dict(pins)}
            if (pins := (config.get("readers") or {}).get("pin_cores"))
            else {}
        ),  # fmt: skip
    }


def recorded_config(config: dict[str, Any]) -> dict[str, Any]:
    """The config as a record holds it; without the `readers` section while it is off, so a run
    without readers records what it recorded before they existed."""
    out = masked_config(config)
    if readers_off(out.get("readers")):
        out.pop("readers", None)
    return out


def write_environment(env: dict[str, Any], path: Path) -> None:
    write_text_atomic(path, json.dumps(env, indent=2, default=str) + "\n")
    log.info(
        "wrote %s (QuestDB %s, %d packages)", path, env["questdb"]["version"], len(env["packages"])
    )


def server_entry(label: str, qdb: QuestDB, java: dict[str, Any], jar: Path | None) -> dict:
    """One server of the config as it ran: its version and every non-default property, read
    back from the server (SHOW PARAMETERS), the Java it ran on and the one its classes target."""
    from ingestbench.server.jar import class_java

    info = questdb_info(qdb, "embedded")
    return {"label": label, **info, "jar": str(jar) if jar else None,
            "java": {"runtime": java.get("version"),
                     "classes": class_java(jar) if jar else None}}  # fmt: skip


def record_environment(
    config: dict[str, Any],
    out_path: Path,
    lock_path: Path,
    workflow_dir: Path | None = None,
    jar: Path | None = None,
    server_log: Path | None = None,
) -> dict[str, Any]:
    """Start (or reach) the configured QuestDB, collect everything and write environment.json;
    with several servers (server.versions), each started in turn and listed under `servers`."""
    from ingestbench.server.configured import questdb_server
    from ingestbench.server.jar import server_jar
    from ingestbench.server.versions import server_questdb, servers

    each = servers(config) if config["questdb"]["mode"] == "embedded" else []
    if len(each) <= 1:  # the record as it always was
        with questdb_server(QuestDBSettings.from_config(config), jar=jar,
                            log_path=server_log) as qdb:  # fmt: skip
            env = collect_environment(config, qdb, lock_path, workflow_dir=workflow_dir, jar=jar)
        write_environment(env, out_path)
        return env
    java = java_info(config["questdb"].get("java"))
    entries, env = [], None
    for server in each:
        settings = QuestDBSettings.from_config(
            {"questdb": server_questdb(config["questdb"], server)}
        )
        its_jar = server_jar(settings)
        with questdb_server(settings, jar=its_jar, log_path=server_log) as qdb:
            if env is None:  # the first server stands for the config's, as with one server
                env = collect_environment(config, qdb, lock_path, workflow_dir, jar=its_jar)
            entries.append(server_entry(server.label, qdb, java, its_jar))
    env["servers"] = entries
    write_environment(env, out_path)
    return env
