"""Paced ingestion's logic without a server: names through the catalogue's grammar, the
config's checks, the schedule, the histogram's percentiles, the step verdicts, the summary."""

from __future__ import annotations

import copy
import json

import numpy as np
import pandas as pd
import pytest

from ingestbench.catalogue import paced_names
from ingestbench.config import validate_config
from ingestbench.paced import latency
from ingestbench.paced.names import PacedNameError, PacedPath, parse_paced_name
from ingestbench.paced.schedule import release
from ingestbench.paced.settings import check, paced_paths
from ingestbench.paced.summary import highest_sustained, latency_text, markdown
from ingestbench.paced.table import paced_table, read_paced_table, write_paced_table
from ingestbench.results.summary import read_summary, write_summary
from ingestbench.workflow.experiments import summary_parts
from tests.helpers import FIXTURE_RESULTS, REPO


def test_a_paced_name_round_trips_through_the_grammar():
    path = PacedPath("pandas", "dataframe", "http", "interval")
    assert path.name == "pandas-dataframe-parquet-http-finterval"
    assert parse_paced_name(path.name) == path
    assert path.path_name == "pandas-dataframe-parquet-http"


@pytest.mark.parametrize("name", ["none-server_parquet-parquet-http-farrival",
                                  "pandas-dataframe-parquet-http-fsometimes",
                                  "pandas-dataframe-parquet-http"])  # fmt: skip
def test_a_name_the_catalogue_cannot_pace_is_refused(name):
    with pytest.raises(PacedNameError, match="not a paced variant"):
        parse_paced_name(name)


def test_the_paced_paths_come_from_the_catalogue():
    assert set(paced_names()) == {"rows", "dataframe", "vectorized", "executemany"}


def _config(**paced):
    config = {"datasets": [{"label": "p", "scale": 10, "epochs": 2000}],
              "variants": [{"library": "pandas", "method": "dataframe", "format": "parquet",
                            "transport": "http"}],
              "paced": paced}  # fmt: skip
    return validate_config(config)


def test_the_default_section_checks_clean_and_expands_to_every_flush_mode():
    config = _config()
    assert check(config) == []
    assert [p.name for p in paced_paths(config)] == [
        "pandas-dataframe-parquet-http-farrival",
        "pandas-dataframe-parquet-http-frows",
        "pandas-dataframe-parquet-http-finterval",
    ]


def test_each_problem_is_one_sentence_naming_key_value_and_fix():
    config = _config(paths=[{"library": "none", "method": "server_parquet", "transport": "http"},
                            {"library": "pandas", "method": "executemany", "transport": "pg",
                             "flush_modes": ["rows"]}],
                     rates_of_max=[], step_arrivals=5000)  # fmt: skip
    problems = check(config)
    assert len(problems) == 4, problems
    assert "paced.paths[0]" in problems[0] and "has no arrivals to pace" in problems[0]
    assert "paced.paths[1]" in problems[1] and "not by 'rows'" in problems[1]
    assert "no rate" in problems[2]
    assert "20,000 rows" in problems[3] and "50,000" in problems[3] and "epochs" in problems[3]
    assert all(p.endswith(".") and p.count(". ") == 0 for p in problems)


def test_an_own_dataset_is_refused_for_paced_runs():
    config = _config()
    config = copy.deepcopy(config)
    config["datasets"] = [{"label": "mine", "path": "x.parquet"}]
    assert any("TSBS" in p and "'mine'" in p for p in check(config))


def test_paced_asks_the_kind_whether_it_can_pace_a_dataset_and_its_rows(monkeypatch):
    from ingestbench.datasets.tsbs import TSBS_CPU

    config = copy.deepcopy(_config())
    config["datasets"] = [{"label": "trucks", "scale": 10, "epochs": 2000, "use_case": "iot"}]
    (problem,) = check(config)
    assert "dataset 'trucks' is a TSBS iot dataset" in problem and problem.endswith(".")
    config = _config()
    monkeypatch.setattr(TSBS_CPU, "why_not_paced", lambda entry: "made up")
    assert any("dataset 'p' is made up;" in p for p in check(config))
    monkeypatch.setattr(TSBS_CPU, "why_not_paced", lambda entry: None)
    monkeypatch.setattr(TSBS_CPU, "stated_rows", lambda entry: 7)
    (problem,) = check(config)
    assert problem.startswith("dataset 'p' has 7 rows") and "epochs to at least" in problem


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_histogram_percentiles_match_a_sorted_list_within_its_precision(seed):
    """HdrHistogram with 3 significant digits: each percentile within 0.1 % (plus the 1 us
    unit it records in) of the order statistic of the sorted values."""
    rng = np.random.default_rng(seed)
    seconds = np.concatenate([rng.lognormal(-4, 1.2, 5000), rng.uniform(0.5, 3.0, 20)])
    got = latency.percentiles(seconds, with_p999=True)
    ordered = np.sort(seconds)
    for name, p in latency.PERCENTILES.items():
        # HdrHistogram's percentile: the smallest value with at least p % of values at or below
        exact = ordered[max(0, int(np.ceil(p / 100 * len(ordered))) - 1)]
        assert got[name] == pytest.approx(exact, rel=latency.PRECISION, abs=1e-6), name
    assert got["max"] == pytest.approx(ordered[-1], rel=latency.PRECISION, abs=1e-6)


def test_p999_needs_enough_arrivals():
    assert latency.percentiles(np.full(100, 0.2), with_p999=False)["p999"] is None


def _figures(latencies, offered, started=None, resolution=0.1):
    n = len(latencies)
    due = np.arange(n) * 0.01
    started = due if started is None else started
    return latency.step_figures(due, started, due + np.asarray(latencies), np.full(n, 1e-3),
                                10, offered, resolution, 1000)  # fmt: skip


def test_a_growing_backlog_is_rising_and_a_sawtooth_is_not():
    grows = _figures(np.linspace(0.05, 3.0, 400), 1000.0)
    assert grows.rising and not grows.sustained and grows.keeps_up
    saw = _figures(np.tile(np.linspace(0.01, 0.25, 25), 16), 1000.0)
    assert not saw.rising and saw.sustained and saw.within(1.0)


def test_a_producer_behind_its_schedule_does_not_keep_up():
    n = 400
    started = np.arange(n) * 0.0125  # 80 arrivals of 10 rows a second against 100 due
    figures = _figures(np.full(n, 0.05), 1000.0, started=started)
    assert figures.achieved_rows_per_s == pytest.approx(800.0)
    assert not figures.keeps_up and not figures.sustained


def test_the_schedule_is_fixed_in_advance_and_lateness_is_not_made_up():
    sent = []

    def send(arrival):
        sent.append(arrival)

    due = release(list(range(5)), send, lambda: None, arrivals_per_s=100.0)
    assert sent == [0, 1, 2, 3, 4]
    assert np.allclose(np.diff(due.due), 0.01)
    assert (due.started >= due.due - 1e-9).all()


def _record(tmp_path, variant, flush, steps):
    doc = {"dataset": "cpu-x", "variant": variant, "path": variant.rsplit("-", 1)[0],
           "library": "pandas", "method": "dataframe", "transport": "http", "flush": flush,
           "settings": {"latency_bound_s": 1.0, "arrival_rows": 10}, "steps": steps}  # fmt: skip
    path = tmp_path / f"{variant}.json"
    path.write_text(json.dumps(doc))
    return path


def _step(kind, rate, p99, sustained=True):
    lat = {"p50": p99 / 2, "p90": p99, "p99": p99, "p999": None, "max": p99 * 2}
    return {"name": kind, "kind": kind, "rows_per_s": rate, "of_max": None,
            "achieved_rows_per_s": rate or 5000.0, "arrivals": 1000, "rows": 10_000,
            "first_quarter_p50_s": 0.1, "last_quarter_p50_s": 0.1, "keeps_up": sustained,
            "rising": False, "sustained": sustained, "resolution_s": 0.1, "latency": lat,
            "service": lat, "validation": {"ok": True}}  # fmt: skip


def test_the_summary_names_each_paths_highest_sustained_rate(tmp_path):
    a = _record(
        tmp_path,
        "pandas-dataframe-parquet-http-farrival",
        "arrival",
        [
            _step("unpaced", None, 0.01),
            _step("paced", 1000.0, 0.05),
            _step("paced", 3000.0, 0.5),
            _step("paced", 6000.0, 4.0, sustained=False),
        ],
    )
    b = _record(tmp_path, "pandas-dataframe-parquet-http-finterval", "interval",
                [_step("unpaced", None, 0.3), _step("paced", 2000.0, 0.05),
                 _step("paced", 4000.0, 1.5)])  # fmt: skip
    csv = tmp_path / "paced.csv"
    write_paced_table([a, b], csv)
    df = read_paced_table(csv)
    assert len(df) == 7
    assert df[df["kind"] == "paced"]["within_bound"].tolist().count(True) == 3
    best = highest_sustained(df).set_index("flush")
    assert best.loc["arrival", "paced_sustained_rows_per_s"] == 3000.0
    assert best.loc["interval", "paced_sustained_rows_per_s"] == 2000.0
    md = markdown(df)
    assert "up to 3,000 rows/s, use pandas-dataframe-parquet-http with flush `arrival`" in md
    assert "< 0.1 s" in md  # p99 0.05 s is below the resolution, and said so
    assert "at 2,000 rows/s or less, pandas-dataframe-parquet-http with flush `interval`" in md
    assert "server_parquet" in md  # the paths that cannot be paced, with why
    assert len(paced_table([a])) == 4

    # The summary, written once with the paced part its entry names (as rule summarize does).
    out_csv, out_md = tmp_path / "summary.csv", tmp_path / "summary.md"
    write_summary(sorted((FIXTURE_RESULTS / "runs").rglob("*.json")),
                  sorted((FIXTURE_RESULTS / "validation").rglob("*.json")),
                  FIXTURE_RESULTS / "environment.json", out_csv, out_md,
                  experiments=summary_parts({"paced": [str(csv)]}))  # fmt: skip
    text = out_md.read_text()
    assert text.startswith("# Ingestion benchmark summary")
    assert text.index("## Paced ingestion") > text.index("| # | variant |")
    assert text.endswith(md.strip("\n") + "\n")
    both = pd.read_csv(out_csv)  # summary.csv holds the paced rows after the backfill's
    assert both[both["status"] == "paced"]["flush"].tolist() == ["arrival", "interval"]
    for backfill in (read_summary(out_csv), read_summary(out_csv, unsupported=True)):
        assert "paced" not in set(backfill.get("status", []))  # not a backfill row

    # The chart, from paced.csv as its rule passes it in.
    from ingestbench.charts.draw import render_chart_files

    png = tmp_path / "plots" / "paced.png"
    render_chart_files("paced", out_csv, FIXTURE_RESULTS / "environment.json", [png], data=csv)
    assert png.stat().st_size > 1000


def test_a_latency_below_the_resolution_is_said_to_be_below_it():
    assert latency_text(0.03, 0.1) == "< 0.1 s"
    assert latency_text(0.25, 0.1) == "0.25 s"


def test_the_paced_configs_check_clean():
    import yaml

    from ingestbench.config import load_config

    for name in ("paced.yaml", "paced-full.yaml"):
        config = load_config(REPO / "configs" / name)
        assert check(config) == [], name
        assert yaml.safe_load((REPO / "configs" / name).read_text())["paced"]["paths"]
