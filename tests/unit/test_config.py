"""Bad config is caught by the schema before any job runs, with a message naming the key."""

from __future__ import annotations

import copy
import subprocess

import pytest
import yaml

from ingestbench import catalogue
from ingestbench.config import ConfigError, validate_config
from tests.helpers import FIXTURE_RESULTS, REPO, snakemake_command

DEFAULT = yaml.safe_load((REPO / "config.yaml").read_text())


def test_default_config_is_valid_and_defaults_are_filled():
    config = validate_config(copy.deepcopy(DEFAULT))
    assert config["questdb"]["mode"] == "embedded"
    assert config["questdb"]["startup_timeout_s"] == 60
    assert config["questdb"]["worker_idle"] == "park"
    assert config["datasets"][0]["interval"] == "10s"
    assert config["validation"]["on_failure"] == "fail"
    assert config["dtype_matrix"]["methods"] == list(catalogue.names(dtype_matrix=True))
    assert "asyncpg" in config["dtype_matrix"]["methods"]
    assert config["dtype_matrix"]["transports"] == ["http", "tcp", "pg"]


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda c: c.update(repeat=3), "'repeat' is not a key here"),
        (lambda c: c.update(repeats="three"), "'repeats'"),
        (lambda c: c["datasets"][0].update(scale=0), "datasets[0].scale"),
        (lambda c: c["datasets"][0].update(field_type="float"), "datasets[0].field_type"),
        (lambda c: c["variants"][0].update(method="teleport"), "variants[0].method"),
        (lambda c: c["variants"][0].update(transport="udp"), "variants[0].transport"),
        (lambda c: c.setdefault("questdb", {}).update(mode="cloud"), "questdb.mode"),
        (lambda c: c.setdefault("questdb", {}).update(worker_idle="nap"), "questdb.worker_idle"),
        (lambda c: c["variants"][0].update(datasets=["nope"]), "variants[0].datasets"),
        (lambda c: c.update(dtype_matrix={"methods": ["iterrows"]}), "dtype_matrix.methods[0]"),
        (lambda c: c["datasets"][0].update(dedup="yes"), "datasets[0].dedup"),
        (lambda c: c.update(dtype_matrix={"transports": []}), "dtype_matrix.transports"),
    ],
)
def test_a_wrong_key_type_or_value_names_the_key(change, named):
    config = copy.deepcopy(DEFAULT)
    change(config)
    with pytest.raises(ConfigError) as err:
        validate_config(config)
    assert named in str(err.value)
    assert str(err.value).count("\n") == 0


def test_the_old_name_of_the_server_pools_is_refused_with_the_new_one():
    config = copy.deepcopy(DEFAULT)
    config.setdefault("questdb", {})["workers"] = {"shared": 2}
    with pytest.raises(ConfigError) as err:
        validate_config(config)
    assert str(err.value).startswith(
        "invalid config at 'questdb': 'workers' is now called 'pools' (the same keys inside): "
        "rename it; fix that key in your config file"
    )
    config["questdb"]["pools"] = config["questdb"].pop("workers")
    assert validate_config(config)["questdb"]["pools"]["shared"] == 2


def test_snakemake_stops_before_any_job(tmp_path):
    bad = copy.deepcopy(DEFAULT)
    bad["repeats"] = 0
    config = tmp_path / "bad.yaml"
    config.write_text(yaml.safe_dump(bad))
    cmd = snakemake_command(config, "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path),
                            cores=1)  # fmt: skip
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "invalid config at 'repeats'" in result.stderr
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize(
    ("key", "value", "bad"),
    [
        ("method", "teleport", "'teleport'"),
        ("method", ["dataframe", "teleport"], "'teleport'"),
        ("library", "numpy", "'numpy'"),
        ("format", ["feather"], "'feather'"),
        ("transport", "udp", "'udp'"),
    ],
)
def test_an_unknown_value_lists_the_allowed_ones(key, value, bad):
    config = copy.deepcopy(DEFAULT)
    config["variants"][0][key] = value
    with pytest.raises(ConfigError) as caught:
        validate_config(config)
    assert f"{bad} is not one of " in str(caught.value)
    allowed = {"method": "rows, dataframe", "library": "pandas, polars",
               "format": "parquet, csv", "transport": "http, tcp"}[key]  # fmt: skip
    assert allowed in str(caught.value)


def test_the_vectorized_method_with_protocol_1_is_refused_before_any_job():
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config["ilp_protocol_version"] = 1
    with pytest.raises(ConfigError, match=r"variants\[\d+\]\.method.*vectorized writes ILP prot"):
        validate_config(config)


def test_a_run_file_read_as_a_config_says_where_targets_go():
    run = FIXTURE_RESULTS.parent
    doc = yaml.safe_load(next((run / "results" / "runs").glob("*/*.json")).read_text())
    with pytest.raises(ConfigError, match="looks like a run file.*put targets before --configfile"):
        validate_config({**copy.deepcopy(DEFAULT), **doc})


def test_the_dtype_matrix_block_leaves_the_benchmark_config_hash_alone():
    from ingestbench.workflow.result_keys import config_hash

    base = validate_config(copy.deepcopy(DEFAULT))
    other = validate_config({**copy.deepcopy(DEFAULT), "dtype_matrix": {"methods": ["rows"]}})
    assert config_hash(other) == config_hash(base)
    assert config_hash({**base, "repeats": 5}) != config_hash(base)


def test_a_configfile_is_merged_over_config_yaml_as_snakemake_merges_it(tmp_path):
    """Mappings key by key, lists replaced: a file with only datasets keeps config.yaml's variants,
    and gets the same sentence from the CLI as from the workflow."""
    from ingestbench.config import ConfigError, load_config

    partial = tmp_path / "partial.yaml"
    partial.write_text("repeats: 5\nquestdb: {worker_idle: spin}\n")
    config = load_config(partial)
    assert config["repeats"] == 5 and config["questdb"]["worker_idle"] == "spin"
    assert config["questdb"]["mode"] == "embedded"  # the rest of the mapping kept
    assert len(config["variants"]) == len(load_config(REPO / "config.yaml")["variants"])
    only_data = tmp_path / "only-data.yaml"
    only_data.write_text("datasets: [{label: mine, scale: 10, epochs: 10}]\n")
    with pytest.raises(
        ConfigError, match="its lists replace config.yaml's: a config with datasets"
    ):
        load_config(only_data)
