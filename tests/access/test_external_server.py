"""`ingestbench server` (a server you run yourself) and the workflow against it (mode: external)."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pandas as pd
import psutil
import pytest
import yaml

from ingestbench.dev.workflow_copy import copy_workflow
from tests.helpers import REPO, ctrl_c_default, snakemake_command, tiny_variants
from tests.helpers import TEST_CONFIG as CONFIG


def tiny_config(**questdb) -> dict:
    config = yaml.safe_load(CONFIG.read_text())
    # A loaded CI machine can take a while to start Java; these tests are about behaviour.
    config["questdb"] = {"startup_timeout_s": 300, **questdb}
    return config


def start_server(tmp_path: Path, *flags: str) -> tuple[subprocess.Popen, str]:
    """`ingestbench server` as a user runs it; returns it and what it printed up to its block."""
    config = tmp_path / "server.yaml"
    config.write_text(yaml.safe_dump(tiny_config()))
    cmd = [sys.executable, "-m", "ingestbench.cli", "server", "--config", str(config), *flags]
    server = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              preexec_fn=ctrl_c_default)  # fmt: skip
    printed = []
    for line in server.stdout:
        printed.append(line)
        if line.startswith("  copy_root:"):  # the last line of the block
            return server, "".join(printed)
    server.wait(60)
    raise AssertionError(f"ingestbench server exited early: {server.stderr.read()[-3000:]}")


def stop_server(server: subprocess.Popen) -> None:
    if server.poll() is None:
        server.send_signal(signal.SIGINT)
        server.wait(120)


EXTERNAL_VARIANTS = [
    {"library": "pandas", "method": "dataframe", "format": "parquet", "transport": "http"},
    {"library": "polars", "method": "dataframe", "format": "csv", "transport": "tcp"},
    {"method": "server_csv"},
]


@pytest.fixture(scope="module")
def external_run(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("external")
    server, printed = start_server(tmp_path)
    try:
        block = yaml.safe_load(printed[printed.index("questdb:") :])
        questdb_pid = int(re.search(r"pid (\d+)", printed).group(1))
        workdir = copy_workflow(tmp_path_factory.mktemp("workflow"))
        config = tiny_config()
        # what external mode changes, not every method (the tiny config's run has them all):
        # a client over HTTP and over TCP, and an import reading the server's copy_root
        config["variants"] = EXTERNAL_VARIANTS
        config["questdb"] = block["questdb"]
        (workdir / "config.external.yaml").write_text(yaml.safe_dump(config))
        cmd = snakemake_command("config.external.yaml")
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, cwd=workdir)
    finally:
        stop_server(server)
    return workdir, result, server, block, questdb_pid


def test_the_server_prints_a_block_for_mode_external_on_loopback(external_run):
    _, _, _, block, _ = external_run
    qdb = block["questdb"]
    assert qdb["mode"] == "external" and qdb["host"] == "127.0.0.1"
    assert qdb["http_port"] > 0 and qdb["ilp_port"] > 0 and qdb["copy_root"]


def test_the_workflow_runs_and_validates_against_it(external_run):
    workdir, result, _, _, _ = external_run
    assert result.returncode == 0, result.stderr[-4000:]
    summary = pd.read_csv(workdir / "results" / "summary.csv")
    assert len(summary) == len(EXTERNAL_VARIANTS) and summary["validated"].all()
    assert set(summary["method"]) == {"dataframe", "server_csv"}
    env = yaml.safe_load((workdir / "results" / "environment.json").read_text())
    assert env["questdb"]["mode"] == "external"


def test_ctrl_c_stops_the_server_and_its_questdb(external_run):
    _, _, server, block, questdb_pid = external_run
    assert server.returncode == 0
    assert not psutil.pid_exists(questdb_pid)
    assert not Path(block["questdb"]["copy_root"]).exists()  # its data directory went too


def test_a_busy_port_is_refused_with_the_fix(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        config = tmp_path / "c.yaml"
        config.write_text(yaml.safe_dump(tiny_config()))
        cmd = [sys.executable, "-m", "ingestbench.cli", "server", "--config", str(config),
               "--http-port", str(port)]  # fmt: skip
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert f"port {port} on 127.0.0.1 is in use" in result.stderr
    assert "--http-port" in result.stderr and "Traceback" not in result.stderr


def test_external_mode_keeps_ingestions_one_at_a_time_under_the_slurm_profile(tmp_path):
    """The slurm profile lifts `questdb` (a server per node); one external server still takes
    one ingestion at a time through `external_questdb`, limited to 1 by the workflow profile."""
    default = yaml.safe_load((REPO / "profiles" / "default" / "config.yaml").read_text())
    slurm = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())
    assert default["resources"]["external_questdb"] == 1
    assert "resources" not in slurm  # the workflow profile's limits apply unchanged
    assert slurm["set-resources"]["ingest"]["questdb"] == 0
    workdir = copy_workflow(tmp_path)
    config = tiny_config(mode="external", copy_root=str(tmp_path))
    (workdir / "config.external.yaml").write_text(yaml.safe_dump(config))
    cmd = snakemake_command("config.external.yaml", "-n", "results/summary.csv",
                            profile="profiles/slurm")  # fmt: skip
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=workdir)
    assert result.returncode == 0, result.stderr[-3000:]
    # "rule ingest:" at the start of a line, or indented inside a group job (ingest + validate)
    ingest = re.findall(r"^ *rule ingest:\n(?: +.*\n)*? +resources: (.*)$", result.stdout, re.M)
    assert len(ingest) == tiny_variants()
    assert all("external_questdb=1" in r and "questdb=0" in r for r in ingest)
