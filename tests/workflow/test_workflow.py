"""A tiny end-to-end run of the real workflow (Snakemake CLI, real QuestDB, real DuckDB)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pandas as pd
import psutil
import pytest

from ingestbench.dev.workflow_copy import copy_workflow
from ingestbench.dtypes.cases import CASES
from tests.helpers import QUESTDB_VERSION, TEST_CONFIG, snakemake_command, tiny_variants

pytestmark = pytest.mark.server  # the workflow starts its own servers, from the jar
CONFIG = TEST_CONFIG


def snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    """Run the workflow copy in `workdir` (a copy, so a test may edit its chart code)."""
    cmd = snakemake_command(CONFIG, *args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=workdir)


def scheduled_rules(result: subprocess.CompletedProcess) -> set[str]:
    return set(re.findall(r"^rule (\w+):", result.stdout + result.stderr, re.M))


def questdb_pids() -> set[int]:
    return {
        p.pid
        for p in psutil.process_iter(["cmdline"])
        if "io.questdb/io.questdb.ServerMain" in " ".join(p.info["cmdline"] or [])
    }


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("workflow"))
    before = questdb_pids()
    result = snakemake(workdir)
    assert result.returncode == 0, result.stderr[-4000:]
    return workdir, before


def test_the_workflow_writes_summary_validations_and_charts(finished_run):
    workdir, _ = finished_run
    summary = pd.read_csv(workdir / "results" / "summary.csv")
    assert len(summary) == tiny_variants()
    ceiling = summary[summary["method"] == "ilp_file"]["rows_per_s_median"].max()
    assert summary["ceiling_fraction"].to_numpy() == pytest.approx(
        summary["rows_per_s_median"].to_numpy() / ceiling
    )
    assert summary["validated"].all()
    assert (summary["rows_per_s_median"] > 0).all()
    validations = list((workdir / "results" / "validation").glob("*/*/*.json"))
    assert len(validations) == 11
    assert all(json.loads(p.read_text())["passed"] for p in validations)
    for chart in ("throughput", "phases", "speedup", "scaling", "parquet_vs_csv", "batch_sweep"):
        assert (workdir / "results" / "plots" / f"{chart}.png").stat().st_size > 0
    env = json.loads((workdir / "results" / "environment.json").read_text())
    assert env["questdb"]["version"].startswith(QUESTDB_VERSION)
    # Each variant's export is kept (validation.keep_export), so validation can rerun alone.
    exports = [p for p in (workdir / "results" / "exports").glob("*/*/*") if p.is_dir()]
    assert len(exports) == 11 and all(any(p.rglob("*.parquet")) for p in exports)


def test_each_export_is_validated_before_the_next_ingestion(finished_run):
    """One export waits at a time (each is big at scale, and the disk check counts one): the
    dataset's `expected` comes before the first ingestion, each validation before the next."""
    workdir, _ = finished_run
    first_log = sorted((workdir / ".snakemake" / "log").glob("*.snakemake.log"))[0]
    finished = re.findall(r"^Finished jobid: \d+ \(Rule: (\w+)\)", first_log.read_text(), re.M)
    assert finished.index("expected") < finished.index("ingest")
    waiting = 0  # exports written and not yet validated
    for rule in finished:
        waiting += {"ingest": 1, "validate": -1}.get(rule, 0)
        assert waiting <= 1, finished
    assert finished.count("ingest") == tiny_variants() and waiting == 0


def test_no_questdb_server_outlives_the_workflow(finished_run):
    """Every server the run's jobs logged as started is gone (other QuestDB servers on the
    machine, a concurrent run's, are none of this test's business)."""
    workdir, _ = finished_run
    logs = (workdir / "results" / "logs").rglob("*.log")
    started = {int(pid) for log in logs
               for pid in re.findall(r"started QuestDB pid (\d+)", log.read_text())}  # fmt: skip
    assert len(started) >= tiny_variants()  # one fresh server per ingestion, at least
    assert not started & questdb_pids()


def test_charts_after_a_full_run_schedule_no_ingestion(finished_run):
    workdir, _ = finished_run
    result = snakemake(workdir, "charts", "-n")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Nothing to be done" in result.stdout + result.stderr
    forced = snakemake(workdir, "charts", "-n", "--forcerun", "summarize")
    scheduled = forced.stdout + forced.stderr
    assert "chart_throughput" in scheduled and "rule ingest" not in scheduled


def test_a_chart_styling_change_reruns_only_the_chart_rules(finished_run):
    workdir, _ = finished_run
    plots = workdir / "src" / "ingestbench" / "charts" / "draw.py"
    original = plots.read_text()
    try:
        plots.write_text(original + "\n# a styling change\n")
        result = snakemake(workdir, "-n")
        assert result.returncode == 0, result.stderr[-2000:]
        scheduled = scheduled_rules(result)
        assert "chart_throughput" in scheduled
        assert all(r.startswith("chart_") or r == "all" for r in scheduled), scheduled
    finally:
        plots.write_text(original)


def test_the_report_builds(finished_run):
    workdir, _ = finished_run
    result = snakemake(workdir, "--report", "report.html")
    assert result.returncode == 0, result.stderr[-2000:]
    assert (workdir / "report.html").stat().st_size > 10_000


def test_a_failed_ingestion_leaves_no_run_file_and_reruns(finished_run):
    """Bad input (a truncated dataset) stops its job with one sentence; the fix is a rerun."""
    workdir, _ = finished_run
    data = next((workdir / "results" / "data").glob("*.parquet"))
    good = data.read_bytes()
    run = next((workdir / "results" / "runs").rglob("pandas-dataframe-parquet-http.json"))
    try:
        data.write_bytes(good[: len(good) // 2])
        # The target first: --forcerun takes every following word as a rule name.
        result = snakemake(workdir, str(run.relative_to(workdir)), "--forcerun", "ingest")
        assert result.returncode != 0
        assert "corrupted or truncated" in result.stderr.split("Logfile")[0]
        assert "Traceback" not in result.stderr
        assert not run.exists()
    finally:
        data.write_bytes(good)
    rerun = snakemake(workdir, str(run.relative_to(workdir)))
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert json.loads(run.read_text())["rows"] == 2000


def test_the_dtype_matrix_rule_writes_its_table(finished_run, tmp_path):
    workdir, _ = finished_run
    small = tmp_path / "dtypes.yaml"
    small.write_text("dtype_matrix: {methods: [dataframe, vectorized], libraries: [polars]}\n")
    # The target first: --configfile takes every following word as a file.
    result = snakemake(workdir, "results/dtype_matrix.csv", "--configfile", str(CONFIG), str(small))
    assert result.returncode == 0, result.stderr[-2000:]
    cells = pd.read_csv(workdir / "results" / "dtype_matrix.csv", keep_default_na=False)
    polars_cases = sum(case.library == "polars" for case in CASES)
    assert len(cells) == polars_cases * 2 * 2
    assert set(cells["method"]) == {"dataframe", "vectorized"}
    # vectorized loads every polars dtype (dates too, which dataframe() refuses)
    assert (cells[cells["method"] == "vectorized"]["outcome"] == "validated").all()
    table = (workdir / "results" / "dtype_matrix.md").read_text()
    assert table.startswith("Measured with QuestDB ") and "| polars | `Enum` | SYMBOL |" in table
    assert (workdir / "results" / "plots" / "dtype_matrix.png").stat().st_size > 10_000


def test_the_development_page_shows_the_current_rule_graph():
    from ingestbench.dev import rulegraph

    committed = rulegraph.graph(rulegraph.committed())
    assert committed[0], f"{rulegraph.PAGE} has no rule graph between its markers"
    assert committed == rulegraph.graph(rulegraph.generate()), "run `make rulegraph`"
