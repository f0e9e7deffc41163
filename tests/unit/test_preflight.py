"""The preflight's sentences (ingestbench.preflight): each mistake in words, naming the key, the
value and the fix; the shipped configs pass it with notes at most."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ingestbench import preflight
from ingestbench.config import ConfigError, load_config, read_config_file
from ingestbench.dev.workflow_copy import clone_files
from ingestbench.preflight import CHECKED_VARIABLE as CHECKED
from ingestbench.workflow import experiments
from ingestbench.workflow.experiments import Experiment
from tests.helpers import REPO

DEFAULT = load_config(REPO / "config.yaml")
VARIANT = {"library": "pandas", "method": "dataframe", "format": "parquet", "transport": "http"}


def _config(**over) -> dict:
    config = copy.deepcopy(DEFAULT)
    config.update(copy.deepcopy(over))
    return config


def _problems(config: dict) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        preflight.check(config)
    return getattr(caught.value, "problems", [str(caught.value)])


@pytest.fixture
def own_file(tmp_path, monkeypatch) -> Path:
    """A small Parquet file (a timestamp `ts`, a double `v`), in the directory the test runs in."""
    monkeypatch.chdir(tmp_path)
    ts = pa.array(range(0, 5_000_000, 1_000_000), pa.timestamp("us"))
    pq.write_table(pa.table({"ts": ts, "v": pa.array(range(5), pa.float64())}), "t.parquet")
    return Path("t.parquet")


@pytest.mark.parametrize(
    "config",
    ["config.yaml", *sorted(p.relative_to(REPO).as_posix() for p in REPO.glob("configs/*.yaml"))],
)
def test_every_shipped_config_passes_with_notes_at_most(config):
    notes = preflight.check(load_config(REPO / config, validate=False))
    assert all(n.startswith("variants left out for some datasets") for n in notes), notes


def test_the_project_folders_are_every_folder_a_clone_has_but_results():
    tops = {p.parts[0] for p in clone_files() if len(p.parts) > 1}
    assert tops - {"results"} <= preflight.PROJECT_FOLDERS, tops - preflight.PROJECT_FOLDERS


@pytest.mark.parametrize("key", ["results_dir", "data_dir"])
@pytest.mark.parametrize("value", ["reference/default", "docs", "./src/x", "results/../tests"])
def test_a_folder_of_the_project_is_refused(key, value):
    (problem,) = preflight.folder_problems(_config(**{key: value}))
    assert problem.startswith(f"{key} is {value!r}, inside the project's own folder ")
    assert f"set {key} to a folder under results/" in problem


def test_the_checkout_itself_is_refused_and_results_are_fine():
    assert "the workflow's own folder" in preflight.folder_problems(_config(results_dir="."))[0]
    assert preflight.folder_problems(_config(results_dir="results/x", data_dir="data")) == []


def test_an_unset_variable_is_named_and_a_secret_never_shown():
    auth = {"http": {"username": "admin", "password_env": "IB_SET"},
            "pg": {"username": "admin", "password_env": "IB_UNSET"}}  # fmt: skip
    config = _config(questdb={**DEFAULT["questdb"], "mode": "external", "auth": auth})
    problems = preflight.env_problems(config, {"IB_SET": "s3cret-value", "IB_EMPTY": ""})
    assert problems == [
        "questdb.auth.pg.password_env names the environment variable IB_UNSET, which is not set; "
        "export IB_UNSET with the secret before running (the config holds only its name)."
    ]
    assert preflight.env_problems({"delivery": {"token_env": "IB_EMPTY"}}, {"IB_EMPTY": ""})


@pytest.mark.parametrize(
    ("over", "said"),
    [
        ({"repets": 2}, "'repets' is not a key here (did you mean 'repeats'?)"),
        ({"variants": [{**VARIANT, "library": "panda"}]},
         "'panda' is not one of pandas, polars, none (did you mean 'pandas'?)"),
        ({"variants": [{**VARIANT, "method": "datafram"}]}, "(did you mean 'dataframe'?)"),
        ({"variants": [{**VARIANT, "transport": "https"}]},
         "'https' is not one of http, tcp, pg: TLS is not a transport; set questdb.tls: true"),
        ({"questdb": {"mode": "external", "host": "http://db:9000"}},
         "'http://db:9000' is not a host name or address: give it without scheme or port "
         "(put the port in questdb.http_port"),
        ({"datasets": [{"label": "my-data", "scale": 2, "epochs": 5}]},
         "'my-data' is not a label: use lowercase letters, digits and _, starting with a letter"),
    ],
)  # fmt: skip
def test_schema_mistakes_are_said_in_words_with_the_nearest_choice(over, said):
    (problem,) = _problems(_config(**over))
    assert said in problem, problem
    assert "^" not in problem and "$'" not in problem  # no pattern shown
    assert problem.endswith("(its keys and values: docs/configuration.md).")


def test_a_yaml_error_names_its_file_line_and_column(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("repeats: 1\nvariants: [a, b\n")
    with pytest.raises(ConfigError, match=r"^config file .*bad\.yaml is not valid YAML at line 3, "
                       r"column 1: "):  # fmt: skip
        read_config_file(bad)


def _own(path: str, **entry) -> dict:
    return _config(datasets=[{"label": "mine", "path": path, **entry}], variants=[VARIANT])


def test_an_own_file_is_checked_as_its_describe_job_checks_it(own_file):
    assert preflight.check(_own(str(own_file))) == []
    Path("t.json").write_text("{}")
    Path("empty").mkdir()
    said = {
        "none.parquet": "dataset 'mine': none.parquet does not exist; fix datasets[].path",
        "t.json": "dataset 'mine': cannot tell the format of t.json from its suffix",
        "empty": "dataset 'mine': empty holds no .parquet file",
    }
    for path, sentence in said.items():
        (problem,) = _problems(_own(path))
        assert problem.startswith(sentence), problem
    (problem,) = _problems(_own(str(own_file), timestamp="when"))
    assert problem == "dataset 'mine': t.parquet has no column 'when'; set datasets[].timestamp " \
        "to one of ts."  # fmt: skip


def test_a_csv_timestamp_that_does_not_read_as_times_is_found(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("t.csv").write_text("ts,v\nyesterday,1\ntoday,2\n")
    (problem,) = _problems(_own("t.csv", timestamp="ts"))
    assert "column 'ts' does not read as timestamps" in problem
    assert "datasets[].csv.timestamp_format" in problem


def test_a_file_a_rule_makes_is_left_to_its_rule(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert preflight.check(_own("results/examples/trades-500.parquet", timestamp="ts")) == []


def test_the_files_left_to_their_rule_are_those_rule_own_example_makes():
    rule = (REPO / "rules" / "data.smk").read_text().split("rule own_example:", 1)[1]
    assert '"results/examples/{table}-{rows}.{ext}"' in rule
    for wildcard in ("table", "ext"):
        values = re.search(rf'{wildcard}="([^"]+)"', rule).group(1)
        assert f"({values})" in preflight.EXAMPLES.pattern


def test_a_variant_no_dataset_runs_is_an_error_naming_why(own_file):
    config = _own(str(own_file))
    config["variants"] = [{**VARIANT, "format": "csv"}]
    (problem,) = _problems(config)
    assert problem.startswith("variants[0] plans pandas-dataframe-csv-http, which runs on no "
                              "dataset (own-mine: its file is parquet; ")  # fmt: skip


def test_a_spec_that_makes_no_variant_names_the_value_its_method_does_not_take():
    (problem,) = _problems(_config(variants=[{"method": "server_csv", "format": "parquet"}]))
    assert problem == ("variants[0] makes no variant (server_csv takes format csv, and the "
                       "spec gives parquet); change its values as docs/methods.md lists "
                       "them.")  # fmt: skip


def test_variants_left_out_for_some_datasets_are_one_note(own_file):
    config = _own(str(own_file))
    config["datasets"].append({"label": "tiny", "scale": 2, "epochs": 5})
    config["variants"] = [{**VARIANT, "format": ["parquet", "csv"]}]
    assert preflight.check(config) == [
        "variants left out for some datasets, as an own dataset runs only the variants that "
        "read its file's format, and those of the ILP text made from it: own-mine (its file is "
        "parquet) leaves out pandas-dataframe-csv-http."
    ]


def test_an_experiments_check_joins_the_preflight(monkeypatch):
    def paced(config):
        return [f"paced.rate_per_s is {config['paced']['rate_per_s']}; set it above 0."]

    made_up = Experiment(key="paced", rules="", settings="", listing="", bench=None,
                         changes_backfill=False, check="made_up:check")  # fmt: skip
    monkeypatch.setattr(experiments, "EXPERIMENTS", (made_up,))
    monkeypatch.setattr(experiments, "hook", {"made_up:check": paced}.__getitem__)
    config = _config()
    config["paced"] = {"rate_per_s": 0}
    monkeypatch.setattr(preflight, "validate_config", lambda c: c)  # no schema of it here
    assert _problems(config) == ["paced.rate_per_s is 0; set it above 0."]
    del config["paced"]
    assert preflight.check(config) == []


def test_the_snakefile_skips_the_check_ingestbench_check_has_just_made(monkeypatch):
    """Once per command: the make targets pass the hash `ingestbench check --hash` printed; the
    Snakefile checks any other config (or none passed) itself."""
    config = _config(results_dir="docs/mine")  # a problem only the preflight finds
    read = preflight.checked_hash(config)
    with pytest.raises(SystemExit):  # a bare snakemake: checked, refused
        preflight.check_unless_checked(copy.deepcopy(config), environ={})
    with pytest.raises(SystemExit):  # another config's hash: checked
        preflight.check_unless_checked(copy.deepcopy(config), environ={CHECKED: "0" * 16})
    skipped = copy.deepcopy(config)
    preflight.check_unless_checked(skipped, environ={CHECKED: read})
    assert skipped["questdb"]["mode"]  # the schema's defaults filled in all the same


def test_ingestbench_check_prints_the_hash_of_the_config_as_the_snakefile_reads_it(
    tmp_path, capsys
):
    path = tmp_path / "mine.yaml"
    path.write_text("results_dir: results/mine\nrepeats: 2\n")
    from ingestbench.cli import main

    assert main(["check", "--config", str(path), "--hash"]) == 0
    printed = capsys.readouterr().out.strip()
    merged = read_config_file(REPO / "config.yaml") | {"results_dir": "results/mine", "repeats": 2}
    assert printed == preflight.checked_hash(merged)
