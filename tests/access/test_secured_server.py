"""A secured server that is not the workflow's: `ingestbench server --auth` (HTTP basic auth and
an ILP/TCP key) behind stunnel (TLS with a private CA made here), the workflow run against it
with its secrets in the environment only, and the user's own tables left as they were."""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
import yaml

from ingestbench.config import QuestDBSettings, validate_config
from ingestbench.dev.workflow_copy import copy_workflow
from ingestbench.errors import UserError
from ingestbench.server.access import Access, IlpKey, Secret
from ingestbench.server.configured import questdb_server
from ingestbench.server.handle import QuestDB, QuestDBError
from ingestbench.server.process import free_port
from ingestbench.server.table import recreate_table
from ingestbench.tsbs.columns import cpu_spec
from tests.helpers import ctrl_c_default

STUNNEL = shutil.which("stunnel4") or shutil.which("stunnel")
PASSWORD = f"pw-{secrets.token_hex(12)}"  # distinctive, so a leak anywhere is found
KEY = IlpKey.generate()
SECRETS = {"QDB_PASSWORD": PASSWORD, "QDB_ILP_KEY": KEY.d.reveal()}
#: Every form a secret could leak in: as it is, and inside a basic-auth header.
LEAKS = [s.encode() for s in SECRETS.values()] + [base64.b64encode(f"admin:{PASSWORD}".encode())]

CONFIG = """
repeats: 1
rows_cap: 100
warmup_rows: 50
datasets:
  - {label: cpu, scale: 10, epochs: 20, seed: 5}
  - {label: iot, use_case: iot, scale: 10, epochs: 10, seed: 5}
variants:
  - {library: pandas, method: [rows, iterrows, dataframe, batches, vectorized], format: parquet,
     transport: [http, tcp], batch_rows: 70, datasets: [cpu]}
  - {library: polars, method: [threads, processes], workers: 2, format: csv,
     transport: [http, tcp], datasets: [cpu]}
  - {method: [server_csv, server_copy, server_parquet]}
  - {library: none, method: ilp_file, format: ilp, transport: [http, tcp]}
  - {library: pandas, method: dataframe, format: parquet, transport: [http, tcp], datasets: [iot]}
"""
#: The user's own tables, with rows: the run must leave them exactly as they were.
USER_TABLES = {
    "cpu": "CREATE TABLE cpu (hostname SYMBOL, usage_user DOUBLE, timestamp TIMESTAMP) "
    "TIMESTAMP(timestamp) PARTITION BY DAY WAL",
    "readings": "CREATE TABLE readings (name SYMBOL, latitude DOUBLE, ts TIMESTAMP) "
    "TIMESTAMP(ts) PARTITION BY DAY WAL",
    "diagnostics": "CREATE TABLE diagnostics (name SYMBOL, status LONG, ts TIMESTAMP) "
    "TIMESTAMP(ts) PARTITION BY DAY WAL",
}
USER_ROWS = {
    "cpu": "INSERT INTO cpu VALUES ('mine', 1.5, '2020-01-01T00:00:00Z'), "
    "('mine', 2.5, '2020-01-02T00:00:00Z')",
    "readings": "INSERT INTO readings VALUES ('truck_0', 50.1, '2020-01-01T00:00:00Z')",
    "diagnostics": "INSERT INTO diagnostics VALUES ('truck_0', 3, '2020-01-01T00:00:00Z')",
}


def make_ca(directory: Path, name: str) -> tuple[Path, Path, Path]:
    """A private CA and a certificate it signs for 127.0.0.1 and localhost: (CA PEM, server
    certificate PEM, server key PEM)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    def certificate(subject, issuer, public, signer, ca: bool, san=None):
        now = dt.datetime.now(dt.UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=2))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if san:
            builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
        return builder.sign(signer, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = certificate(f"{name} CA", f"{name} CA", ca_key.public_key(), ca_key, True)
    san = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    cert = certificate("127.0.0.1", f"{name} CA", key.public_key(), ca_key, False, san)
    paths = (directory / f"{name}-ca.pem", directory / f"{name}.pem", directory / f"{name}.key")
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )  # fmt: skip
    )
    return paths


def wait_listening(port: int, process: subprocess.Popen, output: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"stunnel exited early: {output.read_text()[-3000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"stunnel did not listen on port {port}: {output.read_text()[-3000:]}")


@dataclass
class Secured:
    block: dict  # the questdb block `ingestbench server --auth` printed
    printed: str
    tls: dict | None  # the block's TLS variant: stunnel's ports and the CA (None: no stunnel)
    other_ca: Path | None
    questdb_pid: int

    def handle(self) -> QuestDB:
        """An authenticated handle to the server itself (no TLS), as the user's own client."""
        auth = self.block["auth"]
        access = Access(http_user=auth["http"]["username"], http_password=Secret(PASSWORD))
        return QuestDB("127.0.0.1", self.block["http_port"], self.block["ilp_port"],
                       access=access)  # fmt: skip


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("secured")
    (tmp / "server.yaml").write_text(
        yaml.safe_dump({**yaml.safe_load(CONFIG), "questdb": {"startup_timeout_s": 300}})
    )
    cmd = [sys.executable, "-m", "ingestbench.cli", "server", "--auth", "--config",
           str(tmp / "server.yaml")]  # fmt: skip
    env = {**os.environ, **SECRETS}
    with open(tmp / "server.err", "wb") as err:
        server = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env,
                                  preexec_fn=ctrl_c_default)  # fmt: skip
    stunnel = None
    try:
        printed = []
        for line in server.stdout:
            printed.append(line)
            if line.startswith("  copy_root:"):
                break
        text = "".join(printed)
        assert "copy_root" in text, (tmp / "server.err").read_text()[-3000:]
        block = yaml.safe_load(text[text.index("questdb:") :])["questdb"]
        pid = int(text.split("pid ", 1)[1].split(",", 1)[0])
        tls = other_ca = None
        if STUNNEL:
            ca, cert, key = make_ca(tmp, "test")
            other_ca = make_ca(tmp, "other")[0]
            ports = {"http": free_port(), "ilp": free_port()}
            conf = tmp / "stunnel.conf"
            conf.write_text(
                f"foreground = yes\npid =\noutput = {tmp / 'stunnel.log'}\n"
                f"[http]\naccept = 127.0.0.1:{ports['http']}\n"
                f"connect = 127.0.0.1:{block['http_port']}\ncert = {cert}\nkey = {key}\n"
                f"[ilp]\naccept = 127.0.0.1:{ports['ilp']}\n"
                f"connect = 127.0.0.1:{block['ilp_port']}\ncert = {cert}\nkey = {key}\n"
            )
            # Its output to a file: a pipe nobody reads fills up and stops stunnel mid-run.
            with open(tmp / "stunnel.out", "wb") as out:
                stunnel = subprocess.Popen([STUNNEL, str(conf)], stdout=out,
                                           stderr=subprocess.STDOUT)  # fmt: skip
            for port in ports.values():
                wait_listening(port, stunnel, tmp / "stunnel.out")
            tls = {**block, "http_port": ports["http"], "ilp_port": ports["ilp"], "tls": True,
                   "tls_roots": str(ca)}  # fmt: skip
        yield Secured(block, text, tls, other_ca, pid)
    finally:
        if stunnel is not None:
            stunnel.terminate()
            stunnel.wait(60)
        if server.poll() is None:
            server.send_signal(signal.SIGINT)
            server.wait(120)


@pytest.fixture(autouse=True)
def secrets_in_env(monkeypatch):
    """The secrets in this process's environment, as a user exports them; tests change them."""
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)


def settings_of(block: dict) -> QuestDBSettings:
    config = {"datasets": [{"label": "a", "scale": 1, "epochs": 1}],
              "variants": [{"method": "server_csv"}], "questdb": dict(block)}  # fmt: skip
    return QuestDBSettings.from_config(validate_config(config))


def failure(block: dict) -> str:
    """The one sentence reaching the server with `block` fails with."""
    with pytest.raises(UserError) as caught, questdb_server(settings_of(block)):
        pass
    message = str(caught.value)
    assert "\n" not in message and message.endswith(".") and "Traceback" not in message
    assert not any(leak.decode() in message for leak in LEAKS)
    return message


def test_server_auth_prints_the_block_with_variable_names_only(secured):
    auth = secured.block["auth"]
    assert auth["http"] == {"username": "admin", "password_env": "QDB_PASSWORD"}
    assert auth["tcp"]["token_env"] == "QDB_ILP_KEY"
    assert (auth["tcp"]["token_x"], auth["tcp"]["token_y"]) == (KEY.x, KEY.y)
    assert not any(leak.decode() in secured.printed for leak in LEAKS)


def test_the_server_refuses_a_client_without_credentials(secured):
    open_door = QuestDB("127.0.0.1", secured.block["http_port"], secured.block["ilp_port"])
    with pytest.raises(QuestDBError, match=r"asks for credentials \(HTTP 401\); set questdb"):
        open_door.sql("SELECT 1")


def test_a_wrong_password_fails_in_one_sentence(secured, monkeypatch):
    monkeypatch.setenv("QDB_PASSWORD", "not-the-password")
    message = failure(secured.block)
    assert "refused user 'admin' (HTTP 401)" in message and "password_env" in message


def test_a_missing_variable_fails_in_one_sentence(secured, monkeypatch):
    monkeypatch.delenv("QDB_PASSWORD", raising=False)
    message = failure(secured.block)
    assert "QDB_PASSWORD, which is not set" in message


def test_a_wrong_key_fails_in_one_sentence(secured, monkeypatch):
    monkeypatch.setenv("QDB_ILP_KEY", IlpKey.generate().d.reveal())
    message = failure(secured.block)
    assert "refused the ILP/TCP key of user 'ingestbench'" in message


def test_an_unknown_ca_fails_in_one_sentence(secured):
    if secured.tls is None:
        pytest.skip("stunnel is not installed (Debian: stunnel4)")
    message = failure({**secured.tls, "tls_roots": str(secured.other_ca)})
    assert "does not verify against the CA in" in message and "tls_roots" in message
    message = failure({**secured.tls, "tls_roots": None})
    assert "does not verify against the system's CAs" in message


def test_a_table_of_the_runs_name_is_refused_never_dropped(secured):
    qdb = secured.handle()
    qdb.table_prefix = f"ingestbench_{secrets.token_hex(4)}_"
    name = qdb.table_name("cpu")
    qdb.sql(f"CREATE TABLE {name} (v DOUBLE)")
    qdb.sql(f"INSERT INTO {name} VALUES (1.0)")
    try:
        with pytest.raises(QuestDBError, match=f"a table named {name} exists already"):
            recreate_table(qdb, cpu_spec("double", name))
        assert qdb.scalar(f"SELECT count() FROM {name}") == 1 and not qdb.created_tables
    finally:
        qdb.sql(f"DROP TABLE {name}")


def snapshot(qdb: QuestDB) -> dict:
    """Every table on the server, with its rows."""
    tables = sorted(r[0] for r in qdb.rows("SELECT table_name FROM tables()"))
    for table in tables:
        qdb.sql(f"SELECT wait_wal_table('{table}')")
    return {t: qdb.rows(f"SELECT * FROM '{t}'") for t in tables if not t.startswith("sys.")}


@pytest.fixture(scope="module")
def secured_run(secured, tmp_path_factory):
    """The user's tables made, then the workflow (its report, archive and site) against the
    server, over TLS when stunnel is there, the secrets only in the environment."""
    qdb = secured.handle()
    for table, ddl in USER_TABLES.items():
        qdb.sql(ddl)
        qdb.sql(USER_ROWS[table])
    before = snapshot(qdb)
    workdir = copy_workflow(tmp_path_factory.mktemp("workflow"))
    config = yaml.safe_load(CONFIG)
    config["questdb"] = secured.tls or secured.block
    (workdir / "config.secured.yaml").write_text(yaml.safe_dump(config))
    env = {**os.environ, **SECRETS}
    commands = [
        [sys.executable, "-m", "snakemake", "--configfile", "config.secured.yaml", "--cores", "2"],
        [
            sys.executable,
            "-m",
            "snakemake",
            "--configfile",
            "config.secured.yaml",
            "--report",
            "report.html",
        ],
        [sys.executable, "-m", "ingestbench.cli", "archive", "results", "--archive", "archive"],
        [sys.executable, "-m", "ingestbench.cli", "site", "--out", "site/index.html"],
    ]
    results = []
    for cmd in commands:
        results.append(subprocess.run(cmd, capture_output=True, text=True, timeout=3600,
                                      cwd=workdir, env=env))  # fmt: skip
        if results[-1].returncode != 0:
            break
    return workdir, results, before, snapshot(qdb), config


def test_every_method_loads_and_validates_over_http_and_tcp(secured_run):
    workdir, results, _, _, config = secured_run
    assert results[0].returncode == 0, results[0].stderr[-4000:]
    summary = pd.read_csv(workdir / "results" / "summary.csv")
    assert summary["validated"].all()
    methods = {(m, t) for m, t in zip(summary["method"], summary["transport"], strict=True)}
    for method in ("rows", "iterrows", "dataframe", "batches", "vectorized", "threads",
                   "processes", "ilp_file"):  # fmt: skip
        assert {(method, "http"), (method, "tcp")} <= methods, method
    assert {"server_csv", "server_copy", "server_parquet"} <= set(summary["method"])
    assert set(summary["dataset"].str.startswith("iot")) == {True, False}


def test_the_users_tables_are_unchanged_and_nothing_is_left_behind(secured_run):
    _, results, before, after, _ = secured_run
    assert results[0].returncode == 0, results[0].stderr[-4000:]
    assert set(USER_TABLES) <= set(before)
    assert after == before


def test_no_secret_in_any_file_the_run_writes_or_anything_it_prints(secured_run):
    workdir, results, _, _, _ = secured_run
    assert all(r.returncode == 0 for r in results), results[-1].stderr[-4000:]
    assert (workdir / "report.html").is_file() and (workdir / "archive").is_dir()
    assert (workdir / "site" / "index.html").is_file()
    for result in results:
        for leak in LEAKS:
            assert leak.decode() not in result.stdout + result.stderr
    files = [p for p in workdir.rglob("*") if p.is_file() and not p.is_symlink()]
    assert len(files) > 50  # results, logs, Snakemake's metadata, the report, archive and site
    leaked = [p for p in files for leak in LEAKS if leak in p.read_bytes()]
    assert not leaked
