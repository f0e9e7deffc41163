"""Paced ingestion's slow tier (`make test-faults`): a server paused for 1 s in the middle of a
step shows in the step's maximum latency, the client's auto-flush by interval waits for an
arrival, and the paths the integration tier leaves out land row for row. Each test starts
its own server and checks that it is gone afterwards."""

from __future__ import annotations

import os
import signal
import threading
import time

import psutil
import pytest

from ingestbench.paced.job import run_repeat, run_steps
from ingestbench.paced.names import PacedPath
from ingestbench.server.process import embedded_server
from ingestbench.tsbs.columns import cpu_spec
from tests.helpers import STARTUP_S
from tests.integration.test_paced import paced_settings

PAUSE_S = 1.0


@pytest.fixture
def own_server(questdb_jar, tmp_path):
    """A server of the test's own (it is paused, which would stall every other test's)."""
    with embedded_server(questdb_jar, startup_timeout_s=STARTUP_S,
                         log_path=tmp_path / "server.log") as qdb:  # fmt: skip
        pid = qdb.pid
        yield qdb
    assert pid is not None and not psutil.pid_exists(pid) or _zombie(pid)


def _zombie(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_a_server_paused_mid_step_shows_in_the_steps_maximum(own_server, tiny_dataset, tmp_path):
    """SIGSTOP for 1 s inside a 6 s measured window (after a 0.5 s lead-in), 1.5 s after the
    first rows show: a loaded machine shows them late, so a shorter window could end before
    the pause (seen at a load average of 10 with 3 s). The arrivals due
    meanwhile wait for the server (over HTTP each flush waits for its answer), and every latency
    counts from its schedule, so the window's maximum is at least the pause minus the
    sampler's interval."""
    settings = paced_settings(lead_in_s=0.5, step_s=6.0, sample_interval_s=0.1)
    path = PacedPath("pandas", "dataframe", "http", "arrival")
    pid = own_server.pid

    def pause() -> None:
        # once the repeat's first rows are visible (its rows are cut and its table made
        # first, which a loaded machine slows), then a second on: inside the window
        table = own_server.table_name("paced_r0")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if own_server.scalar(f"SELECT count() FROM {table}"):
                    break
            except Exception:  # not created yet
                pass
            time.sleep(0.05)
        time.sleep(1.5)  # past the lead-in: the first rows may be the warm-up's
        os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(PAUSE_S)
        finally:
            os.kill(pid, signal.SIGCONT)

    threading.Thread(target=pause, daemon=True).start()
    (step,) = run_repeat(own_server, path, cpu_spec(), tiny_dataset["parquet"], settings, 2,
                         [250.0], 0, tmp_path)  # fmt: skip
    print(f"paused {PAUSE_S} s: latency {step['latency']}, service {step['service']}")
    assert step["latency"]["max"] >= PAUSE_S - settings.sample_interval_s
    assert step["service"]["max"] >= PAUSE_S - settings.sample_interval_s  # the flush waited
    assert step["validation"]["ok"]


def test_auto_flush_by_interval_waits_for_the_next_arrival(own_server, tiny_dataset, tmp_path):
    """The client checks its interval (counted from its last flush) only when a row is added:
    with a 1 s interval and an arrival every 0.9 s, the first arrival goes out with the third
    (1.8 s after it was due), where a timer would have sent it after 1 s."""
    settings = paced_settings(arrival_rows=5, auto_flush_interval_ms=1000, lead_in_s=0,
                              step_s=5.4)  # fmt: skip
    path = PacedPath("pandas", "dataframe", "http", "interval")
    gap = 0.9
    (step,) = run_repeat(own_server, path, cpu_spec(), tiny_dataset["parquet"], settings, 2,
                         [5 / gap], 0, tmp_path)  # fmt: skip
    print(f"interval 1 s, an arrival every {gap} s: latency {step['latency']}")
    assert step["latency"]["max"] >= 2 * gap - settings.sample_interval_s > 1.0 + 0.5


@pytest.mark.parametrize(
    "path",
    [
        PacedPath("polars", "rows", "tcp", "rows"),
        PacedPath("pandas", "rows", "http", "interval"),
        PacedPath("pandas", "vectorized", "tcp", "interval"),
        PacedPath("pandas", "vectorized", "http", "rows"),
        PacedPath("polars", "vectorized", "tcp", "arrival"),
        PacedPath("pandas", "executemany", "pg", "arrival"),
    ],
    ids=lambda p: p.name,
)
def test_the_other_paths_validate_row_for_row(own_server, tiny_dataset, tmp_path, path):
    steps = run_steps(own_server, path, cpu_spec(), tiny_dataset["parquet"],
                      paced_settings(step_s=3.0, lead_in_s=1.0), 2, tmp_path)  # fmt: skip
    assert [s["kind"] for s in steps] == ["warmup", "unpaced", "paced"]
    assert all(s["validation"]["ok"] for s in steps)


def test_a_step_within_the_path_is_sustained(questdb, tiny_dataset, tmp_path):
    """A slow step (10 arrivals a second) passes. Here, not in the integration tier: whether a
    machine keeps a schedule depends on what else it runs, and that tier shares it."""
    path = PacedPath("pandas", "dataframe", "http", "arrival")
    settings = paced_settings(step_s=4.0, lead_in_s=1.0)
    (step,) = run_repeat(questdb, path, cpu_spec(), tiny_dataset["parquet"], settings, 2,
                         [50.0], 0, tmp_path)  # fmt: skip
    assert step["status"] == "pass" and step["keeps_up"] and not step["rising"]
    assert step["released_rows_per_s"] == pytest.approx(50.0, rel=0.01)
    assert step["visible_rows_per_s"] == pytest.approx(50.0, rel=0.15)
    assert step["latency"]["p99"] < 1.0
