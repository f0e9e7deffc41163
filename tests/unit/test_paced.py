"""Paced ingestion's logic without a server: names through the catalogue's grammar, the
config's checks, the schedule, the histogram's percentiles, the step verdicts, the summary."""

from __future__ import annotations

import copy

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
from tests.helpers import FIXTURE_RESULTS, REPO, paced_record, paced_step


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
                     rates_rows_per_s=[5000], timestamps="file")  # fmt: skip
    problems = check(config)
    assert len(problems) == 3, problems
    assert "paced.paths[0]" in problems[0] and "has no arrivals to pace" in problems[0]
    assert "paced.paths[1]" in problems[1] and "not by 'rows'" in problems[1]
    assert "20,000 rows" in problems[2] and "timestamps is file" in problems[2]
    assert "epochs" in problems[2] and "timestamps: due" in problems[2]
    assert all(p.endswith(".") and p.count(". ") == 0 for p in problems)


def test_no_rate_is_refused():
    (problem,) = check(_config(rates_of_max=[]))
    assert "no rate" in problem and problem.endswith(".")


@pytest.mark.parametrize(
    "over, key, fix",
    [
        ({"step_s": 1, "sample_interval_s": 0.1}, "paced.step_s is 1 s", "at least 2"),
        ({"sample_interval_s": 2.0, "latency_bound_s": 1.0, "step_s": 60},
         "paced.sample_interval_s is 2 s, longer than paced.latency_bound_s", "at most 0.5"),
        ({"sample_interval_s": 0.4, "latency_bound_s": 0.5},
         "paced.latency_bound_s is 0.5 s, below the sampler's resolution", "at least 0.8"),
    ],
)  # fmt: skip
def test_settings_that_cannot_measure_a_step_are_refused(over, key, fix):
    (problem,) = check(_config(**over))
    assert key in problem and fix in problem and problem.endswith(".")


def test_a_file_too_small_for_its_own_timestamps_is_refused_and_due_stamps_cycle_it():
    few = _config(rates_rows_per_s=[100_000], timestamps="file")
    (problem,) = check(few)
    assert "timestamps is file" in problem and "rows cycled" in problem
    assert check(_config(rates_rows_per_s=[100_000])) == []  # stamped when due: rows repeat


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
    assert check(config) == []  # stamped when due, rows cycle: any size will do
    (problem,) = check(_config(timestamps="file", rates_rows_per_s=[1000]))
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
    figures = _figures(np.full(400, 0.05), 1000.0)
    assert figures.latency["p999"] is None and "400 measured arrivals" in figures.p999_note


def _figures(latencies, offered, started=None, gap=0.05, bound=1.0):
    """A window of arrivals 10 ms apart (10 rows each), sampled every `gap` seconds."""
    from ingestbench.readers.sampler import Sample

    n = len(latencies)
    due = np.arange(n) * 0.01
    started = due if started is None else started
    visible = due + np.asarray(latencies)
    ends = np.arange(-gap, due[-1] + 2 * gap + max(latencies), gap)
    seen = [int(((visible <= t).sum()) * 10) for t in ends]
    samples = [Sample(t, t, v, 0, 0, 0) for t, v in zip(ends, seen, strict=True)]
    window = latency.Window(0, n, 0.0, float(due[-1] + 0.01), offered)
    return latency.step_figures(window, due, started, started + 1e-3, visible, samples, [], 10,
                                bound, 10_000)  # fmt: skip


def test_a_growing_backlog_is_rising_and_a_sawtooth_is_not():
    grows = _figures(np.linspace(0.05, 3.0, 400), 1000.0)
    assert grows.rising and not grows.passed and not grows.keeps_up
    saw = _figures(np.tile(np.linspace(0.01, 0.25, 25), 16), 1000.0)
    assert not saw.rising and saw.keeps_up and saw.passed and saw.status == "pass"
    assert saw.visible_rows_per_s == pytest.approx(1000.0, rel=0.1)


def test_a_producer_behind_its_schedule_does_not_keep_up():
    n = 400
    started = np.arange(n) * 0.0125  # 80 arrivals of 10 rows a second against 100 due
    figures = _figures(np.full(n, 0.05), 1000.0, started=started)
    assert figures.released_rows_per_s == pytest.approx(800.0)
    assert not figures.keeps_up and not figures.passed


def test_a_sampler_gap_over_half_the_bound_is_not_measured_never_a_pass():
    figures = _figures(np.full(400, 0.05), 1000.0, gap=0.6, bound=1.0)
    assert figures.resolution_s == pytest.approx(0.6)
    assert not figures.measured and not figures.passed and figures.status == "not measured"


def test_the_schedule_is_fixed_in_advance_and_lateness_is_not_made_up():
    sent = []

    def send(arrival):
        sent.append(arrival)

    due = release(list(range(5)), send, lambda: None, np.arange(5) * 0.01)
    assert sent == [0, 1, 2, 3, 4]
    assert np.allclose(np.diff(due.due), 0.01)
    assert (due.started >= due.due - 1e-9).all()


def test_a_plan_puts_each_window_between_its_lead_in_and_its_tail():
    from ingestbench.paced.schedule import plan

    planned = plan([100.0, 200.0], 10, 1.0, 2.0, lambda rate: 0.5)
    first, second = planned.segments
    assert (first.first, first.window_first, first.window_end, first.end) == (0, 10, 30, 35)
    assert (second.first, second.window_first, second.window_end) == (35, 55, 95)
    assert planned.offsets[second.first] == pytest.approx(3.5)  # back to back
    assert np.all(np.diff(planned.offsets) > 0)
    # a rate whose period does not divide step_s: the window is whole arrivals, never shorter
    (odd,) = plan([70.4], 10, 5.0, 10.0, lambda rate: 0.1).segments  # 70.4 periods in 10 s
    assert (odd.window_end - odd.window_first) * 10 / 70.4 >= 10.0


def test_rows_are_stamped_when_due_and_cycled(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ingestbench.paced.rows import RowsError, stamped_rows
    from ingestbench.tsbs.columns import cpu_spec

    spec = cpu_spec()
    source = tmp_path / "src.parquet"
    table = {c: [1.0, 2.0, 3.0] for c in spec.fields} | {t: ["a", "b", "c"] for t in spec.tags}
    table[spec.timestamp] = pa.array([10**9, 2 * 10**9, 3 * 10**9], pa.timestamp("ns"))
    pq.write_table(pa.table(table), source)
    out = stamped_rows(source, spec, np.array([0.0, 0.5, 1.0]), 2, True, tmp_path / "o.parquet")
    got = pq.read_table(out)
    assert got.num_rows == 6 and got.column(spec.tags[0]).to_pylist() == list("abcabc")
    stamps = got.column(spec.timestamp).cast(pa.int64()).to_pylist()
    assert stamps == [10**9, 10**9, 15 * 10**8, 15 * 10**8, 2 * 10**9, 2 * 10**9]
    with pytest.raises(RowsError, match="never repeats a row"):
        stamped_rows(source, spec, np.array([0.0, 0.5]), 2, False, tmp_path / "f.parquet")


def test_a_failure_below_a_passing_rate_caps_the_sustained_rate(tmp_path):
    """Sustained means the whole way up, in every repeat: 3,000 passed in both repeats but
    2,000 failed in the second, so the path sustains 1,000."""
    steps = [paced_step("unpaced", None, 0.01)]
    for repeat in (0, 1):
        steps += [paced_step("paced", 1000.0, 0.05, repeat=repeat),
                  paced_step("paced", 2000.0, 0.2, passed=repeat == 0, repeat=repeat),
                  paced_step("paced", 3000.0, 0.3, repeat=repeat)]  # fmt: skip
    a = paced_record(tmp_path, "pandas-dataframe-parquet-http-farrival", "arrival", steps)
    csv = tmp_path / "paced.csv"
    best = highest_sustained(read_paced_table(_written([a], csv)))
    (row,) = best.to_dict("records")
    assert row["paced_sustained_rows_per_s"] == 1000.0 and row["paced_repeats"] == 2
    assert "up to 1,000 rows/s" in markdown(read_paced_table(csv))


def test_each_server_sustains_its_own_rate(tmp_path):
    """The same path on two servers: one failed its lowest rate, so it sustains none, and the
    other's passes do not make up for it."""
    records = []
    for server, passed in (("9.3.4", True), ("8.2.0", False)):
        folder = tmp_path / "paced" / server / "cpu-x"
        folder.mkdir(parents=True)
        steps = [paced_step("unpaced", None, 0.01)] + [
            paced_step("paced", 1000.0, 0.05, passed=passed, repeat=r) for r in (0, 1)
        ]
        variant = "pandas-dataframe-parquet-http-farrival"
        records.append(paced_record(folder, variant, "arrival", steps))
    best = highest_sustained(read_paced_table(_written(records, tmp_path / "paced.csv")))
    by_server = best.set_index("server")["paced_sustained_rows_per_s"]
    assert by_server["9.3.4"] == 1000.0 and np.isnan(by_server["8.2.0"])
    md = markdown(read_paced_table(tmp_path / "paced.csv"))
    assert "### cpu-x on QuestDB 9.3.4" in md and "### cpu-x on QuestDB 8.2.0" in md


def _written(records, csv):
    write_paced_table(records, csv)
    return csv


def test_the_summary_names_each_paths_highest_sustained_rate(tmp_path):
    a = paced_record(
        tmp_path,
        "pandas-dataframe-parquet-http-farrival",
        "arrival",
        [
            paced_step("unpaced", None, 0.01),
            paced_step("paced", 1000.0, 0.05),
            paced_step("paced", 3000.0, 0.5),
            paced_step("paced", 6000.0, 4.0, passed=False),
        ],
    )
    b = paced_record(tmp_path, "pandas-dataframe-parquet-http-finterval", "interval",
                [paced_step("unpaced", None, 0.3), paced_step("paced", 2000.0, 0.05),
                 paced_step("paced", 4000.0, 1.5, passed=False)])  # fmt: skip
    csv = tmp_path / "paced.csv"
    write_paced_table([a, b], csv)
    df = read_paced_table(csv)
    assert len(df) == 7
    assert df[df["kind"] == "paced"]["passed"].tolist().count(True) == 3
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
    assert latency_text(0.2, 0.406852) == "< 0.41 s"  # a bound, rounded up


def test_the_paced_configs_check_clean():
    import yaml

    from ingestbench.config import load_config

    for name in ("paced.yaml", "paced-full.yaml"):
        config = load_config(REPO / "configs" / name)
        assert check(config) == [], name
        assert yaml.safe_load((REPO / "configs" / name).read_text())["paced"]["paths"]


def test_an_own_dataset_can_be_paced():
    config = copy.deepcopy(_config())
    config["datasets"] = [{"label": "mine", "path": "x.parquet"}]
    assert check(config) == []


def test_several_producers_are_an_axis_named_by_the_grammar():
    entry = {"library": "pandas", "method": "dataframe", "transport": "http",
             "flush_modes": ["arrival"]}  # fmt: skip
    config = _config(producers=[1, 4], paths=[entry])
    paths = paced_paths(config)
    assert [p.name for p in paths] == ["pandas-dataframe-parquet-http-farrival",
                                       "pandas-dataframe-parquet-http-farrival-p4"]  # fmt: skip
    assert parse_paced_name(paths[1].name) == paths[1] and paths[1].producers == 4
    assert paths[1].path_name == "pandas-dataframe-parquet-http-p4"
    for name in ("pandas-dataframe-parquet-http-farrival-p1",
                 "pandas-dataframe-parquet-http-farrival-p04",
                 "pandas-dataframe-parquet-http-farrival-px"):  # fmt: skip
        with pytest.raises(PacedNameError):
            parse_paced_name(name)


def test_more_producers_than_hosts_or_with_the_files_timestamps_are_refused():
    (problem,) = check(_config(producers=[1, 12]))  # scale 10: ten hosts
    assert "paced.producers has 12" in problem and "10 values" in problem
    (problem,) = check(_config(producers=[2], timestamps="file"))
    assert "timestamps: due" in problem and problem.endswith(".")
    assert check(_config(producers=[1, 10])) == []


def test_producers_share_out_the_keys_and_each_arrival_shows_by_its_last_rows_key(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ingestbench.paced import producers
    from ingestbench.readers.sampler import Sample

    rows = pa.table({"host": [f"h{i % 5}" for i in range(20)], "v": list(range(20))})
    parts = producers.shares(rows, "host", 2)
    keys = [set(p.column("host").to_pylist()) for p in parts]
    assert keys == [{"h0", "h2", "h4"}, {"h1", "h3"}]  # every other value, none shared
    assert sum(p.num_rows for p in parts) == 20
    assert parts[0].column("v").to_pylist() == sorted(parts[0].column("v").to_pylist())
    with pytest.raises(producers.ProducersError, match="has 5 values"):
        producers.shares(rows, "host", 6)

    # three arrivals of two rows, due at 10, 20 and 30 µs; their last rows' keys b, a, b
    f = tmp_path / "p.parquet"
    stamps = pa.array([10, 10, 20, 20, 30, 30], pa.timestamp("us"))
    pq.write_table(pa.table({"k": ["a", "b", "b", "a", "a", "b"], "ts": stamps}), f)
    arrivals = producers.Arrivals.of_file(f, "k", "ts", 2)
    assert arrivals.stamps_us.tolist() == [10, 20, 30] and arrivals.last_keys.tolist() == [
        "b",
        "a",
        "b",
    ]

    def sample(end, latest):
        return Sample(end - 0.01, end, 0, 0, 0, 0, latest)

    samples = [sample(1.0, {}), sample(2.0, {"b": 10}), sample(3.0, {"a": 20, "b": 10}),
               sample(4.0, {"a": 20, "b": 30})]  # fmt: skip
    assert producers.visible_counts(samples, arrivals).tolist() == [0, 1, 2, 3]
    # the third arrival's last row seen: the ones before it were sent first, so they are too
    assert producers.visible_counts([sample(1.0, {"b": 30})], arrivals).tolist() == [3]


def test_producers_arrivals_merge_back_in_the_schedules_order():
    from ingestbench.paced.producers import merged
    from ingestbench.paced.schedule import Released

    def released(due):
        due = np.asarray(due, dtype=float)
        return Released(due, due + 0.1, due + 0.2, 9.0)

    # producer 0 sent arrivals 0, 2, 4; producer 1 only 1 (it stopped): 0..2 are a prefix
    whole = merged([released([0, 2, 4]), released([1])])
    assert whole.due.tolist() == [0, 1, 2] and whole.sent == 3
    assert whole.accepted.tolist() == pytest.approx([0.2, 1.2, 2.2])
