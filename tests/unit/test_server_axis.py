"""The server axis (ingestbench.server.versions): each version and settings set a server of its
own, whose jobs' settings name it alone; each version as it is."""

from __future__ import annotations

import copy

import pytest

from ingestbench.catalogue import METHODS
from ingestbench.config import ConfigError, QuestDBSettings, load_config, validate_config
from ingestbench.server.versions import (
    env_name,
    known_properties,
    missing,
    server_labels,
    translated,
)
from ingestbench.workflow.result_keys import job_config
from ingestbench.workflow.rule_inputs import ingest_settings
from tests.helpers import REPO

CONFIG = load_config(REPO / "config.yaml")
VARIANT = "pandas-dataframe-parquet-http"


def axis(versions, settings=()):
    config = copy.deepcopy(CONFIG)
    config["questdb"].pop("version")
    config["questdb"].update(versions=list(versions), settings=list(settings))
    return validate_config(config)


def test_the_default_config_is_one_server_whose_settings_are_what_they_were():
    assert server_labels(CONFIG) == ["9.3.4"]
    questdb = ingest_settings(CONFIG, VARIANT)["questdb"]
    assert "versions" not in questdb and "settings" not in questdb
    assert questdb["version"] == "9.3.4"


def test_each_version_and_settings_set_is_a_server_of_its_own():
    config = axis(["8.1.4", "9.3.4"], [{"name": "uncommitted100k",
                                        "cairo.max.uncommitted.rows": 100000}])  # fmt: skip
    assert server_labels(config) == ["8.1.4", "8.1.4-uncommitted100k", "9.3.4",
                                     "9.3.4-uncommitted100k"]  # fmt: skip
    old = ingest_settings(config, VARIANT, "8.1.4")
    assert old["questdb"]["version"] == "8.1.4" and old["ilp_protocol_version"] == 1
    tuned = ingest_settings(config, VARIANT, "9.3.4-uncommitted100k")
    assert tuned["questdb"]["settings"] == [{"name": "uncommitted100k",
                                             "cairo.max.uncommitted.rows": 100000}]  # fmt: skip
    # the newest default's settings are those of a config of that version alone
    assert ingest_settings(config, VARIANT, "9.3.4") == ingest_settings(CONFIG, VARIANT)
    job = QuestDBSettings.from_config(job_config(tuned, config))
    assert job.properties == {"cairo.max.uncommitted.rows": 100000}


def test_version_and_versions_together_and_a_name_twice_are_refused():
    config = copy.deepcopy(CONFIG)
    config["questdb"]["versions"] = ["9.3.4"]  # version is set too: filled by the schema
    with pytest.raises(ConfigError, match="version and versions are both set"):
        validate_config(config)
    with pytest.raises(ConfigError, match="names two sets"):
        axis(["9.3.4"], [{"name": "a", "cairo.commit.mode": "sync"}, {"name": "a"}])


def test_a_version_without_a_feature_makes_its_paths_unsupported_with_the_reason():
    needs = METHODS["server_parquet"].server_features
    assert missing("7.4.2", needs) == (
        "read_parquet() arrived in QuestDB 8.1.4; this server runs 7.4.2"
    )
    # 8.1.4 to 9.0.3 read a Parquet file's nanosecond times as microseconds (measured)
    assert missing("8.1.4", needs) == (
        "read_parquet() of nanosecond timestamps as such arrived in QuestDB 9.1.1; this server "
        "runs 8.1.4"
    )
    assert missing("9.1.1", needs) is None
    assert "ILP protocol 2" in missing("8.2.0", METHODS["vectorized"].server_features)


def test_settings_are_written_in_each_versions_names():
    assert translated("8.2.0", {"query.timeout": "10m"}) == {"query.timeout.sec": "600"}
    assert translated("9.3.4", {"query.timeout": "10m"}) == {"query.timeout": "10m"}
    assert env_name("cairo.max.uncommitted.rows") == "QDB_CAIRO_MAX_UNCOMMITTED_ROWS"
    assert "shared.worker.nap.threshold" not in known_properties("7.4.2")
    assert "shared.write.worker.count" in known_properties("9.3.4")
    assert "query.timeout" not in known_properties("8.2.0")


def test_the_preflight_refuses_an_unserved_version_and_an_unknown_property():
    from ingestbench.server.versions import axis_problems

    config = axis(["9.3.3", "8.2.0"], [{"name": "t", "shared.worker.nap.treshold": 5,
                                         "query.timeout": "1m"}])  # fmt: skip
    problems = axis_problems(config)
    assert problems[0].startswith("questdb.versions: QuestDB 9.3.3 is not a release")
    assert "9.3.2, 9.3.4" in problems[0]
    assert any("knows no property shared.worker.nap.treshold" in p
               and "shared.worker.nap.threshold" in p for p in problems)  # fmt: skip
    assert not any("query.timeout" in p for p in problems)  # written as query.timeout.sec on 8.2
    assert axis_problems(axis(["9.3.3"]), cached=lambda v: True) == []


def test_the_preflight_refuses_a_property_set_twice_on_one_server():
    from ingestbench.server.versions import axis_problems

    # one property under its name and its older one: the same key on 8.2.0
    twice = axis(["8.2.0"], [{"name": "t", "query.timeout": "1m", "query.timeout.sec": 60}])
    (problem,) = axis_problems(twice, cached=lambda v: True)
    assert problem == ("questdb.settings 't' sets one property twice on QuestDB 8.2.0 (under its "
                       "name and an older one); keep one.")  # fmt: skip
    pooled = axis(["9.3.4"], [{"name": "p", "shared.worker.count": 2}])
    pooled["questdb"]["pools"]["shared"] = 1
    (problem,) = axis_problems(pooled)
    assert problem == ("questdb.settings 'p' sets shared.worker.count, which "
                       "questdb.pools.shared sets too; keep one of them.")  # fmt: skip


def test_readers_and_paced_on_a_version_before_the_row_counts_are_refused_with_the_reason():
    from ingestbench.server.versions import axis_problems

    config = axis(["9.2.3", "9.3.4"])
    config["readers"]["counts"] = [0, 2]
    config["paced"] = {}
    problems = axis_problems(config)
    assert problems[0] == (
        "readers.counts: readers beside ingestion read tables()' table_row_count and "
        "wal_pending_row_count, which arrived in QuestDB 9.3.4; QuestDB 9.2.3 lacks them: drop "
        "readers.counts or those versions."
    )
    assert problems[1].startswith("paced: paced ingestion read")
    config["readers"]["counts"] = []
    del config["paced"]
    assert axis_problems(config) == []
