"""Every result matches the config and code that claim it: after a real run of a small config,
an edit plans exactly the jobs it changes (Snakemake's params trigger sees each rule's slice of
the config and a digest of its code), validation reruns alone, charts and the report come from
what a fresh clone holds, and two experiments keep their results side by side."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ingestbench.dev.workflow_copy import copy_workflow
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


def planned(workdir: Path, config: Path, *args: str) -> dict[str, int]:
    """{rule: jobs} that a dry run plans."""
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


def test_an_edit_of_validation_reruns_validation_but_no_ingestion(small_run):
    workdir, _ = small_run
    config = edited(workdir, "c.yaml", SMALL, validation__rel_tolerance=1e-8)
    plan = planned(workdir, config)
    assert plan["validate"] == INGESTIONS and "ingest" not in plan
    assert set(plan) >= AFTER_VALIDATION


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
    finally:
        run.write_text(original)
        assert snakemake(workdir, config).returncode == 0  # the summary back, for the next tests


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


def test_a_fresh_clone_redraws_charts_and_the_report_without_ingesting(small_run, tmp_path):
    """What a clone holds of a run (runs, validations, summary, environment, charts; no data, no
    exports, no Snakemake metadata), checked out in path order as git does."""
    workdir, config = small_run
    clone = copy_workflow(tmp_path)
    kept = ("runs", "validation", "summary.csv", "summary.md", "environment.json", "plots")
    for path in sorted((workdir / "results").rglob("*")):
        rel = path.relative_to(workdir / "results")
        if path.is_file() and rel.parts[0] in kept and "other" not in rel.parts:
            (clone / "results" / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, clone / "results" / rel)
    shutil.copy(config, clone / config.name)
    plan = planned(clone, clone / config.name, "charts")
    assert not {"ingest", "validate", "expected"} & set(plan)
    assert not [r for r in plan if r.startswith("generate_")]
    result = snakemake(clone, clone / config.name, "charts")
    assert result.returncode == 0, result.stderr[-3000:]
    report = snakemake(clone, clone / config.name, "--report", "report.html")
    assert report.returncode == 0, report.stderr[-3000:]
    assert (clone / "report.html").stat().st_size > 10_000


def test_the_committed_reference_run_redraws_without_ingesting(tmp_path):
    """This checkout as a clone has it: the reference run's charts plan no ingestion."""
    files = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    for name in sorted(files):
        if (REPO / name).is_file():
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO / name, tmp_path / name)
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "2", "-n", "charts"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    rules = set(re.findall(r"^(?:local)?rule (\w+):", result.stdout + result.stderr, re.M))
    assert not {"ingest", "validate", "expected"} & rules, rules
