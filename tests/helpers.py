"""What the test tiers share: where the checkout, the fixtures and the tiny config are, and the
QuestDB version the tests run (the schema's default, the one home of that fact)."""

from __future__ import annotations

from pathlib import Path

import yaml

from ingestbench import CHECKOUT as REPO
from ingestbench.schema import SCHEMA_PATH

TESTS = Path(__file__).resolve().parent
#: Hand-written run, validation and environment files (a results folder).
FIXTURE_RESULTS = TESTS / "fixtures" / "runs" / "results"
#: The tiny workflow config the workflow, fault and cluster tiers run.
TEST_CONFIG = TESTS / "data" / "config.test.yaml"
#: A loaded machine can take over a minute to start a JVM; tests wait, they do not time servers.
STARTUP_S = 300
QUESTDB_VERSION: str = yaml.safe_load(SCHEMA_PATH.read_text())["properties"]["questdb"][
    "properties"
]["version"]["default"]

__all__ = [
    "FIXTURE_RESULTS",
    "QUESTDB_VERSION",
    "REPO",
    "STARTUP_S",
    "TESTS",
    "TEST_CONFIG",
    "tiny_variants",
]


def tiny_variants() -> int:
    """How many variants the tiny workflow config (TEST_CONFIG) runs."""
    from ingestbench.config import load_config
    from ingestbench.variants import variants_by_dataset

    config = load_config(TEST_CONFIG)
    labels = [d["label"] for d in config["datasets"]]
    return sum(len(vs) for vs in variants_by_dataset(config, labels).values())
