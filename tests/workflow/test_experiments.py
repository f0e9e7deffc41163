"""An experiment is one entry: a made-up one, added to a copy of the tree in the files
docs/development.md ("Adding an experiment") names (its package, its entry in the list, its rules
file, its config and its schema's section), is planned by Snakemake, checked by the preflight and
written into the summary; and the preflight runs once per make command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from ingestbench.dev.workflow_copy import copy_workflow
from ingestbench.preflight import CHECKED_VARIABLE
from tests.helpers import FIXTURE_RESULTS, REPO

HOOKS = '''"""A made-up experiment: echoes of the backfill.

May import: nothing.
"""


def settings(config, job=None):
    return {"echo": config["echo"]}


def listing(config):
    return [f"{config['echo']['times']} echoes"]


def check(config):
    times = config["echo"]["times"]
    return [] if times > 0 else [f"echo.times is {times}; set it to 1 or more."]


def summary_part(paths):
    import pandas as pd

    rows = pd.read_csv(paths[0])
    return rows, f"## Echoes\\n\\n{len(rows)} echoes heard.\\n"
'''

ENTRY = """    Experiment(
        key="echo",
        rules="rules/echo.smk",
        settings="echo.hooks:settings",
        listing="echo.hooks:listing",
        bench=None,
        changes_backfill=False,
        check="echo.hooks:check",
        summary_inputs=("echo.csv",),
        summary="echo.hooks:summary_part",
    ),
"""

RULES = """from ingestbench.workflow.experiments import settings as experiment_settings


rule echo:
    output:
        f"{RESULTS}/echo.csv",
    localrule: True
    params:
        settings=experiment_settings("echo", config),
    run:
        rows = ["dataset,variant,status"]
        rows += [f"echo,echo-{i},echo" for i in range(params.settings["echo"]["times"])]
        Path(output[0]).write_text("\\n".join(rows) + "\\n")
"""

SCHEMA = {
    "description": "A made-up experiment: echoes of the backfill.",
    "type": "object",
    "additionalProperties": False,
    "properties": {"times": {"type": "integer", "default": 1}},
}


@pytest.fixture(scope="module")
def copy_with_echo(tmp_path_factory) -> Path:
    """A copy of the tree with the made-up experiment `echo` added."""
    copy = copy_workflow(tmp_path_factory.mktemp("experiments"))
    package = copy / "src" / "ingestbench" / "echo"
    package.mkdir()
    (package / "__init__.py").write_text(
        '"""Echoes (a made-up experiment).\n\nMay import: nothing.\n"""\n'
    )
    (package / "hooks.py").write_text(HOOKS)
    registry = copy / "src" / "ingestbench" / "workflow" / "experiments.py"
    text = registry.read_text()
    end = "\n)\n\n\ndef hook("
    assert text.count(end) == 1
    registry.write_text(text.replace(end, "\n" + ENTRY.rstrip("\n") + end))
    (copy / "rules" / "echo.smk").write_text(RULES)
    schema_path = copy / "schemas" / "config.schema.yaml"
    schema = yaml.safe_load(schema_path.read_text())
    schema["properties"]["echo"] = SCHEMA
    schema_path.write_text(yaml.safe_dump(schema, sort_keys=False, allow_unicode=True))
    (copy / "configs" / "echo.yaml").write_text("results_dir: results/echo\necho: {times: 3}\n")
    (copy / "configs" / "no-echo.yaml").write_text("results_dir: results/echo\necho: {times: 0}\n")
    return copy


def run(copy: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environ = {**os.environ, "PYTHONPATH": str(copy / "src"), **(env or {})}
    return subprocess.run([sys.executable, *args], cwd=copy, env=environ, capture_output=True,
                          text=True, timeout=600)  # fmt: skip


def test_a_new_experiment_is_planned_with_its_output_before_the_summary(copy_with_echo):
    done = run(copy_with_echo, "-m", "snakemake", "-n", "--cores", "1",
               "--configfile", "configs/echo.yaml")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout + done.stderr
    assert "rule echo:" in out or "localrule echo:" in out, out[-3000:]
    summarize = out.split("rule summarize:", 1)[1].split("\n\n", 1)[0]
    assert "results/echo/echo.csv" in summarize


def test_the_preflight_refuses_a_bad_value_of_its_key_with_its_sentence(copy_with_echo):
    good = run(copy_with_echo, "-m", "ingestbench.cli", "check", "--config", "configs/echo.yaml")
    assert good.returncode == 0, good.stderr
    bad = run(copy_with_echo, "-m", "ingestbench.cli", "check", "--config", "configs/no-echo.yaml")
    assert bad.returncode == 1
    assert "ERROR: echo.times is 0; set it to 1 or more." in bad.stderr
    listed = run(copy_with_echo, "-m", "ingestbench.cli", "variants", "--config",
                 "configs/echo.yaml")  # fmt: skip
    assert "experiment echo: 3 echoes" in listed.stdout


def test_its_rows_and_section_join_the_summary_written_once(copy_with_echo, tmp_path):
    """Its registered hooks, as the summarize rule calls them, over the committed run files."""
    (tmp_path / "echo.csv").write_text(
        "dataset,variant,status\necho,echo-0,echo\necho,echo-1,echo\n"
    )
    script = f"""
from pathlib import Path
from ingestbench.config import load_config
from ingestbench.results.summary import write_summary
from ingestbench.workflow.experiments import summary_inputs, summary_parts

fixture = Path({str(FIXTURE_RESULTS)!r})
inputs = summary_inputs(load_config("configs/echo.yaml"), {str(tmp_path)!r})
write_summary(sorted((fixture / "runs").rglob("*.json")),
              sorted((fixture / "validation").rglob("*.json")), fixture / "environment.json",
              Path({str(tmp_path / "summary.csv")!r}), Path({str(tmp_path / "summary.md")!r}),
              experiments=summary_parts(inputs))
"""
    done = run(copy_with_echo, "-c", script)
    assert done.returncode == 0, done.stderr[-3000:]
    md = (tmp_path / "summary.md").read_text()
    assert md.startswith("# Ingestion benchmark summary")
    assert md.rstrip().endswith("## Echoes\n\n2 echoes heard.")
    table = pd.read_csv(tmp_path / "summary.csv")
    assert list(table[table["status"] == "echo"]["variant"]) == ["echo-0", "echo-1"]
    assert (table["status"] != "echo").sum() > 0  # the backfill's rows first


def test_the_snakefile_skips_the_check_ingestbench_check_made_for_this_config(tmp_path):
    """As the make targets run it: `ingestbench check --hash`, then Snakemake given that hash.
    The proof of the skip: a variable set for the check and unset for Snakemake, which the
    Snakefile's own check would refuse (a bare `snakemake` does: tests/unit/test_preflight.py)."""
    config = tmp_path / "external.yaml"
    config.write_text("results_dir: results/checked\nquestdb: {mode: external, host: localhost, "
                      "auth: {http: {token_env: INGESTBENCH_TEST_TOKEN}}}\n")  # fmt: skip
    checked = run(REPO, "-m", "ingestbench.cli", "check", "--config", str(config), "--hash",
                  env={"INGESTBENCH_TEST_TOKEN": "x"})  # fmt: skip
    assert checked.returncode == 0, checked.stderr
    env = {CHECKED_VARIABLE: checked.stdout.strip()}
    done = run(REPO, "-m", "snakemake", "-n", "--quiet", "rules", "--cores", "1", "--configfile",
               str(config), env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "INGESTBENCH_TEST_TOKEN" not in done.stderr


def _plan(copy: Path, config: dict) -> subprocess.CompletedProcess:
    path = copy / "axis.yaml"
    path.write_text(yaml.safe_dump(config))
    cmd = [sys.executable, "-m", "snakemake", "-n", "--cores", "2", "--configfile", str(path)]
    return subprocess.run(cmd, cwd=copy, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(copy / "src")})  # fmt: skip


def test_paced_and_delivery_are_planned_on_each_server(tmp_path):
    """The experiments go over the servers as the backfill does: a job per server each, their
    outputs under the server's level, the summary taking every server's delivery.csv; paced on
    a version before tables()' row counts is refused with the reason."""
    copy = copy_workflow(tmp_path)
    delivery = yaml.safe_load((REPO / "configs" / "delivery.yaml").read_text())
    delivery["questdb"] = {"versions": ["9.2.3", "9.3.4"]}
    done = _plan(copy, delivery)
    assert done.returncode == 0, done.stderr[-3000:]
    for server in ("9.2.3", "9.3.4"):
        assert f"results/delivery/delivery/{server}/delivery.csv" in done.stdout
    assert len(re.findall(r"^(?:local)?rule delivery:", done.stdout, re.M)) == 2
    paced = yaml.safe_load((REPO / "configs" / "paced.yaml").read_text())
    paced["questdb"] = {"settings": [{"name": "commitsync", "cairo.commit.mode": "sync"}]}
    done = _plan(copy, paced)
    assert done.returncode == 0, done.stderr[-3000:]
    jobs = len(re.findall(r"^(?:local)?rule paced:", done.stdout, re.M))
    assert jobs > 0 and jobs % 2 == 0
    assert "results/paced/paced/9.3.4-commitsync/" in done.stdout
    paced["questdb"] = {"versions": ["9.2.3", "9.3.4"]}
    done = _plan(copy, paced)
    assert done.returncode != 0
    assert "paced: paced ingestion read tables()' table_row_count" in done.stdout + done.stderr
