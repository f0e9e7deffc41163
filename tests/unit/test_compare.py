"""`ingestbench compare` on two hand-made results folders: verdicts, one-sided variants, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingestbench.cli import EXIT_USER_ERROR, main
from ingestbench.results.compare import CompareError, compare, verdict, write_compare
from ingestbench.variants import parse_variant_name

DATASET = "cpu-s10-e10-seed1"


def _run_file(root: Path, variant: str, e2e: list[float], send: list[float], rows=1000) -> None:
    path = root / "runs" / DATASET / f"{variant}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    repeats = [{"repeat": i, "cold": False, "end_to_end": e, "phases": {"send": s}}
               for i, (e, s) in enumerate(zip(e2e, send, strict=True))]  # fmt: skip
    doc = {"schema_version": 2, "dataset": {"name": DATASET, "rows": 1000},
           "variant": parse_variant_name(variant).to_dict(), "rows": rows,
           "warmup": {"rows": 300, "seconds": 0.1}, "repeats": repeats}  # fmt: skip
    path.write_text(json.dumps(doc))


@pytest.fixture
def folders(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    # 1000 rows: end to end 1.0 s = 1,000 rows/s.
    _run_file(a, "pandas-dataframe-parquet-http", [1.0, 1.1, 0.9], [0.5, 0.6, 0.4])
    _run_file(b, "pandas-dataframe-parquet-http", [0.5, 0.55, 0.45], [0.5, 0.45, 0.55])
    _run_file(a, "pandas-threads-parquet-http-w2", [1.0, 1.1, 0.9], [0.5, 0.5, 0.5])
    _run_file(b, "pandas-threads-parquet-http-w2", [2.0, 2.2, 1.9], [1.0, 1.0, 1.0])
    _run_file(a, "polars-dataframe-csv-tcp", [1.0, 1.2, 0.8], [0.5, 0.5, 0.5])
    _run_file(b, "polars-dataframe-csv-tcp", [1.1, 0.95, 1.3], [0.5, 0.5, 0.5])
    _run_file(a, "pandas-rows-parquet-http", [10.0], [9.0], rows=100)
    _run_file(b, "pandas-iterrows-parquet-http", [30.0], [29.0], rows=100)
    return a, b


VARIANTS_OF_A = (
    "pandas-dataframe-parquet-http",
    "pandas-threads-parquet-http-w2",
    "polars-dataframe-csv-tcp",
    "pandas-rows-parquet-http",
)
KEYS = ("ds", "v", "a", "b", "ratio", "verdict", "sa", "sb", "sratio", "sverdict")


def _by_variant(report):
    return {c.variant: dict(zip(KEYS, c.columns, strict=True)) for c in report.both}


def test_verdicts_respect_the_spread_of_the_repeats(folders):
    report = compare(*folders)
    rows = _by_variant(report)
    faster = rows["pandas-dataframe-parquet-http"]
    assert (faster["a"], faster["b"], faster["ratio"], faster["verdict"]) == (
        "1,000", "2,000", "2.00", "faster")  # fmt: skip
    assert faster["sverdict"] == "within noise"  # send ranges 1667–2500 and 1818–2222 overlap
    assert rows["pandas-threads-parquet-http-w2"]["verdict"] == "slower"
    assert rows["pandas-threads-parquet-http-w2"]["sverdict"] == "slower"
    assert rows["polars-dataframe-csv-tcp"]["verdict"] == "within noise"
    assert report.only_a == [(DATASET, "pandas-rows-parquet-http")]
    assert report.only_b == [(DATASET, "pandas-iterrows-parquet-http")]


def test_verdict_edges():
    assert verdict((1.0, 2.0), (2.0, 3.0)) == "within noise"  # touching ranges overlap
    assert verdict((1.0,), (1.5,)) == "faster"
    assert verdict((), (1.0,)) == "n/a"


def test_the_markdown_and_the_terminal_table(folders, tmp_path):
    a, b = folders
    report = write_compare(a, b)
    md = (b / "compare.md").read_text()
    assert f"| {DATASET} | pandas-dataframe-parquet-http | 1,000 | 2,000 | 2.00 | faster |" in md
    assert "Only in A: `cpu-s10-e10-seed1/pandas-rows-parquet-http`." in md
    assert "Only in B: `cpu-s10-e10-seed1/pandas-iterrows-parquet-http`." in md
    text = report.terminal()
    assert "within noise" in text and "Only in B: cpu-s10-e10-seed1/pandas-iterrows" in text


def test_the_cli_prints_and_writes_where_asked(folders, tmp_path, capsys):
    out = tmp_path / "elsewhere" / "cmp.md"
    assert main(["compare", str(folders[0]), str(folders[1]), "--out", str(out)]) == 0
    assert "faster" in capsys.readouterr().out
    assert out.read_text().startswith("# Comparison of two runs")
    assert not (folders[1] / "compare.md").exists()


def test_a_folder_that_is_not_a_results_folder_is_one_sentence(folders, tmp_path, capsys):
    empty = tmp_path / "not-results"
    empty.mkdir()
    (empty / "notes.txt").write_text("hello")
    with pytest.raises(CompareError, match=r"not a results folder .*; pass a folder"):
        compare(folders[0], empty)
    assert main(["compare", str(empty), str(folders[1])]) == EXIT_USER_ERROR
    err = capsys.readouterr().err.strip()
    assert err.startswith("ERROR: ") and "not a results folder" in err and "\n" not in err


def test_a_broken_run_file_is_one_sentence(folders):
    a, b = folders
    (a / "runs" / DATASET / "pandas-dataframe-parquet-http.json").write_text("{not json")
    with pytest.raises(CompareError, match="run file .* is not valid JSON .*; delete it and rerun"):
        compare(a, b)


def _slowed(src: Path, dst: Path, factor: float) -> Path:
    """A copy of a results folder whose every timing is `factor` times longer."""
    for path in src.glob("runs/*/*.json"):
        doc = json.loads(path.read_text())
        for r in doc["repeats"]:
            r["end_to_end"] *= factor
            r["phases"] = {k: v * factor for k, v in r["phases"].items()}
        out = dst / path.relative_to(src)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc))
    return dst


def test_the_gate_passes_a_run_compared_with_itself(folders, capsys):
    a, _ = folders
    assert main(["compare", str(a), str(a), "--out", str(a / "c.md"), "--fail-above", "10"]) == 0
    assert "no variant is slower" in capsys.readouterr().out


def test_the_gate_fails_a_run_made_slower_and_names_the_variants(folders, tmp_path, capsys):
    a, _ = folders
    slow = _slowed(a, tmp_path / "slow", 1.5)
    assert main(["compare", str(a), str(slow), "--fail-above", "10"]) == 1
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("slower than A beyond the noise and by more than 10 %: ")
    named = last.split(": ", 1)[1].split(", ")
    assert sorted(named) == sorted(f"{DATASET}/{v} (0.67x)" for v in VARIANTS_OF_A)
    assert main(["compare", str(a), str(slow), "--fail-above", "40"]) == 0  # 33 % slower


def test_the_gate_names_only_variants_slower_beyond_the_noise(folders, tmp_path):
    a, _ = folders
    slow = _slowed(a, tmp_path / "slow", 1.15)
    # 15 % slower is within the spread of three repeats (about 0.9-1.1 s against 1.0-1.3 s); the
    # one-repeat loop has no spread, so it is beyond the noise, and 13 % below A
    assert [c.variant for c in compare(a, slow).regressions(10)] == ["pandas-rows-parquet-http"]
    assert compare(a, slow).regressions(15) == []


def test_runs_of_different_datasets_are_refused_in_one_sentence(folders, tmp_path):
    a, _ = folders
    other = tmp_path / "other" / "runs" / "cpu-s99-e9-seed9"
    other.mkdir(parents=True)
    (a / "runs" / DATASET / "pandas-dataframe-parquet-http.json").rename(other / "x.json")
    sentence = (
        r"share no dataset \(cpu-s10-e10-seed1 against cpu-s99-e9-seed9\): compare runs of the "
        r"same dataset\.$"
    )
    with pytest.raises(CompareError, match=sentence):
        compare(a, tmp_path / "other")


def test_a_folder_with_only_its_summary_is_compared_by_its_rates(tmp_path, capsys):
    """The committed reference run keeps summary.csv, not run files; the gate still works."""
    import pandas as pd

    from tests.helpers import REFERENCE

    a, slow = tmp_path / "a", tmp_path / "slow"
    a.mkdir(), slow.mkdir()
    df = pd.read_csv(REFERENCE / "summary.csv")
    df.to_csv(a / "summary.csv", index=False)
    # Slower beyond the noise: B's fastest repeat below A's slowest.
    beyond = df[df["rows_per_s_max"] / 1.5 < df["rows_per_s_min"]]
    assert len(beyond) >= len(df) - 2
    rates = [c for c in df.columns if c.startswith(("rows_per_s_", "send_rows_per_s_"))]
    df[rates] = df[rates] / 1.5
    df.to_csv(slow / "summary.csv", index=False)
    assert main(["compare", str(a), str(a), "--fail-above", "10"]) == 0
    assert main(["compare", str(a), str(slow), "--fail-above", "10"]) == 1
    named = capsys.readouterr().out.strip().splitlines()[-1].split(": ", 1)[1].split(", ")
    expected = (f"{d}/{v} (0.67x)" for d, v in zip(beyond.dataset, beyond.variant, strict=True))
    assert sorted(named) == sorted(expected)


def test_a_folder_without_runs_or_summary_is_named(tmp_path):
    with pytest.raises(
        CompareError, match=r"neither runs/<server>/<dataset>/<variant>.json nor summary.csv"
    ):
        compare(tmp_path, tmp_path)


def test_runs_under_the_server_level_compare_with_runs_before_it(folders, tmp_path):
    """runs/<server>/<dataset>/: one server compares dataset by dataset with the older layout
    (its jobs' `.settings` records are not run files); several name the server."""
    a, b = folders
    moved = tmp_path / "moved"
    for path in b.glob("runs/*/*.json"):
        for server in ("9.3.4",):
            out = moved / "runs" / server / path.relative_to(b / "runs")
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(path.read_text())
    (moved / "runs" / "9.3.4" / DATASET / ".settings").mkdir()
    (moved / "runs" / "9.3.4" / DATASET / ".settings" / "x.json").write_text("{}")
    assert _by_variant(compare(a, moved)) == _by_variant(compare(a, b))
    old = moved / "runs" / "8.1.4" / DATASET
    old.mkdir(parents=True)
    (old / "polars-dataframe-csv-tcp.json").write_text(
        (b / "runs" / DATASET / "polars-dataframe-csv-tcp.json").read_text()
    )
    report = compare(moved, moved)
    assert {c.dataset for c in report.both} == {f"9.3.4/{DATASET}", f"8.1.4/{DATASET}"}
