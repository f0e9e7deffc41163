"""A secured server's certificate as users first set one up: self-signed, with or without
CA:TRUE, before a TLS terminator in front of a real QuestDB. A certificate the QuestDB client
would refuse is named in one sentence before any row; `questdb.tls_verify: false` loads over
HTTPS and TCPS with a warning, and the environment record says verification was off."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from ingestbench.config import QuestDBSettings, validate_config
from ingestbench.server.access import AccessError
from ingestbench.server.certificate import CA_AS_SERVER, SELF_SIGNED, UNVERIFIED
from ingestbench.server.configured import questdb_server
from tests.helpers import REPO
from tests.tls_proxy import self_signed, tls_terminator

pytestmark = pytest.mark.server


@pytest.fixture
def terminated(questdb, tmp_path, request):
    """The session's server behind TLS with a self-signed certificate (CA:TRUE when the test is
    parametrized so): (questdb block, certificate)."""
    cert, key = self_signed(tmp_path, "test-server", ca=getattr(request, "param", True))
    with (tls_terminator(questdb.http_port, cert, key) as http,
          tls_terminator(questdb.ilp_port, cert, key) as ilp):  # fmt: skip
        yield {"mode": "external", "host": "127.0.0.1", "http_port": http, "ilp_port": ilp,
               "tls": True}, cert  # fmt: skip


def _settings(block: dict) -> QuestDBSettings:
    config = {"datasets": [{"label": "a", "scale": 1, "epochs": 1}],
              "variants": [{"method": "dataframe"}], "questdb": block}  # fmt: skip
    return QuestDBSettings.from_config(validate_config(config))


def _refusal(block: dict) -> str:
    with pytest.raises(AccessError) as caught, questdb_server(_settings(block)):
        pass
    return str(caught.value)


def test_a_self_signed_ca_certificate_as_the_servers_own_is_named(terminated):
    block, cert = terminated  # the client refuses it even when tls_roots holds it
    message = _refusal({**block, "tls_roots": str(cert)})
    where = f"127.0.0.1:{block['http_port']}"
    assert message == CA_AS_SERVER.format(where=where, subject="CN=test-server")


@pytest.mark.parametrize("terminated", [False], indirect=True)
def test_a_self_signed_certificate_no_ca_vouches_for_is_named(terminated):
    block, _ = terminated
    message = _refusal(block)
    where = f"127.0.0.1:{block['http_port']}"
    assert message == SELF_SIGNED.format(where=where, subject="CN=test-server",
                                         roots="the system's CAs")  # fmt: skip


@pytest.mark.parametrize("transport", ["http", "tcp"])
def test_tls_verify_false_loads_with_a_warning(terminated, tiny_dataset, tmp_path, transport):
    block, _ = terminated
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"warmup_rows": 0, "questdb": {**block, "tls_verify": False}}))
    out = tmp_path / "run.json"
    cmd = [sys.executable, "-m", "ingestbench.cli", "ingest",
           f"pandas-dataframe-parquet-{transport}", "--data", str(tiny_dataset["parquet"]),
           "--config", str(config), "--repeats", "1", "--out", str(out)]  # fmt: skip
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=REPO)
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(out.read_text())["rows"] == 2000
    assert UNVERIFIED.format(host="127.0.0.1") in result.stderr


def test_the_environment_record_says_verification_was_off(terminated, tmp_path):
    from ingestbench.config import load_config
    from ingestbench.ingest.environment import record_environment

    block, _ = terminated
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"questdb": {**block, "tls_verify": False}}))
    env = record_environment(load_config(path), tmp_path / "env.json", REPO / "requirements.lock")
    assert env["questdb"]["tls_verify"] is False
    assert json.loads((tmp_path / "env.json").read_text())["questdb"]["tls_verify"] is False
