"""The first-hour mistakes of docs/faults.md: each provoked here (or, where it needs a server or
a real TLS handshake, in the test named beside it), its sentence checked against the code's, and
every sentence found in the fault table word for word."""

from __future__ import annotations

import copy
import json
import string
import subprocess

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ingestbench.columnar.duckdb_sql import OWN_FILE_UNREADABLE
from ingestbench.config import (
    DEFAULT_CONFIG,
    SECRET_IN_CONFIG,
    ConfigError,
    Settings,
    read_config_file,
    validate_config,
)
from ingestbench.errors import UserError
from ingestbench.own.dataset import SAME_LABEL_OTHER_FILE, OwnDataError, check_manifest_source
from ingestbench.preflight import IN_PROJECT_FOLDER
from ingestbench.server.access import UNSET_VARIABLE
from ingestbench.server.certificate import CA_AS_SERVER, SELF_SIGNED, UNVERIFIED
from ingestbench.variants import NO_COPY_ROOT, NO_COPY_ROOT_PLANNED
from tests.helpers import REPO

FAULTS = (REPO / "docs" / "faults.md").read_text()
#: Every sentence a first-hour mistake gets, as a template (its placeholders shown as <name>).
TEMPLATES = [SECRET_IN_CONFIG, OWN_FILE_UNREADABLE, SAME_LABEL_OTHER_FILE, SELF_SIGNED,
             CA_AS_SERVER, UNVERIFIED, NO_COPY_ROOT_PLANNED, NO_COPY_ROOT, IN_PROJECT_FOLDER,
             UNSET_VARIABLE]  # fmt: skip
SECRET = "s3cret-typed-in-the-config"


def as_documented(template: str) -> str:
    names = {name for _, name, _, _ in string.Formatter().parse(template) if name}
    return template.format(**{name: f"<{name}>" for name in names})


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t[:40])
def test_each_sentence_is_in_the_fault_table(template):
    assert f"`{as_documented(template)}`" in FAULTS


def _refusal(documented: bool = True, **change) -> str:
    """The sentence a config with `change` is refused with; `documented`: word for word in the
    fault table (not so for a template's filled-in sentence)."""
    config = copy.deepcopy(read_config_file(DEFAULT_CONFIG))
    config.update(change)
    if "datasets" in change:
        config["variants"] = [{"method": "dataframe"}]
    with pytest.raises(ConfigError) as caught:
        validate_config(config)
    message = str(caught.value)
    assert "\n" not in message
    assert not documented or f"`{message}`" in FAULTS, message
    return message


def test_a_secret_typed_into_the_config_is_refused_naming_its_variable_key():
    auth = {"http": {"username": "admin", "password": SECRET}}
    message = _refusal(False, questdb={"mode": "external", "auth": auth})
    assert message == SECRET_IN_CONFIG.format(block="http", key="password")
    auth = {"tcp": {"username": "k", "token": SECRET, "token_x": "x", "token_y": "y"}}
    message = _refusal(False, questdb={"mode": "external", "auth": auth})
    assert message == SECRET_IN_CONFIG.format(block="tcp", key="token")


def test_a_secret_where_a_variables_name_goes_is_never_quoted():
    auth = {"http": {"username": "admin", "password_env": f"{SECRET}!"}}
    message = _refusal(questdb={"mode": "external", "auth": auth})
    assert SECRET not in message and "'****' is not the name of an environment variable" in message


def test_credentials_typed_into_the_host_are_never_quoted():
    message = _refusal(False, questdb={"mode": "external", "host": f"admin:{SECRET}@db"})
    assert SECRET not in message and message.startswith("invalid config at 'questdb.host': '****'")


@pytest.mark.parametrize(
    ("dataset", "said"),
    [
        ({"label": "mine", "scale": 10}, "'epochs' or 'rows' is missing"),
        ({"label": "mine"}, "'scale' is missing"),
    ],
)
def test_a_dataset_missing_a_key_names_it(dataset, said):
    message = _refusal(datasets=[dataset])
    assert said in message and "not valid under any" not in message


def test_a_wrong_auth_key_is_named():
    auth = {"http": {"username": "admin", "pasword_env": "QDB_PASSWORD"}}
    message = _refusal(questdb={"mode": "external", "auth": auth})
    assert "'pasword_env' is not a key here; 'password_env' is missing" in message


@pytest.mark.parametrize(("key", "value"), [("results_dir", "/srv/results"),
                                            ("data_dir", "/srv/data")])  # fmt: skip
def test_an_absolute_folder_is_refused_with_the_way_to_another_disk(key, value):
    message = _refusal(key == "results_dir", **{key: value})  # the table quotes that one
    assert f"'{value}' is not a relative path" in message and "symlink" in message


def test_one_label_for_two_files_is_refused(tmp_path):
    manifest = tmp_path / "own-mine.manifest.json"
    manifest.write_text(json.dumps({"table": {"source": {"path": "a.parquet"}}}))
    check_manifest_source({"label": "mine", "path": "a.parquet"}, str(tmp_path))  # the same
    with pytest.raises(OwnDataError) as caught:
        check_manifest_source({"label": "mine", "path": "b.parquet"}, str(tmp_path))
    assert str(caught.value) == SAME_LABEL_OTHER_FILE.format(
        label="mine", path="b.parquet", manifest=manifest, other="a.parquet")  # fmt: skip


def test_an_unreadable_own_file_is_never_to_be_deleted(tmp_path):
    from ingestbench.own.dataset import OwnDataset
    from ingestbench.own.manifest import spec_of, write_own_manifest
    from ingestbench.validate.own_checks import own_source_checks

    path = tmp_path / "mine.parquet"
    ts = pa.array(range(100), pa.timestamp("us"))
    pq.write_table(pa.table({"ts": ts, "v": [float(i) for i in range(100)]}), path)
    manifest = write_own_manifest(OwnDataset("mine", path), tmp_path / "m.json")
    path.write_bytes(path.read_bytes()[:40])  # broken after it was described
    with pytest.raises(UserError) as caught:
        own_source_checks(spec_of(manifest))
    message = str(caught.value)
    assert message.startswith(f"cannot read your file {path} (") and "delete it" not in message
    assert message.endswith(OWN_FILE_UNREADABLE.split("({reason})")[1])


def test_copy_root_methods_on_an_external_server_without_it_are_unsupported(tiny_dataset, tmp_path):
    from ingestbench.ingest.job import IngestFiles, ingest_job
    from ingestbench.variants import parse_variant_name

    # Port 1: a job that reached for the server would fail; this one must not reach it.
    config = {"datasets": [{"label": "a", "scale": 1, "epochs": 1}],
              "variants": [{"method": "server_parquet"}],
              "questdb": {"mode": "external", "http_port": 1, "ilp_port": 1}}  # fmt: skip
    settings = Settings.from_config(validate_config(config))
    for name in ("none-server_parquet-parquet-http", "none-server_copy-csv-http"):
        manifest = tiny_dataset["dir"] / f"{tiny_dataset['params'].name}.manifest.json"
        files = IngestFiles(tiny_dataset["parquet"], manifest,
                            tmp_path / name / "run.json", tmp_path / name / "actual.json",
                            tmp_path / name / "export")  # fmt: skip
        record = ingest_job(settings, parse_variant_name(name), files)
        assert record.extra["unsupported"] == NO_COPY_ROOT and record.repeats == []
        assert files.run.is_file() and files.export.is_dir()


def test_make_stops_on_a_config_that_names_no_file():
    result = subprocess.run(["make", "-n", "archive", "CONFIG=configs/iot.yml"], cwd=REPO,
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert result.returncode == 2
    said = "CONFIG=configs/iot.yml names no file; check the name (the configs here: "
    assert said in result.stderr and "configs/iot.yaml" in result.stderr
    assert (
        "CONFIG=<file> names no file; check the name (the configs here: "
        "<config.yaml configs/*.yaml>)" in FAULTS
    )


def test_a_tsv_file_is_split_on_tabs(tmp_path):
    from ingestbench.own.dataset import OwnDataset
    from ingestbench.own.manifest import write_own_manifest

    path = tmp_path / "mine.tsv"
    path.write_text("ts\thost\tv\n" + "".join(f"2024-01-01T00:00:0{i}Z\th{i}\t{i}.5\n"
                                              for i in range(5)))  # fmt: skip
    manifest = write_own_manifest(OwnDataset.from_config({"label": "mine", "path": str(path)}),
                                  tmp_path / "m.json")  # fmt: skip
    assert manifest["rows"] == 5 and manifest["columns"] == 3


def test_the_environment_record_masks_any_secret_its_config_could_hold():
    from ingestbench.config import masked_config

    auth = {
        "http": {"username": "admin", "password": SECRET, "password_env": "QDB_PASSWORD"},
        "tcp": {"username": "k", "token_env": "KEY", "token_x": "x", "token_y": "y"},
    }
    masked = masked_config({"questdb": {"auth": auth}, "repeats": 3})
    assert SECRET not in json.dumps(masked)
    assert masked["questdb"]["auth"]["http"] == {"username": "admin", "password": "****",
                                                 "password_env": "QDB_PASSWORD"}  # fmt: skip
    assert masked["questdb"]["auth"]["tcp"] == auth["tcp"] and masked["repeats"] == 3
