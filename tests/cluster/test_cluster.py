"""The tiny workflow through a real SLURM (profiles/slurm), and `scancel` of a running ingestion.

Needs a SLURM cluster that answers (`make test-cluster` starts a single-node one with
cluster/slurm-up.sh); deselected from plain `pytest` by the `cluster` marker.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import psutil
import pytest
import yaml

from ingestbench.dev.workflow_copy import REPO, copy_workflow
from tests.helpers import TEST_CONFIG as CONFIG
from tests.helpers import snakemake_command, tiny_variants, wait_for

SLURM_STATE = Path(os.environ.get("INGESTBENCH_SLURM_DIR", "/var/tmp/ingestbench-slurm"))
PROFILE = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())
# Ingest and validate run in jobs of the group `variant`, `group-components` variants per job
# (profiles/slurm); a dataset's generate and expected rules form one job of the group `dataset`
# (rules/). A group job's log goes to group_<group>_<its rules>/.
GROUP = "variant"
PER_JOB = PROFILE["group-components"][GROUP]
REMOTE_JOBS = {"dataset": 1, GROUP: -(-tiny_variants() // PER_JOB)}
LOCAL_RULES = ("environment", "summarize", "chart_throughput", "published_comparison")
ROWS_VARIANT = "pandas-rows-parquet-http"
ACTIVE_STATES = "pending,running,suspended,completing,configuring"


@pytest.fixture(scope="module", autouse=True)
def slurm_answers():
    if shutil.which("sinfo") is None or subprocess.run(["sinfo"], capture_output=True).returncode:
        pytest.skip("no SLURM cluster answers here; `make test-cluster` starts one (as root).")


def snakemake_slurm(workdir: Path, *targets: str) -> tuple[subprocess.Popen, Path]:
    """Start the workflow through profiles/slurm; its output goes to a log file of its own."""
    log = workdir / f"snakemake-{time.monotonic_ns()}.log"
    cmd = snakemake_command("config.cluster.yaml", "--slurm-keep-successful-logs", *targets,
                            profile="profiles/slurm")  # fmt: skip
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=workdir, stdout=out, stderr=subprocess.STDOUT)
    return proc, log


def finish(run: tuple[subprocess.Popen, Path], timeout: float = 1800) -> str:
    """Wait for the run (Ctrl-C it if it overstays: the executor then cancels its jobs)."""
    proc, log = run
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)
        proc.wait(300)
        raise
    return log.read_text()


def job_log_ids(workdir: Path) -> dict[str, list[str]]:
    """{rule or group: [SLURM job ids]} from the executor's per-job logs."""
    out: dict[str, list[str]] = {}
    # rule_<name>/<wildcards>/<job id>.log, rule_<name>/<job id>.log for a rule without any,
    # group_<group>_<rules>/<job id>.log for a group job
    for log in (workdir / ".snakemake" / "slurm_logs").glob("*/**/*.log"):
        kind = log.relative_to(workdir / ".snakemake" / "slurm_logs").parts[0]
        group = next((g for g in REMOTE_JOBS if kind.startswith(f"group_{g}_")), None)
        out.setdefault(group or kind.removeprefix("rule_"), []).append(log.stem)
    return out


def active_jobs() -> list[str]:
    out = subprocess.run(["squeue", "-h", "-t", ACTIVE_STATES, "-o", "%i"], capture_output=True,
                         text=True, check=True)  # fmt: skip
    return out.stdout.split()


def questdb_in_slurm_jobs() -> dict[int, str]:
    """{pid: SLURM job id} of every QuestDB server started inside a SLURM job."""
    found = {}
    for p in psutil.process_iter(["cmdline"]):
        if "io.questdb/io.questdb.ServerMain" not in " ".join(p.info["cmdline"] or []):
            continue
        try:
            job = p.environ().get("SLURM_JOB_ID")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if job:
            found[p.pid] = job
    return found


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, questdb_jar) -> Path:
    workdir = copy_workflow(tmp_path_factory.mktemp("cluster"))
    # A jar cache of its own: nothing else on the machine can replace the jar mid-run.
    cache = workdir / "jar-cache"
    cache.mkdir()
    shutil.copy(questdb_jar, cache / questdb_jar.name)
    config = yaml.safe_load(CONFIG.read_text())
    # A loaded CI machine can take a while to start Java; this test is about behaviour.
    config["questdb"] = {"startup_timeout_s": 300, "cache_dir": str(cache)}
    (workdir / "config.cluster.yaml").write_text(yaml.safe_dump(config))
    return workdir


@pytest.fixture(scope="module")
def cluster_run(workdir):
    run = snakemake_slurm(workdir)
    log = finish(run)
    assert run[0].returncode == 0 and "steps (100%) done" in log, log[-4000:]
    return workdir, log


def test_every_remote_job_was_a_slurm_job(cluster_run):
    workdir, log = cluster_run
    ids = job_log_ids(workdir)
    assert {rule: len(jobs) for rule, jobs in ids.items()} == REMOTE_JOBS
    ctld = (SLURM_STATE / "log" / "slurmctld.log").read_text()
    for job in (j for jobs in ids.values() for j in jobs):
        assert f"_job_complete: JobId={job} WEXITSTATUS 0" in ctld, f"slurmctld: job {job}?"
    for rule in LOCAL_RULES:  # the light rules ran on the submit host
        assert re.search(rf"^localrule {rule}:", log, re.M), rule
        assert rule not in ids


def test_every_variant_validated_and_ran_in_its_job(cluster_run):
    workdir, _ = cluster_run
    summary = pd.read_csv(workdir / "results" / "summary.csv")
    assert len(summary) == tiny_variants() and summary["validated"].all()
    assert not summary["mixed_machines"].any()
    ingest_jobs = set(job_log_ids(workdir)[GROUP])
    run_files = sorted((workdir / "results" / "runs").glob("*/*/*.json"))  # <server>/<dataset>/
    assert len(run_files) == tiny_variants()
    for path in run_files:
        host = json.loads(path.read_text())["host"]
        assert host["slurm_job_id"] in ingest_jobs and host["cpu_count"] >= 1


def server_lifetime(log: Path) -> tuple[str, str]:
    """First and last timestamp of a QuestDB log (ISO 8601 in UTC, so they sort as text)."""
    stamps = re.findall(r"^(\d{4}-\d\d-\d\dT[\d:.]+Z) ", log.read_text(), re.M)
    return stamps[0], stamps[-1]


def test_ingestions_never_overlapped(cluster_run):
    """Each ingestion alone on its node: no two servers lived at once, although a group job
    holds two variants and SLURM could start jobs side by side."""
    workdir, _ = cluster_run
    # <server>/<dataset>/<variant>.log: the ingestions' servers (environment.log is the submit
    # host's)
    logs = sorted((workdir / "results" / "logs" / "questdb").glob("*/*/*.log"))
    assert len(logs) == tiny_variants()
    lives = sorted(server_lifetime(log) for log in logs)
    for (_, end), (start, _) in itertools.pairwise(lives):
        assert end <= start, lives


def test_no_slurm_job_and_no_questdb_is_left(cluster_run):
    assert active_jobs() == []
    assert questdb_in_slurm_jobs() == {}


@pytest.mark.parametrize("scancel_signal", ["TERM", "KILL"])
def test_scancel_of_an_ingestion_stops_its_server_and_a_rerun_completes(
    cluster_run, scancel_signal
):
    """Plain scancel (SIGTERM: the job stops its server) and SIGKILL (no cleanup possible: the
    server dies with its parent, PR_SET_PDEATHSIG): either way no server outlives its job."""
    workdir, _ = cluster_run
    server = next((workdir / "results" / "runs").iterdir()).name  # runs/<server>/<dataset>/
    dataset = next((workdir / "results" / "runs" / server).iterdir()).name
    run_file = Path("results") / "runs" / server / dataset / f"{ROWS_VARIANT}.json"
    (workdir / run_file).unlink()
    run = snakemake_slurm(workdir, str(run_file))
    try:
        pid, job = next(
            iter(wait_for(questdb_in_slurm_jobs, "a QuestDB in a job", 600, poll_s=0.2).items())
        )
        data_dir = Path(psutil.Process(pid).cmdline()[-1])
        cmd = ["scancel", job] if scancel_signal == "TERM" else ["scancel", "-s", "KILL", job]
        subprocess.run(cmd, check=True)
        wait_for(lambda: job not in active_jobs(), f"job {job} to end", 300, poll_s=0.2)
        wait_for(lambda: not psutil.pid_exists(pid), f"QuestDB {pid} to exit", 30, poll_s=0.2)
    finally:
        log = finish(run, timeout=600)
    assert run[0].returncode != 0, "the cancelled job should fail the run"
    assert "Error in rule ingest" in log
    assert not (workdir / run_file).exists()
    shutil.rmtree(data_dir, ignore_errors=True)  # left behind only by a SIGKILLed job
    rerun = snakemake_slurm(workdir, str(run_file))
    finish(rerun)
    assert rerun[0].returncode == 0
    assert json.loads((workdir / run_file).read_text())["host"]["slurm_job_id"] != job
    assert questdb_in_slurm_jobs() == {}
