"""summary.md's servers side by side (results.summary.servers) and the per-server baselines."""

from __future__ import annotations

import pandas as pd

from ingestbench.results.summary.rows import _speedups, to_sql_speedups
from ingestbench.results.summary.servers import (
    agreement,
    comparison,
    held_verdict,
    side_by_side,
    verdict,
)

DS = "cpu-s10-e10-seed1"
PARQUET = "pandas-dataframe-parquet-http"
VECTOR = "pandas-vectorized-parquet-tcp-w2"


def _row(server, variant, median, low, high, status="measured"):
    return {"server": server, "dataset": DS, "variant": variant, "status": status,
            "rows_per_s_median": median, "rows_per_s_min": low, "rows_per_s_max": high}  # fmt: skip


def test_one_server_has_no_side_by_side():
    assert side_by_side(pd.DataFrame([_row("9.3.4", PARQUET, 100, 90, 110)])) is None


def test_versions_and_settings_as_ratios_against_the_newest_default_with_the_spread():
    df = pd.DataFrame([
        _row("9.3.4", PARQUET, 100, 95, 105),
        _row("9.3.4", VECTOR, 200, 190, 210),
        _row("8.1.4", PARQUET, 80, 70, 90),
        _row("8.1.4", VECTOR, None, None, None, status="unsupported"),
        # beats the default beyond the noise on PARQUET (120 > 105); within it on VECTOR
        _row("9.3.4-uncommitted100k", PARQUET, 125, 120, 130),
        _row("9.3.4-uncommitted100k", VECTOR, 215, 200, 230),
        _row("9.3.4-pool1", PARQUET, 101, 96, 106),
    ])  # fmt: skip
    text = side_by_side(df)
    assert "against `9.3.4` (the newest version's defaults)" in text
    versions = text[text.index("Versions × paths:") : text.index("Settings × paths:")]
    assert "| path | `8.1.4` | `9.3.4` |" in versions
    assert f"| `{PARQUET}` | 0.80× (0.70–0.90) | 1.00× (0.95–1.05) |" in versions
    assert f"| `{VECTOR}` | unsupported | 1.00× (0.95–1.05) |" in versions
    settings = text[text.index("Settings × paths:") :]
    assert "| path | `9.3.4` | `9.3.4-pool1` | `9.3.4-uncommitted100k` |" in settings
    assert f"| `{VECTOR}` | 1.00× (0.95–1.05) | – | 1.07× (1.00–1.15) |" in settings
    # named only where it beat the default beyond the noise: PARQUET, not VECTOR; pool1 never
    assert (f"`9.3.4-uncommitted100k` beat 9.3.4's defaults beyond the noise on `{PARQUET}` "
            "(1.25×).") in text  # fmt: skip
    assert "pool1` beat" not in text


def test_the_comparison_as_data_holds_the_tables_ratios():
    df = pd.DataFrame([_row("9.3.4", PARQUET, 100, 95, 105), _row("8.1.4", PARQUET, 80, 70, 90),
                       _row("8.1.4", VECTOR, None, None, None, status="unsupported"),
                       _row("9.3.4-pool1", PARQUET, 125, 120, 130)])  # fmt: skip
    data = comparison(df)
    assert (data["baseline"], data["versions"], data["settings"]) == (
        "9.3.4",
        ["8.1.4", "9.3.4"],
        ["9.3.4-pool1"],
    )
    (ds,) = data["datasets"]
    cells = {(c["variant"], c["server"]): c for c in ds["cells"]}
    assert cells[PARQUET, "8.1.4"] == {"variant": PARQUET, "server": "8.1.4", "status": "ok",
                                       "ratio": 0.8, "low": 0.7, "high": 0.9}  # fmt: skip
    assert cells[VECTOR, "8.1.4"]["status"] == "unsupported"
    assert cells[VECTOR, "9.3.4"]["status"] == "missing"
    assert "`9.3.4-pool1` beat 9.3.4's defaults" in ds["recommendation"]
    older = next(m for m in ds["medians"] if m["server"] == "8.1.4")
    assert older == {
        "server": "8.1.4",
        "paths": 1,
        "ratio": 0.8,
        "unsupported": [VECTOR],
        "beyond_noise": [{"variant": PARQUET, "ratio": 0.8}],
    }  # 0.70–0.90 < 0.95
    text = verdict(data, ds)
    assert (
        f"8.1.4 0.80× (1 path; `{VECTOR}` unsupported; beyond the noise: `{PARQUET}` 0.80×)" in text
    )
    assert f"9.3.4-pool1 1.25× (1 path; beyond the noise: `{PARQUET}` 1.25×)" in text
    assert comparison(pd.DataFrame([_row("9.3.4", PARQUET, 100, 90, 110)])) is None


def test_nothing_beyond_the_noise_names_no_setting():
    df = pd.DataFrame([_row("9.3.4", PARQUET, 100, 90, 110),
                       _row("9.3.4-pool1", PARQUET, 108, 100, 115)])  # fmt: skip
    text = side_by_side(df)
    assert "Versions × paths" not in text  # one version
    assert "No settings set beat its version's defaults beyond the noise" in text


def test_speedups_are_against_the_baseline_of_the_same_server():
    common = {"dataset": DS, "library": "pandas", "format": "parquet", "transport": "http"}
    runs = [("8.1.4", "rows", 10), ("9.3.4", "rows", 20), ("8.1.4", "dataframe", 100),
            ("9.3.4", "dataframe", 100), ("9.3.4", "to_sql", 50)]  # fmt: skip
    df = pd.DataFrame([{**common, "server": s, "method": m, "variant": m, "rows_per_s_median": r}
                       for s, m, r in runs])  # fmt: skip
    speedups = _speedups(df, "rows")[0]
    assert speedups[2:4] == [10.0, 5.0]
    over_to_sql = to_sql_speedups(df)
    assert pd.isna(over_to_sql[2]) and over_to_sql[3] == 2.0


def test_the_dataset_tables_name_the_server_of_each_row_when_there_are_several():
    from ingestbench.results.summary import summarize
    from ingestbench.results.summary.markdown import to_markdown
    from tests.helpers import FIXTURE_RESULTS

    df = summarize(sorted((FIXTURE_RESULTS / "runs").rglob("*.json")))
    assert " on `" not in to_markdown(df)
    df.loc[df.index[0], "server"] = "8.1.4"
    df.loc[df.index[1:], "server"] = "9.3.4"
    assert f"`{df['variant'].iloc[0]}` on `8.1.4`" in to_markdown(df)


def test_two_runs_agree_only_where_a_cell_is_apart_the_same_way_in_both():
    first = pd.DataFrame([_row("9.3.4", PARQUET, 100, 95, 105), _row("8.1.4", PARQUET, 80, 70, 90),
                          _row("9.3.4", VECTOR, 200, 190, 210),
                          _row("8.1.4", VECTOR, 250, 240, 260)])  # fmt: skip
    # the second run: PARQUET below again (held); VECTOR now within the noise (did not hold)
    second = pd.DataFrame([_row("9.3.4", PARQUET, 100, 98, 102), _row("8.1.4", PARQUET, 70, 65, 75),
                           _row("9.3.4", VECTOR, 200, 150, 250),
                           _row("8.1.4", VECTOR, 210, 200, 220)])  # fmt: skip
    runs = [comparison(first), comparison(second)]
    rows = {r["variant"]: r for r in agreement(runs)}
    assert rows[PARQUET]["held"] and rows[PARQUET]["apart"] == ["below", "below"]
    assert rows[PARQUET]["ratios"] == [0.8, 0.7]
    assert not rows[VECTOR]["held"] and rows[VECTOR]["apart"] == ["above", None]
    assert held_verdict(runs) == (
        "In 2 runs against QuestDB 9.3.4's defaults, beyond the noise in every run: 8.1.4 "
        f"`{PARQUET}` 0.80× / 0.70×; 1 other cell was beyond it in some runs only."
    )


def test_a_setting_is_recommended_only_where_it_beat_the_defaults_in_every_run():
    def run(pool1_low):
        rows = [
            _row("9.3.4", PARQUET, 100, 95, 105),
            _row("9.3.4-pool1", PARQUET, 125, pool1_low, 130),
        ]
        return comparison(pd.DataFrame(rows))

    assert held_verdict([run(120), run(110)]).endswith(
        f"Beat the defaults in every run: `9.3.4-pool1` on `{PARQUET}`."
    )
    flipped = held_verdict([run(120), run(100)])  # within the noise in the second run
    assert "beyond the noise in every run: nothing; 1 other cell was" in flipped
    assert flipped.endswith("No settings set beat the defaults in every run: keep the defaults.")
