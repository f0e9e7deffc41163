"""What the test tiers share: where the checkout, the fixtures and the tiny config are, and the
QuestDB version the tests run (the schema's default, the one home of that fact)."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from ingestbench import CHECKOUT as REPO
from ingestbench.schema import SCHEMA_PATH

TESTS = Path(__file__).resolve().parent
#: The committed reference run of the default config (never a folder a run writes).
REFERENCE = REPO / "reference" / "default"
#: Hand-written run, validation and environment files (a results folder).
FIXTURE_RESULTS = TESTS / "fixtures" / "runs" / "results"
#: The tiny workflow config the workflow, fault and cluster tiers run.
TEST_CONFIG = TESTS / "data" / "config.test.yaml"
#: A loaded machine can take over a minute to start a JVM; tests wait, they do not time servers.
STARTUP_S = 300
QUESTDB_VERSION: str = yaml.safe_load(SCHEMA_PATH.read_text())["properties"]["questdb"][
    "properties"
]["version"]["default"]


def cpu_aggregates(aggregates: dict[str, Any]) -> dict[str, Any]:
    """The aggregates file of a cpu dataset or run: its one table's aggregates under its name."""
    return {"tables": {"cpu": aggregates}}


__all__ = [
    "FIXTURE_RESULTS",
    "QUESTDB_VERSION",
    "REFERENCE",
    "REPO",
    "STARTUP_S",
    "TESTS",
    "TEST_CONFIG",
    "cpu_aggregates",
    "ctrl_c_default",
    "snakemake_command",
    "with_own_data",
    "tiny_variants",
    "wait_for",
]


def ctrl_c_default() -> None:
    """preexec_fn of a child a test stops with SIGINT, as Ctrl-C in a terminal: SIGINT at its
    default. A child inherits an ignored SIGINT (a shell's background job, pytest-xdist's
    workers), and its Python then never raises KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def tiny_variants() -> int:
    """How many variants the tiny workflow config (TEST_CONFIG) runs."""
    from ingestbench.config import load_config
    from ingestbench.variants import variants_by_dataset

    config = load_config(TEST_CONFIG)
    labels = [d["label"] for d in config["datasets"]]
    return sum(len(vs) for vs in variants_by_dataset(config, labels).values())


def snakemake_command(
    config: str | Path, *args: str, cores: int = 2, profile: str | None = None
) -> list[str]:
    """The workflow's command line: this venv's Snakemake on `config`, on `cores` or through a
    `profile` (profiles/slurm), then `args` (targets, flags). The option after --configfile ends
    its list, so a target in `args` is never read as a config."""
    run_on = ["--profile", profile] if profile else ["--cores", str(cores)]
    return [sys.executable, "-m", "snakemake", "--configfile", str(config), *run_on, *args]


def wait_for(
    condition: Callable[[], Any], what: str, timeout_s: float = 120, poll_s: float = 0.02
) -> Any:
    """Poll until `condition()` is truthy and return that; fail naming `what` after `timeout_s`
    (a bound on a hang, never a measurement)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(poll_s)
    pytest.fail(f"timed out waiting for {what} after {timeout_s:g} s")


#: The own dataset `with_own_data` adds: its label, rows, columns and bytes, and a variant that
#: cannot load it with the reason.
OWN = {"dataset": "own-mine", "dataset_label": "mine", "dataset_rows": 500, "dataset_columns": 4,
       "dataset_bytes": 9 * 2**20, "unsupported": "polars-vectorized-parquet-tcp-w2",
       "reason": "the vectorized encoder writes numbers only"}  # fmt: skip


def with_own_data(results: Path) -> Path:
    """A copy's summary.csv with an own dataset as the summary writes one: a measured variant
    (the first row's figures) and an unsupported one (its status, its reason, no figures)."""
    import pandas as pd

    path = Path(results) / "summary.csv"
    df = pd.read_csv(path)
    df["status"], df["reason"] = "measured", None
    ds = {k: OWN[k] for k in ("dataset", "dataset_label", "dataset_rows", "dataset_columns",
                              "dataset_bytes")}  # fmt: skip
    measured = df.iloc[[0]].assign(**ds)
    gone = df.iloc[[0]].assign(**ds, variant=OWN["unsupported"], method="vectorized",
                               status="unsupported", reason=OWN["reason"])  # fmt: skip
    figures = [c for c in df.columns if c.endswith(("_median", "_min", "_max", "_1m_rows"))]
    gone[figures + ["validated", "ceiling_fraction"]] = None
    pd.concat([df, measured, gone], ignore_index=True).to_csv(path, index=False)
    return path


#: A profile of OWN's dataset as profiles.json holds one (results.profile).
OWN_PROFILE = {
    "rows": 500,
    "tables": [{"table": "mine", "rows": 500, "types": {"SYMBOL": 1, "VARCHAR": 2,
                "TIMESTAMP": 1}, "distinct": {"s": 3, "v": 420, "w": 17}, "late_rows": 450,
                "late_share": 0.9, "max_lag_s": 86_400.0, "partition_by": "DAY",
                "partitions": 30}],
    "bytes_per_row": {"parquet": {"bytes_per_row": 120.0, "estimate": False},
                      "csv": {"bytes_per_row": None, "estimate": False},
                      "ilp": {"bytes_per_row": 300.0, "estimate": True}},
    "recommendation": "use `server_parquet`: 1.6× the best client path",
}  # fmt: skip


def sample_variants(method: str, count: int, whole_file: bool = True, start: int = 0) -> list[str]:
    """Variant names of a catalogue method for the tests that run every method: `count` of them
    taking its libraries, formats and transports in turn from the `start`-th (2 workers then 1,
    300 rows per batch then 700), then, for a method that reads in chunks, the first read whole
    (`-call`); each name once."""
    from ingestbench.catalogue import METHODS
    from ingestbench.variants import Variant

    m = METHODS[method]
    variants = [
        Variant(m.libraries[i % len(m.libraries)], method, m.formats[i % len(m.formats)],
                m.transports[i % len(m.transports)], workers=2 if i % 2 == 0 else 1,
                batch_rows=300 if i % 2 == 0 else 700)
        for i in range(start, start + count)
    ]  # fmt: skip
    if whole_file and m.chunked:
        variants.append(dataclasses.replace(variants[0], chunk_rows=None))
    return list(dict.fromkeys(v.name for v in variants))


def python_in(copy: Path) -> Callable[..., str]:
    """A runner of this interpreter in a copy of the tree, its package first on the path: its
    stdout, or the test fails with its stderr."""
    env = {**os.environ, "PYTHONPATH": str(copy / "src")}

    def python(*args: str) -> str:
        done = subprocess.run([sys.executable, *args], cwd=copy, env=env, capture_output=True,
                              text=True)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    return python


def paced_record(tmp_path: Path, variant: str, flush: str, steps: list[dict[str, Any]]) -> Path:
    """A paced job's record (paced.job's JSON) of `steps` (paced_step) in `tmp_path`."""
    doc = {"dataset": "cpu-x", "variant": variant, "path": variant.rsplit("-", 1)[0],
           "library": "pandas", "method": "dataframe", "transport": "http", "flush": flush,
           "settings": {"latency_bound_s": 1.0, "arrival_rows": 10}, "steps": steps}  # fmt: skip
    path = tmp_path / f"{variant}.json"
    path.write_text(json.dumps(doc))
    return path


def paced_step(
    kind: str, rate: float | None, p99: float, passed: bool = True, repeat: int = 0
) -> dict[str, Any]:
    """One step of a paced record: a p99 of `p99` s, passed or failed."""
    lat = {"p50": p99 / 2, "p90": p99, "p99": p99, "p999": None, "max": p99 * 2}
    return {"name": kind, "kind": kind, "rows_per_s": rate, "of_max": None, "repeat": repeat,
            "released_rows_per_s": rate or 5000.0, "sent_rows_per_s": rate or 5000.0,
            "visible_rows_per_s": rate or 5000.0, "backlog_rows_per_s": 0.0,
            "latency_slope": 0.0, "measured_s": 10.0, "arrivals": 1000, "rows": 10_000,
            "p999_note": "1,000 measured arrivals, fewer than 10,000", "keeps_up": passed,
            "rising": False, "measured": True, "passed": passed, "within_bound": passed,
            "status": "pass" if passed else "fail", "resolution_s": 0.1, "failed_samples": 0,
            "latency": lat, "service": lat, "validation": {"ok": True}}  # fmt: skip


def results_with_every_part(results: Path, experiments: bool = True, older: str = "") -> Path:
    """The reference run's results (copied to `results` unless there) with a paced.csv and a
    delivery.csv beside them (a path sustaining 1,000 rows/s; over HTTP a kill duplicates 5 rows,
    over TCP it loses 7 unknown), the config's paced and delivery sections when `experiments`,
    and with `older` every variant again on that version at half the rate."""
    import shutil

    import pandas as pd

    from ingestbench.paced.table import write_paced_table
    from ingestbench.server.versions import server_labels

    if not results.exists():
        shutil.copytree(REFERENCE, results)
    env = json.loads((results / "environment.json").read_text())
    config = env["workflow"]["config"]
    (server,) = server_labels(config)
    folder = results.parent / "paced-records" / server / "cpu-x"
    folder.mkdir(parents=True, exist_ok=True)
    steps = [paced_step("unpaced", None, 0.01), paced_step("paced", 1000.0, 0.2),
             paced_step("paced", 2000.0, 3.0, passed=False)]  # fmt: skip
    record = paced_record(folder, "pandas-dataframe-parquet-http-farrival", "arrival", steps)
    write_paced_table([record], results / "paced.csv")
    delivery = results / "delivery" / server / "delivery.csv"
    delivery.parent.mkdir(parents=True, exist_ok=True)
    delivery.write_text(
        "path,fault,source_rows,lost_acknowledged,lost_unknown,lost_reported,duplicated,altered,"
        "errors_seen,overlapped,reported,load_s,fault_at_s\n"
        "dataframe-http,none,100,0,0,0,0,0,0,,,0.5,\n"
        "dataframe-http,kill,100,0,0,0,5,0,1,True,,0.6,0.31\n"
        "dataframe-tcp,none,100,0,0,0,0,0,0,,,0.2,\n"
        "dataframe-tcp,kill,100,0,7,0,0,0,0,True,,0.3,0.25\n"
    )
    if experiments:
        env["workflow"]["config"] = {**config, "paced": {}, "delivery": {}}
        (results / "environment.json").write_text(json.dumps(env))
    if older:
        summary = pd.read_csv(results / "summary.csv")
        half = {c: summary[c] / 2 for c in ("rows_per_s_median", "rows_per_s_min",
                                             "rows_per_s_max")}  # fmt: skip
        pd.concat([summary.assign(server=server), summary.assign(server=older, **half)]).to_csv(
            results / "summary.csv", index=False
        )
    return results


def open_page(browser: Any, url: str) -> Any:
    """A 1280 × 800 page of `browser` at `url`, drawn once (`body[data-rendered]`), its
    console errors and uncaught exceptions kept in `page.problems`."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.problems = []
    page.on("pageerror", lambda e: page.problems.append(str(e)))
    page.on("console", lambda m: m.type == "error" and page.problems.append(m.text))
    page.goto(url)
    page.wait_for_selector("body[data-rendered]")
    return page
