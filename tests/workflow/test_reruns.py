"""Every result matches the config and code that claim it, from what a fresh clone holds: the
default config plans every ingestion; after a real run of a small config, an edit plans exactly
the jobs it changes with no Snakemake metadata at all (each dry run starts without
`.snakemake/`: the jobs' own records decide, ingestbench.workflow.rule_records), also on a results
folder whose file times say nothing; the summary never shows a run of other settings; a config of
one's own in `results/` runs its own datasets; experiments keep their results side by side; the
reference runs redraw without ingesting; and `make clean` removes only what runs made."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from ingestbench.config import load_config
from ingestbench.dev.workflow_copy import copy_workflow
from ingestbench.variants import variants_by_dataset
from tests.helpers import REPO

pytestmark = pytest.mark.server  # the workflow starts its own servers, from the jar

#: Two variants on the tiny dataset: enough for every rule, quick to rerun.
SMALL = {
    "repeats": 1,
    "warmup_rows": 300,
    "rows_cap": 500,
    "questdb": {"startup_timeout_s": 300},
    "datasets": [{"label": "tiny", "scale": 40, "epochs": 50, "seed": 7}],
    "variants": [
        {"library": "pandas", "method": ["rows", "dataframe"], "format": "parquet",
         "transport": "http"},
    ],
}  # fmt: skip
INGESTIONS = 2
#: What follows every ingestion: its validation, the summary, the charts, the comparison.
AFTER_VALIDATION = {"summarize", "published_comparison", "all"}


def snakemake(workdir: Path, config: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "--configfile", str(config), "--cores", "2", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=workdir)


def planned(workdir: Path, config: Path | None, *args: str) -> dict[str, int]:
    """{rule: jobs} that a dry run plans, without Snakemake's metadata (as on a fresh clone)."""
    shutil.rmtree(workdir / ".snakemake", ignore_errors=True)
    if config is None:
        cmd = [sys.executable, "-m", "snakemake", "--cores", "2", *args]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=workdir)
    else:
        result = snakemake(workdir, config, "-n", *args)
    assert result.returncode == 0, result.stderr[-3000:]
    rules = re.findall(r"^(?:local)?rule (\w+):", result.stdout + result.stderr, re.M)
    return {r: rules.count(r) for r in set(rules)}


def charts(plan: dict[str, int]) -> set[str]:
    return {r for r in plan if r.startswith("chart_")}


def edited(workdir: Path, name: str, base: dict, **changes) -> Path:
    path = workdir / name
    config = json.loads(json.dumps(base))
    for key, value in changes.items():
        section, _, sub = key.partition("__")
        if sub:
            config.setdefault(section, {})[sub] = value
        else:
            config[key] = value
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("reruns"))
    config = edited(workdir, "config.small.yaml", SMALL)
    result = snakemake(workdir, config)
    assert result.returncode == 0, result.stderr[-4000:]
    return workdir, config


def test_nothing_changed_plans_nothing(small_run):
    assert planned(*small_run) == {}


def test_an_edit_of_repeats_reruns_the_ingestions_and_what_follows(small_run):
    workdir, _ = small_run
    plan = planned(workdir, edited(workdir, "c.yaml", SMALL, repeats=2))
    assert plan["ingest"] == INGESTIONS and plan["validate"] == INGESTIONS
    assert set(plan) >= AFTER_VALIDATION and "chart_throughput" in plan
    assert "generate_cpu_s40_e50_seed7" not in plan  # the data stays


def test_an_edit_of_the_servers_idle_mode_reruns_the_ingestions(small_run):
    workdir, _ = small_run
    config = edited(workdir, "c.yaml", SMALL, questdb__worker_idle="spin")
    assert planned(workdir, config)["ingest"] == INGESTIONS


def test_a_setting_without_effect_reruns_nothing(small_run):
    workdir, _ = small_run
    config = edited(workdir, "c.yaml", SMALL, questdb__startup_timeout_s=200)
    assert planned(workdir, config) == {}


def test_an_edit_of_rows_cap_reruns_the_row_loop_only(small_run):
    workdir, _ = small_run
    plan = planned(workdir, edited(workdir, "c.yaml", SMALL, rows_cap=400))
    assert plan["ingest"] == 1 and plan["validate"] == 1


@pytest.mark.parametrize("key", ["validation__on_failure", "validation__memory_limit"])
def test_an_edit_of_a_validation_setting_reruns_validation_but_no_ingestion(small_run, key):
    workdir, _ = small_run
    value = {"validation__on_failure": "report", "validation__memory_limit": "900MB"}[key]
    plan = planned(workdir, edited(workdir, "c.yaml", SMALL, **{key: value}))
    assert plan["validate"] == INGESTIONS and "ingest" not in plan
    assert set(plan) >= AFTER_VALIDATION


def test_the_repeat_checks_tolerance_reruns_the_ingestions_it_checks(small_run):
    workdir, _ = small_run
    plan = planned(workdir, edited(workdir, "c.yaml", SMALL, validation__rel_tolerance=1e-8))
    assert plan["ingest"] == INGESTIONS and plan["validate"] == INGESTIONS


def test_an_edit_of_a_chart_setting_reruns_the_charts_only(small_run):
    workdir, _ = small_run
    plan = planned(workdir, edited(workdir, "c.yaml", SMALL, charts__dpi=100))
    assert charts(plan) and set(plan) == charts(plan) | {"all"}


def test_a_change_of_code_reruns_the_rules_that_import_it(small_run):
    workdir, config = small_run
    module = workdir / "src" / "ingestbench" / "validate" / "rows.py"
    original = module.read_text()
    try:
        module.write_text(original + "\n# a change\n")
        plan = planned(workdir, config)
        assert plan["validate"] == INGESTIONS and "ingest" in plan  # the job imports it too
        module.write_text(original)
        draw = workdir / "src" / "ingestbench" / "charts" / "draw.py"
        chart_code = draw.read_text()
        draw.write_text(chart_code + "\n# a styling change\n")
        plan = planned(workdir, config)
        assert charts(plan) and set(plan) == charts(plan) | {"all"}
        draw.write_text(chart_code)
    finally:
        module.write_text(original)


def test_forcerun_validate_reruns_validation_alone(small_run):
    workdir, config = small_run
    plan = planned(workdir, config, "--forcerun", "validate")
    assert plan["validate"] == INGESTIONS and "ingest" not in plan
    result = snakemake(workdir, config, "--forcerun", "validate")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "rule ingest" not in result.stdout + result.stderr


def test_the_summary_refuses_a_run_file_of_other_settings(small_run):
    workdir, config = small_run
    run = next((workdir / "results" / "runs").rglob("pandas-dataframe-parquet-http.json"))
    original = run.read_text()
    doc = json.loads(original)
    doc["settings"]["repeats"] = 5
    try:
        run.write_text(json.dumps(doc))
        result = snakemake(workdir, config, "--forcerun", "summarize", "--rerun-triggers", "mtime")
        assert result.returncode != 0
        assert re.search(
            r"pandas-dataframe-parquet-http on cpu-s40-e50-seed7 .* ran under other settings "
            r"than the config's: repeats \(5 in the run file, 1 in the config\)",
            result.stderr,
        ), result.stderr[-2000:]
        advice = re.search(r"\((snakemake --cores all --forcerun \S+)\)", result.stderr)
        assert advice, result.stderr[-2000:]
        cmd = advice.group(1).split()[1:]  # the advised command, as a user would run it
        rerun = snakemake(workdir, config, *cmd[:1], "2", *cmd[2:])
        assert rerun.returncode == 0, rerun.stderr[-3000:]
        assert "rule ingest" in rerun.stdout + rerun.stderr
        assert json.loads(run.read_text())["settings"]["repeats"] == 1
    finally:
        if json.loads(run.read_text())["settings"]["repeats"] != 1:
            run.write_text(original)
        assert snakemake(workdir, config).returncode == 0  # the summary back, for the next tests


def outputs_of(workdir: Path, config: Path, rule: str) -> list[str]:
    """The outputs of `rule`'s jobs in a dry run (no Snakemake metadata, as planned())."""
    shutil.rmtree(workdir / ".snakemake", ignore_errors=True)
    result = snakemake(workdir, config, "-n")
    assert result.returncode == 0, result.stderr[-3000:]
    blocks = re.split(r"^(?=(?:local)?rule \w+:)", result.stdout, flags=re.M)
    return [line.split(":", 1)[1].strip() for b in blocks if re.match(rf"(local)?rule {rule}:", b)
            for line in b.splitlines() if line.strip().startswith("output:")]  # fmt: skip


def test_a_version_or_a_settings_set_added_plans_only_its_servers_jobs(small_run):
    """The server axis: each server's jobs hold its block alone, so a version added (or a
    settings set) plans that server's ingestions and validations, none of the finished ones."""
    workdir, _ = small_run
    version = SMALL["questdb"] | {"versions": ["8.1.4", "9.3.4"]}
    plan = planned(workdir, edited(workdir, "c.yaml", SMALL, questdb=version))
    assert plan["ingest"] == INGESTIONS and plan["validate"] == INGESTIONS
    assert plan["fetch_questdb"] == 1  # the new version's jar record
    outputs = outputs_of(workdir, workdir / "c.yaml", "ingest")
    assert len(outputs) == INGESTIONS and all("/runs/8.1.4/" in o for o in outputs)
    tuned = SMALL["questdb"] | {"settings": [{"name": "commitsync", "cairo.commit.mode": "sync"}]}
    plan = planned(workdir, edited(workdir, "c.yaml", SMALL, questdb=tuned))
    assert plan["ingest"] == INGESTIONS and "fetch_questdb" not in plan
    outputs = outputs_of(workdir, workdir / "c.yaml", "ingest")
    assert all("/runs/9.3.4-commitsync/" in o for o in outputs)


def test_a_second_experiment_keeps_its_own_results(small_run, tmp_path):
    workdir, config = small_run
    summary = workdir / "results" / "summary.csv"
    before = summary.read_bytes()
    other = edited(workdir, "c.other.yaml", SMALL, results_dir="results/other", repeats=2)
    result = snakemake(workdir, other)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (workdir / "results" / "other" / "summary.csv").is_file()
    assert summary.read_bytes() == before
    assert planned(workdir, config) == {} and planned(workdir, other) == {}


def test_a_config_of_ones_own_in_results_runs_its_own_datasets(small_run):
    """Same results folder, other dataset: its ingestions run and the summary shows only it."""
    workdir, config = small_run
    mine = {**SMALL, "datasets": [{"label": "mine", "scale": 30, "epochs": 40, "seed": 9}],
            "variants": [{"library": "polars", "method": "dataframe", "format": "parquet",
                          "transport": "tcp"}]}  # fmt: skip
    path = edited(workdir, "c.mine.yaml", mine)
    assert planned(workdir, path)["ingest"] == 1
    try:
        result = snakemake(workdir, path)
        assert result.returncode == 0, result.stderr[-3000:]
        summary = pd.read_csv(workdir / "results" / "summary.csv")
        assert set(summary["dataset"]) == {"cpu-s30-e40-seed9"}
        assert set(summary["variant"]) == {"polars-dataframe-parquet-tcp"}
    finally:
        assert snakemake(workdir, config).returncode == 0  # the small run's summary back


def test_a_copied_results_folder_is_judged_by_its_records_not_its_file_times(small_run, tmp_path):
    """A results folder copied from elsewhere, every file given one time (no order left): the
    same config plans nothing, an edit plans exactly what it changes."""
    workdir, config = small_run
    clone = copy_workflow(tmp_path, repo=workdir)  # the same code that made the results
    shutil.copytree(workdir / "results", clone / "results", symlinks=True)
    for path in (clone / "results").rglob("*"):
        os.utime(path, (1_700_000_000, 1_700_000_000), follow_symlinks=False)
    shutil.copy(config, clone / config.name)
    assert planned(clone, clone / config.name) == {}
    plan = planned(clone, edited(clone, "c.yaml", SMALL, repeats=2))
    assert plan["ingest"] == INGESTIONS and "generate_cpu_s40_e50_seed7" not in plan


def test_a_fresh_clone_plans_every_ingestion_of_the_default_config(tmp_path):
    """What `make run` runs, from what a clone holds: every variant of config.yaml, here."""
    clone = copy_workflow(tmp_path)
    assert not (clone / "results").exists() and not (clone / ".snakemake").exists()
    plan = planned(clone, None, "-n")
    assert plan["ingest"] == planned_variants(REPO / "config.yaml") >= 31
    assert plan["validate"] == plan["ingest"] and plan["environment"] == 1


def test_a_fresh_clone_plans_the_full_configs_ingestions(tmp_path):
    clone = copy_workflow(tmp_path)
    plan = planned(clone, clone / "configs" / "full.yaml")
    assert plan["ingest"] == planned_variants(REPO / "configs" / "full.yaml") >= 250


def planned_variants(config_file: Path) -> int:
    config = load_config(config_file)
    labels = [d["label"] for d in config["datasets"]]
    return sum(len(v) for v in variants_by_dataset(config, labels).values())


def test_the_reference_runs_redraw_without_ingesting(tmp_path):
    """The committed reference runs live apart from results/, and their own workflow has no
    ingestion to plan: it redraws the charts and builds the report from the summary alone."""
    clone = copy_workflow(tmp_path)
    reference = ["-s", "reference/Snakefile"]
    plan = planned(clone, None, *reference, "-n", "--forceall")
    assert charts(plan) and set(plan) == charts(plan) | {"published_comparison", "all"}
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", *reference, "--cores", "2", "--forceall"],
        capture_output=True, text=True, timeout=600, cwd=clone,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert (clone / "reference/default/plots/throughput.png").stat().st_size > 10_000
    assert not (clone / "results").exists()
    report = subprocess.run(
        [sys.executable, "-m", "snakemake", *reference, "--report", "report.html"],
        capture_output=True, text=True, timeout=600, cwd=clone,
    )  # fmt: skip
    assert report.returncode == 0, report.stderr[-3000:]
    assert (clone / "report.html").stat().st_size > 10_000


def test_make_clean_removes_what_runs_made_and_no_tracked_file(small_run, tmp_path):
    workdir, _ = small_run
    clone = copy_workflow(tmp_path)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=clone, check=True)
    subprocess.run(["git", "add", "-A"], cwd=clone, check=True)
    subprocess.run([*git, "commit", "-qm", "clone"], cwd=clone, check=True)
    shutil.copytree(workdir / "results", clone / "results", symlinks=True)
    (clone / ".snakemake").mkdir()
    (clone / "reference" / "default" / "logs").mkdir()
    result = subprocess.run(["make", "clean"], cwd=clone, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "Removing results/" in result.stdout and "Removing .snakemake/" in result.stdout
    assert not (clone / "results").exists() and not (clone / ".snakemake").exists()
    status = subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True,
                            text=True, check=True).stdout  # fmt: skip
    assert status == "", status
