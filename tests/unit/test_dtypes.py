"""The dtype matrix's table and files, and the polars conversion it found wanting."""

from __future__ import annotations

import polars as pl

from ingestbench.columnar.arrow import to_pandas
from ingestbench.dtypes.cases import CASES, KINDS, ROWS
from ingestbench.dtypes.matrix import CHANGED, OUTCOMES, Cell, markdown, read_csv, write_csv


def cell(dtype: str, method: str, outcome: str, reason: str = "") -> Cell:
    return Cell("pandas", dtype, method, "http", outcome, "LONG", ROWS, reason)


CELLS = [
    cell("Int64", "dataframe", "validated"),
    cell("Int64", "rows", "unsupported", "TypeError: numpy.int64"),
    cell("bool", "dataframe", "unsupported", f"{CHANGED}: column types differ"),
    cell("bool", "rows", "unsupported", "TypeError: numpy.int64"),
]


def test_the_table_numbers_each_reason_once_and_counts_outcomes():
    text = markdown(CELLS)
    assert "| pandas | `Int64` | LONG | ✓ | ✗ [1] |" in text
    assert "| pandas | `bool` | LONG | ✗ [2] | ✗ [1] |" in text
    assert (
        "4 cells: 1 validated" in text
        and f"3 unsupported (✗, the reason in its note; 1 of them {CHANGED})." in text
    )
    assert {c.outcome for c in CELLS} <= set(OUTCOMES) == {"validated", "unsupported"}
    assert text.count("TypeError: numpy.int64") == 1


def test_the_csv_reads_back(tmp_path):
    write_csv(CELLS, tmp_path / "m.csv")
    assert read_csv(tmp_path / "m.csv") == CELLS


def test_every_case_is_well_formed():
    assert len({c.name for c in CASES}) == len(CASES)
    for case in CASES:
        assert case.kind in KINDS and len(case.values) == ROWS
        assert len(case.frame()) == ROWS


def test_polars_integers_with_nulls_become_nullable_pandas_integers():
    frame = pl.DataFrame(
        {
            "a": pl.Series([1, None, 2**62], dtype=pl.Int64),
            "b": pl.Series([1, None, 3], dtype=pl.UInt16),
            "c": [1, 2, 3],
            "d": pl.Series(["x", "y", "x"], dtype=pl.Categorical),
        }
    )
    pdf = to_pandas(frame)
    assert [str(t) for t in pdf.dtypes] == ["Int64", "UInt16", "int64", "category"]
    assert pdf["a"].tolist()[2] == 2**62 and pdf["a"].isna().tolist() == [False, True, False]


def test_the_heatmap_is_drawn(tmp_path):
    from ingestbench.dtypes.chart import draw_heatmap

    draw_heatmap(CELLS, tmp_path / "m.png", "Measured with QuestDB 9.3.4.")
    assert (tmp_path / "m.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
