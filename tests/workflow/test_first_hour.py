"""First-hour mistakes the workflow itself must refuse before any job (docs/faults.md): a secret
typed into the config (found nowhere the run printed or wrote), copy-root methods planned for an
external server without its copy root, and one own label given to two files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from ingestbench.config import SECRET_IN_CONFIG
from ingestbench.dev.workflow_copy import copy_workflow
from ingestbench.own.dataset import SAME_LABEL_OTHER_FILE
from ingestbench.variants import NO_COPY_ROOT, NO_COPY_ROOT_PLANNED, no_such_variant
from tests.helpers import QUESTDB_VERSION

SECRET = "s3cret-typed-into-the-config-5e1f"


def _run(workdir: Path, config: dict, *args: str) -> subprocess.CompletedProcess:
    (workdir / "config.mine.yaml").write_text(yaml.safe_dump(config))
    cmd = [sys.executable, "-m", "snakemake", "--configfile", "config.mine.yaml", "--cores", "1",
           *args]  # fmt: skip
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=workdir)


def test_a_typed_secret_is_refused_and_found_nowhere(tmp_path):
    workdir = copy_workflow(tmp_path)
    # What the clone holds (this test's own source among it) is not what the runs wrote.
    cloned = {p: p.stat().st_mtime_ns for p in workdir.rglob("*") if p.is_file()}
    auth = {"http": {"username": "admin", "password": SECRET}}
    config = {"questdb": {"mode": "external", "tls": True, "auth": auth}}
    outputs = [_run(workdir, config), _run(workdir, config, "-n")]
    cli = [sys.executable, "-m", "ingestbench.cli"]
    for args in (["variants", "--config", "config.mine.yaml"],
                 ["results-dir", "--config", "config.mine.yaml"]):  # fmt: skip
        outputs.append(subprocess.run([*cli, *args], capture_output=True, text=True,
                                      timeout=300, cwd=workdir))  # fmt: skip
    sentence = SECRET_IN_CONFIG.format(block="http", key="password")
    for result in outputs:
        assert result.returncode != 0
        said = result.stdout + result.stderr  # Snakemake prints a parse error on stdout
        assert sentence in said, said[-2000:]
        assert SECRET not in result.stdout + result.stderr
    written = [p for p in workdir.rglob("*") if p.is_file() and p.name != "config.mine.yaml"
               and cloned.get(p) != p.stat().st_mtime_ns]  # fmt: skip
    assert any(".snakemake" in p.parts for p in written)  # Snakemake's own log is searched too
    assert [p for p in written if SECRET.encode() in p.read_bytes()] == []


def test_copy_root_methods_without_a_copy_root_are_said_unsupported_before_any_job(tmp_path):
    workdir = copy_workflow(tmp_path)
    result = _run(workdir, {"questdb": {"mode": "external"}}, "-n")
    assert result.returncode == 0, result.stderr[-3000:]
    sentence = NO_COPY_ROOT_PLANNED.format(
        variants="none-server_copy-csv-http, none-server_parquet-parquet-http", reason=NO_COPY_ROOT
    )
    assert sentence in result.stdout + result.stderr
    with_root = _run(workdir, {"questdb": {"mode": "external", "copy_root": "/srv/import"}}, "-n")
    assert with_root.returncode == 0 and "recorded as unsupported" not in with_root.stderr


def test_one_label_for_another_file_is_refused_before_any_job(tmp_path):
    workdir = copy_workflow(tmp_path)
    data = workdir / "results" / "data"
    data.mkdir(parents=True)
    manifest = data / "own-mine.manifest.json"  # another config's file under the same label
    manifest.write_text(json.dumps({"table": {"source": {"path": "theirs.parquet"}}}))
    config = {"datasets": [{"label": "mine", "path": "mine.parquet"}],
              "variants": [{"library": "pandas", "method": "dataframe"}]}  # fmt: skip
    result = _run(workdir, config, "-n")
    assert result.returncode != 0
    sentence = SAME_LABEL_OTHER_FILE.format(label="mine", path="mine.parquet",
                                            manifest="results/data/own-mine.manifest.json",
                                            other="theirs.parquet")  # fmt: skip
    said = result.stdout + result.stderr
    assert sentence in said, said[-3000:]


def test_a_mistyped_target_names_the_closest_variant_and_exits_1(tmp_path):
    """A variant's typo in a Snakemake target ends in one sentence, as the preflight's do, not
    in an InputFunctionException from a rule's input function and its traceback."""
    workdir = copy_workflow(tmp_path)
    for folder in ("runs", "validation"):
        target = (f"results/{folder}/{QUESTDB_VERSION}/cpu-s4000-e250-seed42/"
                  "pandas-datafrme-parquet-http.json")  # fmt: skip
        result = _run(workdir, {}, "-n", target)
        assert result.returncode == 1
        said = result.stdout + result.stderr
        assert no_such_variant("pandas-datafrme-parquet-http", []) not in said  # a suggestion
        sentence = no_such_variant(
            "pandas-datafrme-parquet-http", ["pandas-dataframe-parquet-http"]
        )
        assert f"ERROR: {sentence}" in result.stderr, said[-2000:]
        assert "Traceback" not in said and "InputFunctionException" not in said
