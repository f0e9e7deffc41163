"""Summary arithmetic on hand-written run files (tests/fixtures/runs), and environment.json."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from ingestbench.config import validate_config
from ingestbench.errors import UserError
from ingestbench.ingest.environment import collect_environment, write_environment
from ingestbench.ingest.pins import locked_versions
from ingestbench.results.summary import (
    SummaryError,
    read_summary,
    summarize,
    to_markdown,
    write_summary,
)
from ingestbench.results.summary.rows import measured
from ingestbench.workflow.result_keys import config_hash
from tests.helpers import FIXTURE_RESULTS, OWN_PROFILE, REPO

FIXTURE = FIXTURE_RESULTS
BIG, SMALL = "cpu-s100-e10-seed42", "cpu-s10-e10-seed1"


def run_paths(root: Path = FIXTURE) -> list[Path]:
    return sorted((root / "runs").rglob("*.json"))


def validation_paths(root: Path = FIXTURE) -> list[Path]:
    return sorted((root / "validation").rglob("*.json"))


@pytest.fixture(scope="module")
def summary() -> pd.DataFrame:
    return summarize(run_paths(), validation_paths())


def row(df: pd.DataFrame, variant: str, dataset: str = BIG) -> pd.Series:
    found = df[(df["dataset"] == dataset) & (df["variant"] == variant)]
    assert len(found) == 1, (dataset, variant)
    return found.iloc[0]


def test_one_row_per_dataset_and_variant(summary):
    assert len(summary) == len(run_paths()) == 14
    assert not summary.duplicated(["dataset", "variant"]).any()
    r = row(summary, "pandas-threads-parquet-http-w4")
    assert (r["library"], r["method"], r["format"], r["transport"]) == (
        "pandas", "threads", "parquet", "http")  # fmt: skip
    assert r["workers"] == 4 and pd.isna(r["batch_rows"])
    assert row(summary, "pandas-batches-parquet-http-b100")["batch_rows"] == 100
    assert r["dataset_rows"] == 1000 and r["scale"] == 100 and r["repeats"] == 3


def test_phase_medians_min_max_and_cold(summary):
    # e2e 0.4 (cold), 0.2, 0.25; send 0.2, 0.1, 0.15; serialize 0.05, 0.04, 0.06
    r = row(summary, "pandas-dataframe-parquet-http")
    assert r["end_to_end_s_median"] == pytest.approx(0.25)
    assert r["end_to_end_s_min"] == pytest.approx(0.2)
    assert r["end_to_end_s_max"] == pytest.approx(0.4)
    assert r["cold_end_to_end_s"] == pytest.approx(0.4)
    assert (r["send_s_median"], r["send_s_min"], r["send_s_max"]) == pytest.approx((0.15, 0.1, 0.2))
    assert r["serialize_s_median"] == pytest.approx(0.05)
    assert r["read_s_max"] == pytest.approx(0.1)
    assert r["convert_s_median"] == 0


def test_rates_rows_and_mib(summary):
    r = row(summary, "pandas-dataframe-parquet-http")  # 1000 rows, exactly 1 MiB of ILP
    assert (r["rows_per_s_median"], r["rows_per_s_min"], r["rows_per_s_max"]) == pytest.approx(
        (4000, 2500, 5000))  # fmt: skip
    assert r["send_rows_per_s_median"] == pytest.approx(1000 / 0.15)
    assert r["send_rows_per_s_max"] == pytest.approx(10000)
    assert (r["mib_per_s_median"], r["mib_per_s_min"], r["mib_per_s_max"]) == pytest.approx(
        (4.0, 2.5, 5.0))  # fmt: skip
    assert r["send_mib_per_s_median"] == pytest.approx(1 / 0.15)


def test_capped_rows_baseline_uses_its_own_rows(summary):
    # 500 of 1000 rows; e2e 1.0, 0.5, 0.6 -> 500, 1000, 833.3 rows/s
    r = row(summary, "pandas-rows-parquet-http")
    assert r["rows"] == 500 and r["dataset_rows"] == 1000
    assert r["rows_per_s_median"] == pytest.approx(500 / 0.6)
    assert (r["rows_per_s_min"], r["rows_per_s_max"]) == pytest.approx((500, 1000))
    assert r["speedup_vs_rows"] == pytest.approx(1.0)


def test_speedups_against_the_rows_baseline(summary):
    r = row(summary, "pandas-dataframe-parquet-http")
    assert r["speedup_vs_rows"] == pytest.approx(4000 / (500 / 0.6))  # 4.8
    assert r["baseline_variant"] == "pandas-rows-parquet-http"
    # No tcp baseline: the same library and format over http is used, and named.
    tcp = row(summary, "pandas-dataframe-parquet-tcp")
    assert tcp["baseline_variant"] == "pandas-rows-parquet-http"
    assert tcp["speedup_vs_rows"] == pytest.approx(tcp["rows_per_s_median"] / (500 / 0.6))
    # Each dataset has its own baseline: 3750 / 750.
    assert row(summary, "pandas-dataframe-parquet-http", SMALL)["speedup_vs_rows"] == pytest.approx(
        5
    )


def test_missing_baseline_is_nan(summary):
    for variant in ("polars-dataframe-parquet-http", "pandas-dataframe-csv-http",
                    "none-server_parquet-parquet-http"):  # fmt: skip
        r = row(summary, variant)
        assert math.isnan(r["speedup_vs_rows"]), variant
        assert pd.isna(r["baseline_variant"])


def test_server_side_has_no_mib_and_no_serialize(summary):
    r = row(summary, "none-server_parquet-parquet-http")
    assert math.isnan(r["mib_per_s_median"]) and math.isnan(r["serialize_s_median"])
    assert r["rows_per_s_median"] == pytest.approx((1000 / 0.4 + 1000 / 0.25) / 2)
    assert r["repeats"] == 2


def test_failed_validation_is_shown(summary):
    failed = row(summary, "polars-dataframe-csv-tcp")["validated"]
    assert pd.notna(failed) and not failed
    assert summary["validated"].sum() == 13
    md = to_markdown(summary)
    line = next(x for x in md.splitlines() if "`polars-dataframe-csv-tcp`" in x)
    assert "FAILED" in line
    assert "Failed validation" in md


def test_csv_and_markdown_round_trip(tmp_path, summary):
    env = json.loads((FIXTURE / "environment.json").read_text())
    csv, md = tmp_path / "summary.csv", tmp_path / "summary.md"
    write_summary(run_paths(), validation_paths(), FIXTURE / "environment.json", csv, md)
    back = read_summary(csv)
    assert list(back.columns) == list(summary.columns)
    assert back["validated"].tolist() == summary["validated"].tolist()
    assert back["rows_per_s_median"].tolist() == pytest.approx(
        summary["rows_per_s_median"].tolist()
    )
    text = md.read_text()
    assert env["machine"]["cpu_model"] in text and "2 cores" in text
    assert "1,000 rows" in text and "100 rows" in text
    # Sorted by end-to-end rows/s within a dataset, fastest first.
    big = back[back["dataset"] == BIG]["rows_per_s_median"].tolist()
    assert big == sorted(big, reverse=True)


def test_run_without_validation_file_is_not_checked(tmp_path):
    shutil.copytree(FIXTURE, tmp_path / "r")
    (tmp_path / "r" / "validation" / BIG / "pandas-dataframe-csv-http.json").unlink()
    df = summarize(run_paths(tmp_path / "r"), validation_paths(tmp_path / "r"))
    assert pd.isna(row(df, "pandas-dataframe-csv-http")["validated"])
    assert "not checked" in to_markdown(df)


def _set_host(path: Path, hostname: str, cpu_model: str, cpu_count: int) -> None:
    doc = json.loads(path.read_text())
    doc["host"] = {"hostname": hostname, "slurm_job_id": "17", "cpu_model": cpu_model,
                   "cpu_count": cpu_count}  # fmt: skip
    path.write_text(json.dumps(doc))


def test_hosts_and_mixed_machines_are_the_last_columns(tmp_path):
    shutil.copytree(FIXTURE, tmp_path / "r")
    runs = tmp_path / "r" / "runs"
    for path in runs.rglob("*.json"):
        _set_host(path, "node1", "AMD EPYC", 16)
    # One run of the big dataset landed on another kind of node; the small dataset did not.
    _set_host(runs / BIG / "pandas-rows-parquet-http.json", "node7", "Intel Xeon", 16)
    df = summarize(run_paths(tmp_path / "r"), validation_paths(tmp_path / "r"))
    assert list(df.columns[-2:]) == ["hosts", "mixed_machines"]
    assert row(df, "pandas-rows-parquet-http")["hosts"] == "node7"
    assert row(df, "pandas-dataframe-parquet-http")["hosts"] == "node1"
    assert df[df["dataset"] == BIG]["mixed_machines"].all()
    assert not df[df["dataset"] == SMALL]["mixed_machines"].any()
    md = to_markdown(df)
    assert "Mixed machines" in md and f"`{BIG}`" in md.split("Mixed machines")[1]


def test_same_machine_kind_on_many_hosts_is_not_mixed(tmp_path, summary):
    shutil.copytree(FIXTURE, tmp_path / "r")
    for i, path in enumerate(sorted((tmp_path / "r" / "runs").rglob("*.json"))):
        _set_host(path, f"node{i}", "AMD EPYC", 16)
    df = summarize(run_paths(tmp_path / "r"), validation_paths(tmp_path / "r"))
    assert not df["mixed_machines"].any()
    assert "Mixed machines" not in to_markdown(df)
    # Run files from before hosts were recorded: no host, nothing flagged.
    assert summary["hosts"].isna().all() and not summary["mixed_machines"].any()


def test_broken_run_file_names_the_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(UserError, match="bad.json is not valid JSON"):
        summarize([bad])
    bad.write_text(json.dumps({"schema_version": 99}))
    with pytest.raises(UserError, match="schema_version 99"):
        summarize([bad])
    with pytest.raises(SummaryError, match="no run files"):
        summarize([])


# ------------------------------------------------------------------ environment.json


def test_locked_versions_parses_the_lock():
    locked = locked_versions(REPO / "requirements.lock")
    assert locked["pandas"].count(".") >= 1
    assert "seaborn" in locked and "snakemake" in locked
    assert all(" " not in v and "\\" not in v for v in locked.values())


def test_environment_fields(questdb, tmp_path):
    config = validate_config({"datasets": [{"label": "main", "scale": 10, "epochs": 10}],
                              "variants": [{"method": "dataframe"}]})  # fmt: skip
    env = collect_environment(config, questdb, REPO / "requirements.lock", workflow_dir=REPO)
    write_environment(env, tmp_path / "environment.json")
    env = json.loads((tmp_path / "environment.json").read_text())
    assert env["schema_version"] == 1
    assert env["timestamp_utc"].endswith("Z")
    assert env["workflow"]["config_hash"] == config_hash(config)
    assert "git_commit" in env["workflow"]
    m = env["machine"]
    assert m["cores_logical"] >= 1 and m["ram_bytes"] > 0 and m["os"] and "cpu_model" in m
    assert env["python"]["version"].count(".") == 2
    assert env["java"]["version"]
    assert env["questdb"]["version"][0].isdigit() and "QuestDB" in env["questdb"]["build"]
    params = {p["property_path"]: p for p in env["questdb"]["non_default_parameters"]}
    assert params["telemetry.enabled"]["value"] == "false"
    assert all(p["value_source"] != "default" for p in params.values())
    packages = {p["name"]: p for p in env["packages"]}
    assert packages["pandas"]["installed"] and packages["pandas"]["locked"]
    assert set(packages) == set(locked_versions(REPO / "requirements.lock"))


def test_schema_2_runs_bring_client_and_server_memory_and_overlap(tmp_path):
    source = FIXTURE / "runs" / BIG / "pandas-dataframe-parquet-http.json"
    run = json.loads(source.read_text())
    run["schema_version"] = 2
    for i, rep in enumerate(run["repeats"]):
        rep.pop("peak_rss_bytes", None)
        rep.update(client_rss_bytes=(100 + i) * 2**20, server_rss_bytes=700 * 2**20,
                   overlap=[1.2, 1.5, 1.4][i])  # fmt: skip
    path = tmp_path / "runs" / run["dataset"]["name"] / source.name
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(run))
    old = FIXTURE / "runs" / BIG / "pandas-rows-parquet-http.json"
    df = summarize([path, old])  # a schema_version 1 file beside it still loads
    r = row(df, "pandas-dataframe-parquet-http")
    assert r["client_rss_bytes_max"] == 102 * 2**20 and r["server_rss_bytes_max"] == 700 * 2**20
    assert r["overlap_median"] == pytest.approx(1.4)
    assert "| 102 |" in to_markdown(df)


def test_cpu_per_million_rows_and_table_size_on_disk(tmp_path):
    source = FIXTURE / "runs" / BIG / "pandas-dataframe-parquet-http.json"
    run = json.loads(source.read_text())
    run["schema_version"] = 2
    for i, rep in enumerate(run["repeats"]):
        rep.update(client_cpu_s=[0.001, 0.003, 0.002][i], server_cpu_s=0.004,
                   table_disk_bytes=(10 + i) * 2**20)  # fmt: skip
    path = tmp_path / "runs" / run["dataset"]["name"] / source.name
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(run))
    old = FIXTURE / "runs" / BIG / "pandas-rows-parquet-http.json"
    df = summarize([path, old])
    r = row(df, "pandas-dataframe-parquet-http")
    million = 1e6 / r["rows"]
    assert r["client_cpu_s_per_1m_rows"] == pytest.approx(0.002 * million)
    assert r["server_cpu_s_per_1m_rows"] == pytest.approx(0.004 * million)
    assert r["table_disk_mib_median"] == pytest.approx(11)
    assert math.isnan(row(df, "pandas-rows-parquet-http")["table_disk_mib_median"])  # not recorded


def test_a_checkout_is_dirty_for_changed_code_not_for_rewritten_results(tmp_path):
    import subprocess

    from ingestbench.ingest.environment import git_info

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "summary.csv").write_text("a\n")
    (tmp_path / "rules.smk").write_text("rule all:\n")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    assert git_info(tmp_path)["git_dirty"] is False
    (tmp_path / "results" / "summary.csv").write_text("b\n")  # what every run does
    assert git_info(tmp_path)["git_dirty"] is False
    (tmp_path / "rules.smk").write_text("rule all:\n    input: []\n")
    assert git_info(tmp_path)["git_dirty"] is True


def test_contended_runs_are_marked(tmp_path):
    shutil.copytree(FIXTURE, tmp_path / "r")
    path = tmp_path / "r" / "runs" / BIG / "pandas-rows-parquet-http.json"
    doc = json.loads(path.read_text())
    doc["contention"] = {"contended": True, "other_questdb_pids": [7], "other_job_pids": [],
                         "load_1m_max": 3.5, "cores": 2}  # fmt: skip
    path.write_text(json.dumps(doc))
    df = summarize(run_paths(tmp_path / "r"), validation_paths(tmp_path / "r"))
    assert row(df, "pandas-rows-parquet-http")["contended"]
    assert not row(df, "pandas-dataframe-parquet-http")["contended"]
    md = to_markdown(df)
    assert "`pandas-rows-parquet-http` (contended)" in md
    assert f"**Contended:** `{BIG}/pandas-rows-parquet-http` shared the machine" in md
    df.to_csv(tmp_path / "summary.csv", index=False)
    assert read_summary(tmp_path / "summary.csv")["contended"].sum() == 1


def test_the_summary_refuses_a_run_file_of_other_settings(tmp_path):
    """Each run file is checked against the settings the config gives it, whatever way its path
    is spelled (./results/… or results/…), and one that differs is refused naming the key."""
    from ingestbench.results.summary import SummaryError, summarize

    source = next((FIXTURE_RESULTS / "runs").rglob("*.json"))
    doc = json.loads(source.read_text())
    doc["settings"] = {"repeats": 3, "questdb": {"worker_idle": "park"}}
    run = tmp_path / "runs" / "r.json"
    run.parent.mkdir()
    run.write_text(json.dumps(doc))
    same = {"repeats": 3, "questdb": {"worker_idle": "park"}}
    assert len(summarize([run], [], {f"{tmp_path}/./runs/r.json": same})) == 1
    other = {"repeats": 3, "questdb": {"worker_idle": "spin"}}
    with pytest.raises(SummaryError, match=r"questdb\.worker_idle \('park' in the run file, "
                                           r"'spin' in the config\)"):  # fmt: skip
        summarize([run], [], {str(run): other})


def _unsupported_run(root: Path, variant: str, reason: str) -> Path:
    """A run file as the ingest job writes it for a method that cannot load an own table."""
    from ingestbench.datasets import of_manifest
    from ingestbench.ingest.job import IngestFiles, write_unsupported
    from ingestbench.variants import parse_variant_name

    manifest = {"name": "own-mine", "rows": 500, "label": "mine", "columns": 4, "bytes": 9_000,
                "sha256": "0" * 64, "table": {"table": "mine"}, "own": True}  # fmt: skip
    run = root / "runs" / "own-mine" / f"{variant}.json"
    write_unsupported(IngestFiles(Path("x"), Path("m"), run), parse_variant_name(variant),
                      of_manifest(manifest).run_summary(manifest), reason)  # fmt: skip
    return run


def test_an_unsupported_variant_is_a_row_with_its_reason(tmp_path):
    shutil.copytree(FIXTURE, tmp_path / "r")
    _unsupported_run(tmp_path / "r", "polars-vectorized-parquet-tcp-w2", "numbers only")
    csv, md = tmp_path / "summary.csv", tmp_path / "summary.md"
    df = write_summary(run_paths(tmp_path / "r"), validation_paths(tmp_path / "r"), None, csv, md)
    own = df[df["dataset"] == "own-mine"]
    assert len(own) == 1 and own.iloc[0]["variant"] == "polars-vectorized-parquet-tcp-w2"
    last = own.iloc[0]
    assert (last["status"], last["reason"], last["dataset_label"]) == (
        "unsupported", "numbers only", "mine")  # fmt: skip
    assert pd.isna(last["rows_per_s_median"]) and pd.isna(last["validated"])
    assert set(df.drop(own.index)["status"]) == {"measured"}
    full = read_summary(csv, unsupported=True)
    assert full["status"].tolist() == df["status"].tolist()
    assert "own-mine" not in set(read_summary(csv)["dataset"])  # what the charts read
    text = md.read_text()
    assert "- `own-mine/polars-vectorized-parquet-tcp-w2`: numbers only" in text
    assert "## own-mine" not in text  # nothing measured: no table of its own


def test_speedup_to_sql_divides_by_the_datasets_to_sql_rate():
    import math

    import pandas as pd

    from ingestbench.results.summary.rows import to_sql_speedups

    df = pd.DataFrame(
        {"dataset": ["a", "a", "a", "b"],
         "method": ["to_sql", "vectorized", "executemany", "dataframe"],
         "rows_per_s_median": [10_000.0, 500_000.0, 40_000.0, 300_000.0]}
    )  # fmt: skip
    got = to_sql_speedups(df)
    assert got[:3] == [1.0, 50.0, 4.0] and math.isnan(got[3])  # b has no to_sql
    assert to_sql_speedups(df[df["method"] != "to_sql"]) is None  # no column without one


def test_the_summary_says_how_much_faster_the_best_validated_path_is_than_to_sql():
    import pandas as pd

    from ingestbench.results.summary.markdown import _over_to_sql

    group = pd.DataFrame(
        {"variant": ["a-vectorized", "a-to_sql", "a-broken"],
         "method": ["vectorized", "to_sql", "dataframe"],
         "rows_per_s_median": [500_000.0, 10_000.0, 900_000.0],
         "validated": [True, True, False], "speedup_to_sql": [50.0, 1.0, 90.0]}
    )  # fmt: skip
    (line,) = [x for x in _over_to_sql(group) if x]
    assert line.startswith("The fastest validated variant, `a-vectorized`, is 50.0× `a-to_sql`")
    assert _over_to_sql(group.drop(columns="speedup_to_sql")) == []


def test_each_datasets_profile_and_recommendation_are_in_the_summary(tmp_path):
    """A dataset's profile (an expected file's or a manifest's) is a paragraph under its heading,
    with the recommendation drawn from the run, and is written beside the summary for the
    archive (profiles.json) and the report (profiles.csv); a dataset without one has none."""
    profile = {**OWN_PROFILE}
    del profile["recommendation"]
    (tmp_path / "expected.json").write_text(json.dumps({"dataset": BIG, "profile": profile}))
    csv, md, out = tmp_path / "summary.csv", tmp_path / "summary.md", tmp_path / "profiles.json"
    df = write_summary(run_paths(), validation_paths(), None, csv, md,
                       profile_paths=[tmp_path / "expected.json"], profiles_path=out)  # fmt: skip
    text = md.read_text()
    big = text[text.index(f"## {BIG}") : text.index(f"## {SMALL}")]
    assert "**Profile**: 500 rows" in big and "90.0% of rows arrive behind" in big
    best = measured(df[(df["dataset"] == BIG) & (df["validated"] == True)])  # noqa: E712
    best = best.sort_values("rows_per_s_median").iloc[-1]["variant"]
    assert f"**Recommendation**: use `{best}`, the fastest validated path here" in big
    assert "**Profile**" not in text[text.index(f"## {SMALL}") :]
    written = json.loads(out.read_text())
    assert list(written) == [BIG] and written[BIG]["recommendation"].startswith(f"use `{best}`")
    table = pd.read_csv(out.with_suffix(".csv"))
    assert table["late_share"].tolist() == [0.9] and table["partitions"].tolist() == ["30 DAY"]
