"""Shared fixtures (a real QuestDB server from the Maven Central jar, a tiny TSBS dataset), and the
tier markers: a test's tier is the folder it lives in (unit, integration, workflow, browser,
benchmarks, access, faults, cluster), so `pytest -m unit` or `make test-quick` pick tiers
without a mark on any test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ingestbench.server.jar import fetch_jar
from ingestbench.server.process import embedded_server
from tests.helpers import QUESTDB_VERSION, STARTUP_S, TESTS

TIERS = ("unit", "integration", "workflow", "browser", "benchmarks", "access", "faults", "cluster")
# A test that takes one of these fixtures needs a QuestDB server (or its jar): marked `server`.
SERVER_FIXTURES = {"questdb", "questdb_jar"}
#: The order pytest-xdist workers take the tiers in (`make test`): the long workflow modules
#: first and the many short unit modules last, which fill the gaps so no worker idles at the end.
SLOW_FIRST = ("workflow", "access", "benchmarks", "faults", "cluster", "integration", "browser",
              "unit")  # fmt: skip


def _tier(item) -> str:
    return Path(item.path).resolve().relative_to(TESTS).parts[0]


def pytest_collection_modifyitems(config, items) -> None:
    """Mark each test with its folder's tier, and `server` when it uses a server fixture (so that
    `-m "not server"` needs no Java); on xdist's workers, order the tiers slowest first."""
    for item in items:
        tier = _tier(item)
        if tier not in TIERS:
            raise pytest.UsageError(
                f"{item.nodeid}: tests live in one of tests/{{{','.join(TIERS)}}}/"
            )
        item.add_marker(getattr(pytest.mark, tier))
        if SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.server)
    if hasattr(config, "workerinput"):  # every worker sorts alike: xdist needs one order
        items.sort(key=lambda item: SLOW_FIRST.index(_tier(item)))


def pytest_collection_finish(session) -> None:
    """A SLURM client whose controller does not answer (SLURM installed, its daemons stopped)
    makes every Snakemake start wait 10 s: the SLURM executor plugin runs `scontrol show config`
    as it loads. A run without cluster tests reads an empty SLURM config instead, on which
    scontrol fails at once, as on a machine without SLURM."""
    if not any(_tier(item) == "cluster" for item in session.items):
        os.environ["SLURM_CONF"] = os.devnull


@pytest.fixture(scope="session")
def questdb_jar() -> Path:
    return fetch_jar(QUESTDB_VERSION)


@pytest.fixture(scope="session")
def questdb(questdb_jar, tmp_path_factory):
    """One real embedded server for the test session (tests use their own table names)."""
    log = tmp_path_factory.mktemp("questdb") / "server.log"
    with embedded_server(questdb_jar, startup_timeout_s=STARTUP_S, log_path=log) as qdb:
        yield qdb


@pytest.fixture(autouse=True)
def _drop_the_tests_tables(request):
    """The session's server keeps every table a test made, each with files open: hundreds of
    tables exhaust its open files (errno 24, a suspended table). Drop what each test made."""
    if "questdb" not in request.fixturenames:
        yield
        return
    qdb = request.getfixturevalue("questdb")

    def tables() -> set[str]:
        return {row[0] for row in qdb.rows("SELECT table_name FROM tables()")}

    before = tables()
    yield
    for table in tables() - before:
        qdb.sql(f'DROP TABLE IF EXISTS "{table}"')


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
