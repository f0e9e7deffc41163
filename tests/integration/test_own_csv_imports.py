"""The server's own CSV imports (`/imp` and `COPY`) on the CSVs pandas, polars, pyarrow and DuckDB
write with their defaults, naive and zoned, each load validated row for row against the file by
DuckDB; what no QuestDB pattern reads said unsupported with the reason; a rejected import naming
its count and quoting its first row; and the table's partitions as the dataset says."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

from ingestbench.ingest.job import IngestFiles, ingest_job
from ingestbench.ingest.methods import SendError
from ingestbench.storage.files import load_json
from ingestbench.variants import parse_variant_name
from tests.integration.test_own_ingest import _dataset, _load_and_validate, _settings

N = 300
METHODS = ("none-server_csv-csv-http", "none-server_copy-csv-http")


def _frame(zone: str | None, fraction: str) -> pd.DataFrame:
    """Rows 37 minutes apart over about a week; `fraction`: "us" (every row has microseconds),
    "none" (whole seconds), "mixed" (DuckDB then writes 0, 1 and 6 digits)."""
    ts = pd.date_range("2024-03-01", periods=N, freq="37min", tz=zone)
    if fraction == "us":
        ts = ts + pd.to_timedelta(np.arange(N) % 997 + 1, unit="us")
    elif fraction == "mixed":
        ts = ts + pd.to_timedelta(np.array([0, 500_000, 123_457])[np.arange(N) % 3], unit="us")
    return pd.DataFrame({"ts": ts, "sym": [f"s{i % 5}" for i in range(N)],
                         "qty": np.arange(N), "price": np.arange(N) / 8})  # fmt: skip


def _write(writer: str, frame: pd.DataFrame, path: Path) -> None:
    """The writer's defaults, nothing else."""
    if writer == "pandas":
        frame.to_csv(path, index=False)
    elif writer == "polars":
        pl.from_pandas(frame).write_csv(path)
    elif writer == "pyarrow":
        pacsv.write_csv(pa.Table.from_pandas(frame, preserve_index=False), path)
    else:
        con = duckdb.connect()
        con.register("frame", pa.Table.from_pandas(frame, preserve_index=False))
        con.execute(f"COPY frame TO '{path}'")
        con.close()


#: (writer, zone, fraction) -> how the file writes its first time: each shape the writers make.
CASES = {
    ("pandas", None, "us"): "2024-03-01 00:00:00.000001",
    ("pandas", "UTC", "us"): "2024-03-01 00:00:00.000001+00:00",
    ("pandas", None, "none"): "2024-03-01 00:00:00",
    ("polars", None, "us"): "2024-03-01T00:00:00.000001",
    ("polars", "UTC", "us"): "2024-03-01T00:00:00.000001+0000",
    ("pyarrow", None, "us"): "2024-03-01 00:00:00.000001",
    ("pyarrow", "UTC", "us"): "2024-03-01 00:00:00.000001Z",
    ("duckdb", None, "none"): "2024-03-01 00:00:00",
    ("duckdb", "UTC", "none"): "2024-03-01 00:00:00+00",
    ("duckdb", "UTC", "us"): "2024-03-01 00:00:00.000001+00",  # 1 to 6 digits, always some
    ("pandas", "Europe/Paris", "us"): "2024-03-01 00:00:00.000001+01:00",
}


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(("writer", "zone", "fraction"), list(CASES))
def test_each_writers_default_csv_loads(questdb, tmp_path, writer, zone, fraction, method):
    path = tmp_path / f"{writer}.csv"
    _write(writer, _frame(zone, fraction), path)
    assert path.read_text().splitlines()[1].startswith(CASES[(writer, zone, fraction)])
    label = re.sub(
        r"\W", "_", f"imp_{writer}_{zone}_{fraction}_{method.split('-')[1]}"
    ).lower()  # labels are lower case
    data = _dataset(tmp_path, label, path, symbols=["sym"])
    result = _load_and_validate(questdb, data, method, tmp_path)
    assert result["passed"], [c for c in result["checks"] if not c["passed"]][:3]
    assert result["differing_rows"] == {"missing": 0, "unexpected": 0}


def _unsupported(data: dict, method: str, tmp_path: Path) -> str:
    work = tmp_path / method
    files = IngestFiles(data["path"], data["manifest"], work / "run.json", work / "actual.json",
                        work / "export")  # fmt: skip
    record = ingest_job(_settings(), parse_variant_name(method), files)
    assert record.repeats == []
    return record.extra["unsupported"]


@pytest.mark.parametrize("method", METHODS)
def test_a_column_with_and_without_fractions_is_unsupported(tmp_path, method):
    """DuckDB drops a zero fraction: `.N+` reads any length of fraction, but not none."""
    path = tmp_path / "mixed.csv"
    _write("duckdb", _frame(None, "mixed"), path)
    assert {line[19:20] for line in path.read_text().splitlines()[1:4]} == {",", "."}
    data = _dataset(tmp_path, "mixed", path, symbols=["sym"])
    reason = _unsupported(data, method, tmp_path)
    assert reason == (
        "column 'ts' has times with a fraction and times without one ('2024-03-01 00:00:00', "
        "'2024-03-01 00:37:00.5'), and QuestDB's pattern reads a fraction of any length (.N+) "
        "but not an optional one"
    )


def test_a_second_time_column_through_imp_and_copy(questdb, tmp_path):
    """`/imp` reads every time column with its own pattern; COPY takes a FORMAT for the
    designated timestamp only, so it is unsupported with a second time column."""
    frame = _frame("UTC", "us")
    frame["seen"] = frame.ts.dt.tz_localize(None) + pd.Timedelta("1h")  # a naive second time
    path = tmp_path / "two.csv"
    _write("polars", frame, path)
    data = _dataset(tmp_path, "two_times", path, symbols=["sym"], timestamp="ts")
    times = load_json(data["manifest"], "manifest")["table"]["source"]["times"]
    assert {c: t["pattern"] for c, t in times.items()} == {
        "ts": "yyyy-MM-ddTHH:mm:ss.N+Z", "seen": "yyyy-MM-ddTHH:mm:ss.N+"}  # fmt: skip
    result = _load_and_validate(questdb, data, METHODS[0], tmp_path)
    assert result["passed"], [c for c in result["checks"] if not c["passed"]][:3]
    assert "COPY takes a FORMAT for the designated timestamp only" in _unsupported(
        data, METHODS[1], tmp_path
    )


@pytest.mark.parametrize("method", METHODS)
def test_a_rejected_import_counts_its_rows_and_quotes_the_first(
    questdb, tmp_path, monkeypatch, method
):
    """Rows past the checked start that the pattern does not read: the import rejects them, and
    the sentence says how many and quotes the first."""
    from ingestbench.own import csv_times

    monkeypatch.setattr(csv_times, "CHECK_BYTES", 2048)  # the check sees the first rows only
    path = tmp_path / "late.csv"
    _write("pyarrow", _frame("UTC", "us"), path)
    lines = path.read_text().splitlines()
    for i in (200, 250, 251):  # a time without its fraction, as another writer would write it
        lines[i] = re.sub(r"\.\d+Z", "Z", lines[i], count=1)
    path.write_text("\n".join(lines) + "\n")
    data = _dataset(tmp_path, f"late_{method.split('-')[1]}", path, symbols=["sym"])
    with pytest.raises(SendError) as caught:
        _load_and_validate(questdb, data, method, tmp_path)
    message = str(caught.value)
    what = "CSV import" if "server_csv" in method else "COPY"
    assert f"QuestDB's {what} rejected 3 of the 300 rows of late.csv (297 imported)" in message
    row = lines[200].replace('"', "")  # its values, as DuckDB reads them
    assert f"the first it could not read is row 200 (column 'ts'): {row!r}" in message
    assert "?" not in message and "None" not in message, message


def test_partition_by_is_the_tables_on_every_path(questdb, tmp_path):
    """The dataset's unit is the table's: the one every variant lands in, and the one each
    server import makes when it creates the table itself."""
    from ingestbench.ingest.methods import Job, TablePart
    from ingestbench.ingest.methods.server_side import ServerCopy, ServerCsv
    from ingestbench.own.manifest import spec_of
    from ingestbench.server.uploads import placed_in

    path = tmp_path / "week.csv"
    _write("pyarrow", _frame("UTC", "us"), path)
    data = _dataset(tmp_path, "by_week", path, symbols=["sym"], partition_by="WEEK")
    manifest = load_json(data["manifest"], "manifest")
    assert manifest["partition"]["by"] == "WEEK"
    assert manifest["partition"]["rule"] == "datasets[].partition_by"
    unit = "SELECT partitionBy FROM tables() WHERE table_name = 'by_week'"
    for method in (*METHODS, "pandas-dataframe-csv-http"):
        result = _load_and_validate(questdb, data, method, tmp_path)
        assert result["passed"], [c for c in result["checks"] if not c["passed"]][:3]
        assert questdb.scalar(unit) == "WEEK", method
        run = load_json(tmp_path / method / "run.json", "run file")  # what measured it says so
        assert run["dataset"]["partition"] == manifest["partition"]
    part = TablePart(spec_of(manifest), path, N)
    for method in METHODS:  # no table yet: the import creates it
        questdb.sql("DROP TABLE IF EXISTS by_week")
        job = Job(questdb, parse_variant_name(method), path, (part,))
        if "server_csv" in method:
            ServerCsv()._import(job, part)
        else:
            with placed_in(Path(questdb.copy_root), path) as placed:
                ServerCopy._copy(job, part, placed.name)
        questdb.sql("SELECT wait_wal_table('by_week')")
        assert (questdb.scalar(unit), questdb.scalar("SELECT count() FROM by_week")) == ("WEEK", N)


def test_the_default_partition_follows_the_rows_per_day(tmp_path):
    """300 rows over 7.68 days are 39 a day, and a month would hold 1,190 of them: YEAR, and the
    manifest says by which rule."""
    path = tmp_path / "few.csv"
    _write("pyarrow", _frame("UTC", "us"), path)
    manifest = load_json(_dataset(tmp_path, "few", path)["manifest"], "manifest")
    partition = manifest["partition"]
    assert partition["by"] == manifest["table"]["partition_by"] == "YEAR"
    assert partition["span_days"] == pytest.approx((N - 1) * 37 / 1440, abs=1e-3)
    assert partition["rule"].endswith("; here 39 rows a day over 7.68 days")
