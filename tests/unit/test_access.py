"""A secured server's settings: secrets from the environment only, masked wherever shown; the
schema's checks of host and auth; the run's own table names (no server needed)."""

from __future__ import annotations

import copy

import pytest
import yaml

from ingestbench.config import ConfigError, validate_config
from ingestbench.ingest.methods.ilp_file import renamed
from ingestbench.server.access import MASK, Access, AccessError, IlpKey, Secret
from ingestbench.server.handle import QuestDB
from ingestbench.workflow.result_keys import config_hash
from tests.helpers import TEST_CONFIG

AUTH = {
    "http": {"username": "admin", "password_env": "TEST_QDB_PASSWORD"},
    "tcp": {"username": "ingester", "token_env": "TEST_QDB_KEY", "token_x": "x1", "token_y": "y1"},
}


def config(**questdb) -> dict:
    base = yaml.safe_load(TEST_CONFIG.read_text())
    base["questdb"] = {"mode": "external", **questdb}
    return base


def test_a_secret_never_prints():
    secret = Secret("hunter2")
    assert secret.reveal() == "hunter2"
    assert "hunter2" not in f"{secret} {secret!r} {[secret]} {Access(http_password=secret)}"


def test_secrets_come_from_the_variables_the_config_names(monkeypatch):
    key = IlpKey.generate()
    monkeypatch.setenv("TEST_QDB_PASSWORD", "pw;with;semicolons")
    monkeypatch.setenv("TEST_QDB_KEY", key.d.reveal())
    access = Access.from_settings(False, None, AUTH)
    assert access.http_password.reveal() == "pw;with;semicolons"
    qdb = QuestDB("db.example.com", 9000, 9009, access=access)
    http = qdb.ilp_conf("http", 2)
    assert (
        http.startswith("http::addr=db.example.com:9000;")
        and "password=pw;;with;;semicolons;" in http
    )
    tcp = qdb.ilp_conf("tcp", 2)
    assert f"username=ingester;token={key.d.reveal()};token_x=x1;token_y=y1;" in tcp
    for text in (http, tcp, f"failed: {http}"):
        masked = access.mask(text)
        assert "pw;with" not in masked and key.d.reveal() not in masked and MASK in masked


def test_a_missing_variable_is_named_with_the_fix(monkeypatch):
    monkeypatch.delenv("TEST_QDB_PASSWORD", raising=False)
    expected = "names the environment variable TEST_QDB_PASSWORD, which is not set; export"
    with pytest.raises(AccessError, match=expected):
        Access.from_settings(False, None, {"http": AUTH["http"]})


def test_tls_switches_every_scheme_and_names_the_ca(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    qdb = QuestDB("db", 9000, 9009, access=Access.from_settings(True, str(ca), {}))
    assert qdb.url == "https://db:9000"
    assert qdb.ilp_conf("tcp", 2).startswith("tcps::addr=db:9009;")
    assert f"tls_verify=on;tls_roots={ca};" in qdb.ilp_conf("http", 2)
    with pytest.raises(AccessError, match="tls_roots is .* which is not a file"):
        Access.from_settings(True, str(tmp_path / "missing.pem"), {})


def test_an_ilp_key_derives_its_public_half():
    key = IlpKey.generate()
    again = IlpKey.from_private(key.d.reveal())
    assert (again.x, again.y) == (key.x, key.y)
    assert key.auth_db_line("me") == f"me\tec-p-256-sha256\t{key.x}\t{key.y}\n"


def test_the_schema_takes_names_of_variables_never_secrets():
    assert validate_config(config(auth=AUTH, tls=True))["questdb"]["auth"] == AUTH
    for bad in ({"http": {"username": "admin", "password": "secret"}},
                {"http": {"username": "admin", "password_env": "not a name"}}):  # fmt: skip
        with pytest.raises(ConfigError, match="questdb.auth"):
            validate_config(config(auth=bad))


@pytest.mark.parametrize("host", ["admin:pw@db", "db;password=x", "http://db", "db/x"])
def test_host_is_a_host_and_nothing_else(host):
    with pytest.raises(ConfigError, match=r"'questdb.host'"):
        validate_config(config(host=host))


def test_credentials_are_for_an_external_server():
    with pytest.raises(ConfigError, match="auth, tls reach a server you run"):
        validate_config(config(mode="embedded", auth=AUTH, tls=True))


def test_an_open_server_keeps_the_hash_a_secured_one_changes_it():
    plain = validate_config(config())
    older = copy.deepcopy(plain)  # a config from before the access keys
    for key in ("tls", "tls_roots", "auth", "table_prefix", "keep_tables"):
        del older["questdb"][key]
    assert config_hash(plain) == config_hash(older)
    assert config_hash(validate_config(config(tls=True))) != config_hash(plain)


def test_the_runs_tables_get_the_prefix_on_every_ilp_line():
    block = memoryview(b"cpu,hostname=a v=1 1\nreadings,name=b v=2 2\n")
    assert bytes(renamed(block, b"ingestbench_ab12_")) == (
        b"ingestbench_ab12_cpu,hostname=a v=1 1\ningestbench_ab12_readings,name=b v=2 2\n"
    )
    qdb = QuestDB("db", 1, 2, table_prefix="ingestbench_ab12_")
    assert qdb.table_name("diagnostics") == "ingestbench_ab12_diagnostics"


def test_server_auth_takes_the_secrets_from_the_environment_or_makes_them(monkeypatch):
    from ingestbench.server.serve import config_block, server_access

    key = IlpKey.generate()
    monkeypatch.setenv("QDB_PASSWORD", "given")
    monkeypatch.setenv("QDB_ILP_KEY", key.d.reveal())
    access, made = server_access()
    assert not made and access.http_password.reveal() == "given" and access.tcp_token_x == key.x
    block = config_block(QuestDB("127.0.0.1", 1, 2, copy_root="/x", access=access), "127.0.0.1")
    assert "given" not in block and key.d.reveal() not in block
    assert yaml.safe_load(block)["questdb"]["auth"]["tcp"]["token_y"] == key.y
    # PGWire: the HTTP user and its password's variable, never the password
    assert yaml.safe_load(block)["questdb"]["auth"]["pg"] == {
        "username": access.pg_user,
        "password_env": "QDB_PASSWORD",
    }
    assert access.pg_password.reveal() == "given" and access.mask("pw given") == "pw ****"
    assert block.rstrip().splitlines()[-1] == "  copy_root: /x"
    monkeypatch.delenv("QDB_PASSWORD")
    monkeypatch.delenv("QDB_ILP_KEY")
    access, made = server_access()
    assert set(made) == {"QDB_PASSWORD", "QDB_ILP_KEY"}
    assert made["QDB_PASSWORD"] == access.http_password.reveal()
    assert IlpKey.from_private(made["QDB_ILP_KEY"]).x == access.tcp_token_x


def test_settings_that_hold_secrets_are_never_recorded():
    from ingestbench.ingest.environment import _sensitive

    assert _sensitive({"property_path": "http.password", "sensitive": True})
    assert _sensitive({"property_path": "pg.password"})  # a server without the column
    assert not _sensitive({"property_path": "shared.worker.count", "sensitive": False})
