"""The dtype matrix against a real QuestDB, checked by a real DuckDB: what each client path does
with each column dtype, and a check that fails when the table is not the frame."""

from __future__ import annotations

import pandas as pd
import pytest

from ingestbench.dtypes import check as check_module
from ingestbench.dtypes import senders
from ingestbench.dtypes.cases import CASES, ROWS, Case
from ingestbench.dtypes.check import CellMismatch, RowsDropped, check_cell
from ingestbench.dtypes.matrix import CHANGED, OUTCOMES, MatrixError, run_matrix

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def matrix(questdb, tmp_path_factory):
    cells = run_matrix(questdb, tmp_path_factory.mktemp("dtype-matrix"))
    return {(c.library, c.dtype, c.method, c.transport): c for c in cells}


def case(library: str, dtype: str) -> Case:
    return next(c for c in CASES if (c.library, c.dtype) == (library, dtype))


def test_every_cell_has_an_outcome_and_every_refusal_a_reason(matrix):
    # the ILP paths over http and tcp; three SQL paths over pg in each library
    assert len(matrix) == len(CASES) * (4 * 2 + 3) >= 30
    assert {c.outcome for c in matrix.values()} <= set(OUTCOMES)
    for cell in matrix.values():
        assert (cell.outcome == "validated") == (cell.reason == ""), cell


def test_dataframe_loads_every_dtype_but_arrow_dictionaries_and_dates(matrix):
    for (_, dtype, method, _), cell in matrix.items():
        if method not in ("dataframe", "threads"):
            continue
        if dtype == "ArrowDtype(dictionary)":
            assert cell.outcome == "unsupported"
            assert "Must be a strings column" in cell.reason, cell
        elif "date" in dtype.lower() and "datetime" not in dtype.lower():
            assert cell.outcome == "unsupported", cell
        else:
            assert cell.outcome == "validated", cell


def test_polars_integers_with_nulls_stay_integers(matrix):
    """Through plain to_pandas() they would become float64 and QuestDB a DOUBLE column."""
    for transport in ("http", "tcp"):
        for dtype in ("Int64 (with null)", "Int32 (with null)"):
            assert matrix["polars", dtype, "dataframe", transport].outcome == "validated"


def test_the_row_loop_findings(matrix):
    # The benchmark's row loop leaves a null cell out of row() and makes NumPy scalars Python
    # ones: pandas 3's str (NaN), Int64 (NA) and a NaT go in.
    for dtype in ("str (pandas 3 default)", "Int64 (with NA)", "string[pyarrow]"):
        for transport in ("http", "tcp"):
            assert matrix["pandas", dtype, "rows", transport].outcome == "validated", dtype
    # Python datetimes are microseconds, so nanoseconds are lost.
    for library, dtype in [("polars", "Datetime(ns)"), ("pandas", "datetime64[ns]")]:
        lossy = matrix[library, dtype, "rows", "http"]
        assert lossy.outcome == "unsupported" and lossy.reason.startswith(CHANGED)
        assert "TIMESTAMP (expected TIMESTAMP_NS)" in lossy.reason
    # row() takes no date.
    assert "Unsupported type: datetime.date" in matrix["polars", "Date", "rows", "tcp"].reason


def test_the_vectorized_encoder_loads_every_dtype_dataframe_loads_and_more(matrix):
    """Wherever dataframe() is validated, so is vectorized; and it also carries what the
    client refuses: Arrow dictionaries, and dates (as times at midnight UTC)."""
    for (library, dtype, method, transport), cell in matrix.items():
        if method == "dataframe" and cell.outcome == "validated":
            vectorized = matrix[library, dtype, "vectorized", transport]
            assert vectorized.outcome == "validated", vectorized
    for library, dtype in [("pandas", "ArrowDtype(dictionary)"), ("pandas", "date (object)"),
                           ("polars", "Date"), ("pandas", "ArrowDtype(date32)")]:  # fmt: skip
        for transport in ("http", "tcp"):
            vectorized = matrix[library, dtype, "vectorized", transport]
            assert vectorized.outcome == "validated", vectorized


def test_the_check_fails_when_a_value_differs(questdb, tmp_path):
    sent = case("pandas", "Int64 (with NA)")
    frame = sent.frame()
    frame.loc[3, "value"] = 12345
    senders.send(questdb, "dataframe", "http", "dtypes_check_value", frame, symbol=False)
    differ = r"1 of 8 rows differ: seq 3: sent 4611686018427387904, stored 12345"
    with pytest.raises(CellMismatch, match=differ):
        check_cell(questdb, "dtypes_check_value", sent, tmp_path / "export.parquet")


def test_the_check_fails_when_the_type_differs(questdb, tmp_path):
    sent = case("pandas", "Int64 (with NA)")
    frame = sent.frame().astype({"value": "float64"})
    senders.send(questdb, "dataframe", "http", "dtypes_check_type", frame, symbol=False)
    with pytest.raises(CellMismatch, match=r"value DOUBLE \(expected LONG\)"):
        check_cell(questdb, "dtypes_check_type", sent, tmp_path / "export.parquet")


def test_the_check_names_missing_rows(questdb, tmp_path, monkeypatch):
    monkeypatch.setattr(check_module, "STALL_S", 3.0)  # the count stands still: give up soon
    sent = case("pandas", "float64 (with NaN)")
    senders.send(
        questdb, "dataframe", "http", "dtypes_check_rows", sent.frame().head(5), symbol=False
    )
    with pytest.raises(RowsDropped, match=f"3 of {ROWS} rows never arrived"):
        check_cell(questdb, "dtypes_check_rows", sent, tmp_path / "export.parquet")


def test_an_unknown_method_is_one_sentence(questdb, tmp_path):
    with pytest.raises(MatrixError, match="no method or transport 'iterrows'"):
        run_matrix(questdb, tmp_path, methods=["iterrows"])


def test_nulls_and_edge_values_are_in_the_frames():
    frame = case("pandas", "object (str)").frame()
    assert frame["value"].isna().sum() == 1
    assert list(frame.columns) == ["seq", "value", "ts"]
    assert isinstance(frame["ts"].dtype, pd.DatetimeTZDtype)
    polars_ns = case("polars", "Datetime(ns)").frame()["value"]
    assert (
        polars_ns.null_count() == 1
        and str(polars_ns.dtype) == "Datetime(time_unit='ns', time_zone=None)"
    )


def test_the_check_names_rows_sent_twice(questdb, tmp_path):
    sent = case("pandas", "float64 (with NaN)")
    for _ in range(2):
        senders.send(questdb, "dataframe", "http", "dtypes_check_twice", sent.frame(), symbol=False)
    with pytest.raises(CellMismatch, match=f"the table holds {2 * ROWS} rows for the {ROWS} sent"):
        check_cell(questdb, "dtypes_check_twice", sent, tmp_path / "export.parquet")


def test_the_pgwire_findings(matrix):
    sql = {k: c for k, c in matrix.items() if k[3] == "pg"}
    assert {k[2] for k in sql} == {"to_sql", "write_database", "executemany", "asyncpg"}
    # Plain numbers, strings and symbols with nulls arrive intact through every driver.
    for library, dtype in [("pandas", "float64 (with NaN)"), ("pandas", "Int64 (with NA)"),
                           ("polars", "String"), ("polars", "Categorical")]:  # fmt: skip
        cells = [c for k, c in sql.items() if k[:2] == (library, dtype)]
        assert len(cells) == 3 and all(c.outcome == "validated" for c in cells), cells
    # SQLAlchemy casts a naive datetime as `TIMESTAMP WITHOUT TIME ZONE`, which QuestDB's
    # parser refuses: to_sql and write_database cannot send a zoneless time column.
    for library, dtype, method in [("pandas", "datetime64[us]", "to_sql"),
                                   ("polars", "Datetime(us)", "write_database")]:  # fmt: skip
        cell = sql[library, dtype, method, "pg"]
        assert cell.outcome == "unsupported" and "TIMESTAMP WITHOUT TI" in cell.reason
    # Python's datetime holds microseconds: nanoseconds are cut on every driver, silently.
    for method in ("executemany", "asyncpg"):
        cell = sql["polars", "Datetime(ns)", method, "pg"]
        assert cell.outcome == "unsupported" and cell.reason.startswith(CHANGED)
    # psycopg binds -2**31 as an int4, which QuestDB reads as its INT null; asyncpg binds the
    # column's own type (the prepared statement's) and keeps it.
    assert sql["polars", "Int32 (with null)", "executemany", "pg"].reason.startswith(CHANGED)
    assert sql["polars", "Int32 (with null)", "asyncpg", "pg"].outcome == "validated"
    # A zoned time keeps its instant through asyncpg, which binds it as UTC without the zone.
    assert sql["polars", "Datetime(us, Asia/Tokyo)", "asyncpg", "pg"].outcome == "validated"
    # pandas' str and category columns hold a missing value as NaN: bound as NULL, not a float.
    for dtype in ("str (pandas 3 default)", "category"):
        for method in ("to_sql", "executemany", "asyncpg"):
            assert sql["pandas", dtype, method, "pg"].outcome == "validated", (dtype, method)
