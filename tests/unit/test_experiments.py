"""Each experiment's entry (ingestbench.workflow.experiments) names what exists: its rules file,
its functions, its charts, its bench, its schema section; the keys that cannot change a result
follow the list."""

from __future__ import annotations

import pytest

from ingestbench.charts.registry import CHARTS
from ingestbench.config import load_config
from ingestbench.publish.site import PAGE
from ingestbench.schema import load_schema
from ingestbench.workflow.experiments import EXPERIMENTS, active, hook, included, settings
from ingestbench.workflow.result_keys import NOT_BENCHMARK_KEYS, config_hash
from tests.helpers import REPO

HOOKS = ("settings", "listing", "check", "runs", "summary", "archive")


@pytest.mark.parametrize("experiment", EXPERIMENTS, ids=lambda e: e.key)
def test_each_entry_names_what_exists(experiment):
    assert (REPO / experiment.rules).is_file()
    assert experiment.key in load_schema()["properties"]
    assert experiment.bench is None or (REPO / experiment.bench).is_file()
    assert set(experiment.charts) <= set(CHARTS)
    for name in HOOKS:
        target = getattr(experiment, name)
        assert target is None or callable(hook(target)), (experiment.key, name)
    assert (experiment.key in NOT_BENCHMARK_KEYS) == (not experiment.changes_backfill)
    # its page script registers its section; an archived part is what that section shows
    assert experiment.page is None or (PAGE / experiment.page).is_file()
    assert (experiment.page is None) == (experiment.archive is None)


def test_the_keys_are_unique_and_the_shipped_configs_turn_each_on():
    assert len({e.key for e in EXPERIMENTS}) == len(EXPERIMENTS)
    default = load_config(REPO / "config.yaml")
    assert {e.key for e in active(default)} == {"dtype_matrix"}  # outside all: make run-dtypes
    for key, config in (("paced", "paced"), ("delivery", "delivery"), ("readers", "readers")):
        assert key in {e.key for e in active(load_config(REPO / "configs" / f"{config}.yaml"))}
    assert {e.key for e in included(default)} == {"readers", "dtype_matrix"}


def test_a_key_that_cannot_change_the_backfill_leaves_its_hash_alone():
    base = load_config(REPO / "configs" / "paced.yaml")
    without = {k: v for k, v in base.items() if k != "paced"}
    assert config_hash(base) == config_hash(without)
    delivery = load_config(REPO / "configs" / "delivery.yaml")
    # The questdb block of one server (the first): its version, no other server's keys.
    one_server = {k: v for k, v in delivery["questdb"].items() if k not in ("versions", "settings")}
    assert settings("delivery", delivery) == {
        "delivery": delivery["delivery"],
        "questdb": one_server,
    }
    two = {**delivery, "questdb": {**delivery["questdb"], "versions": ["9.2.3", "9.3.4"]}}
    assert settings("delivery", two, None, "9.2.3")["questdb"]["version"] == "9.2.3"
    assert "versions" not in settings("delivery", two, None, "9.3.4")["questdb"]
