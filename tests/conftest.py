"""Shared fixtures: a real QuestDB server (the Maven Central jar) and a tiny TSBS dataset."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingestbench.server.jar import fetch_jar
from ingestbench.server.process import embedded_server

QUESTDB_VERSION = "9.3.4"
# A loaded machine can take over a minute to start a JVM; tests wait, they do not time servers.
STARTUP_S = 300
TEST_CONFIG = Path(__file__).parent / "data" / "config.test.yaml"


def tiny_variants() -> int:
    """How many variants the tiny workflow config (tests/data/config.test.yaml) runs."""
    from ingestbench.config import load_config
    from ingestbench.variants import variants_by_dataset

    config = load_config(TEST_CONFIG)
    labels = [d["label"] for d in config["datasets"]]
    return sum(len(vs) for vs in variants_by_dataset(config, labels).values())


# A test that takes one of these fixtures needs a QuestDB server (or its jar): marked `server`.
SERVER_FIXTURES = {"questdb", "questdb_jar"}


def pytest_collection_modifyitems(items) -> None:
    """Mark `server` every test that uses a server fixture, so `-m "not server"` needs no Java."""
    for item in items:
        if SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.server)


@pytest.fixture(scope="session")
def questdb_jar() -> Path:
    return fetch_jar(QUESTDB_VERSION)


@pytest.fixture(scope="session")
def questdb(questdb_jar, tmp_path_factory):
    """One real embedded server for the test session (tests use their own table names)."""
    log = tmp_path_factory.mktemp("questdb") / "server.log"
    with embedded_server(questdb_jar, startup_timeout_s=STARTUP_S, log_path=log) as qdb:
        yield qdb


@pytest.fixture(scope="session")
def tiny_dataset(tmp_path_factory):
    """A 2,000-row TSBS cpu dataset (scale 40, 50 epochs) as Parquet and CSV, with its paths."""
    from ingestbench.tsbs import DatasetParams, generate

    out = tmp_path_factory.mktemp("data")
    params = DatasetParams(scale=40, epochs=50, seed=7)
    manifest = generate(params, out, formats=("parquet", "csv"), progress=False)
    return {
        "dir": out,
        "params": params,
        "manifest": manifest,
        "parquet": out / f"{params.name}.parquet",
        "csv": out / f"{params.name}.csv",
    }
