"""Own data into a real QuestDB: each type family through both libraries and the server's own
import, a hive-partitioned directory, a CSV with its own null marker, every load checked row for
row by DuckDB against the user's file; and a method that cannot load a table said unsupported."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ingestbench.config import Settings, validate_config
from ingestbench.ingest.job import IngestFiles, _measure, ingest_job
from ingestbench.own.dataset import OwnDataset
from ingestbench.own.manifest import write_own_manifest
from ingestbench.storage.files import load_json
from ingestbench.validate import validate_files
from ingestbench.validate.aggregates import write_expected
from ingestbench.variants import parse_variant_name

N = 600
TS = pa.array(np.arange(N) // 4 * 1_000_000 + 1_700_000_000_000_000, pa.timestamp("us", tz="UTC"))
MASK = np.arange(N) % 5 == 1  # a null in every fifth row


def _ints(type_: pa.DataType, low: int, high: int) -> pa.Array:
    """Nulls in every fifth row, shifted per type (a row with every value null is no ILP line)."""
    values = np.linspace(low, high, N).astype(np.int64)
    return pa.array(values, type_, mask=np.roll(MASK, type_.bit_width // 8))


def _times(unit: str, tz: str | None) -> pa.Array:
    ns = 1_600_000_000_123_456_789 + np.arange(N, dtype=np.int64) * 3_601_000_000_007
    values = pa.array(ns, pa.timestamp("ns"), mask=MASK).cast(pa.timestamp(unit), safe=False)
    return values.cast(pa.timestamp(unit, tz=tz)) if tz else values


FAMILIES = {
    "integers": lambda: {
        "i8": _ints(pa.int8(), -128, 127), "i16": _ints(pa.int16(), -32768, 32767),
        "i32": _ints(pa.int32(), -(2**31) + 1, 2**31 - 1), "u8": _ints(pa.uint8(), 0, 255),
        "u16": _ints(pa.uint16(), 0, 65535), "u32": _ints(pa.uint32(), 0, 2**32 - 1),
        "i64": _ints(pa.int64(), -(2**62), 2**62),
    },
    "floats": lambda: {
        "f32": pa.array(np.linspace(-1e30, 1e30, N).astype(np.float32), mask=MASK),
        "f64": pa.array(np.where(np.arange(N) % 7 == 3, np.nan, np.linspace(-5e300, 5e300, N)),
                        mask=np.roll(MASK, 1)),
    },
    "strings": lambda: {
        "city": pa.array([None if m else c for m, c in
                          zip(MASK, ["Zürich", "a b", "x,y=z", "日本"] * (N // 4), strict=True)]
                         ).dictionary_encode(),
        "note": pa.array([None if m else f'q"{i}\\ é,=' for i, m in enumerate(MASK)]),
        "big": pa.array([f"row {i}" for i in range(N)], pa.large_string()),
        "n": pa.array(np.arange(N)),  # a number: a line is more than its symbols
    },
    "booleans": lambda: {"ok": pa.array(np.arange(N) % 3 == 0), "n": pa.array(np.arange(N))},
    "times": lambda: {
        "t_s": _times("s", None), "t_ms": _times("ms", "Asia/Tokyo"),
        "t_us": _times("us", None), "t_ns": _times("ns", "UTC"), "n": pa.array(np.arange(N)),
    },
    "decimals": lambda: {
        "amount": pa.array([None if m else decimal.Decimal(f"{i * 37 - 9000}.{i % 100:02d}")
                            for i, m in enumerate(MASK)], pa.decimal128(12, 2)),
        "n": pa.array(np.arange(N)),
    },
    "dates": lambda: {
        "day": pa.array([None if m else dt.date(1990, 1, 1) + dt.timedelta(days=i * 37)
                         for i, m in enumerate(MASK)], pa.date32()),
        "n": pa.array(np.arange(N)),
    },
}  # fmt: skip
METHODS = ("pandas-dataframe-parquet-http", "polars-dataframe-parquet-tcp",
           "none-server_parquet-parquet-http", "none-ilp_file-ilp-http-w1")  # fmt: skip


def _settings(**over) -> Settings:
    config = {"datasets": [{"label": "x", "path": "x.parquet"}],
              "variants": [{"method": "dataframe"}], "repeats": 1, "warmup_rows": 0,
              **over}  # fmt: skip
    return Settings.from_config(validate_config(config))


def _dataset(tmp_path: Path, label: str, path: Path, **entry) -> dict:
    """The dataset as the workflow makes it: manifest, ILP text, expected aggregates."""
    from ingestbench.own.ilp import write_ilp
    from ingestbench.own.manifest import spec_of
    from ingestbench.own.support import ilp_text_possible

    out = tmp_path / "data"
    dataset = OwnDataset.from_config({"label": label, "path": str(path), **entry})
    manifest_path = out / f"{dataset.name}.manifest.json"
    manifest = write_own_manifest(dataset, manifest_path)
    write_ilp(
        spec_of(manifest),
        manifest["rows"],
        out / f"{dataset.name}.ilp",
        lines_possible=ilp_text_possible(spec_of(manifest), manifest),
    )
    expected = out / f"{dataset.name}.expected.json"
    write_expected(path, expected, dataset.name, manifest=manifest)
    return {"name": dataset.name, "path": path, "manifest": manifest_path, "expected": expected,
            "ilp": out / f"{dataset.name}.ilp"}  # fmt: skip


def _load_and_validate(
    qdb, data: dict, variant_name: str, tmp_path: Path, settings: Settings | None = None
) -> dict:
    """One variant through the ingest job's measuring code on the session's server, then the
    validate rule's check; the validation document."""
    variant = parse_variant_name(variant_name)
    work = tmp_path / variant_name
    files = IngestFiles(data=data["ilp"] if variant.format == "ilp" else data["path"],
                        manifest=data["manifest"], run=work / "run.json",
                        actual=work / "actual.json", export=work / "export")  # fmt: skip
    manifest = load_json(data["manifest"], "manifest")
    doc = _measure(qdb, settings or _settings(), variant, files, manifest)
    (work / "run.json").write_text(json.dumps(doc))
    return _validate(data, work)


def _validate(data: dict, work: Path) -> dict:
    return validate_files(run=work / "run.json", actual=work / "actual.json",
                          export=work / "export", expected=data["expected"],
                          parquet=data["path"], output=work / "validation.json",
                          validation={"on_failure": "report"})  # fmt: skip


@pytest.mark.parametrize(
    ("method", "family"),
    # The ILP text is protocol 1, which carries no decimal (test_the_ilp_text_carries_no_decimal).
    [(m, f) for m in METHODS for f in FAMILIES if not (f == "decimals" and "ilp_file" in m)],
)
def test_each_type_family_lands_row_for_row(questdb, tmp_path, family, method):
    path = tmp_path / f"{family}.parquet"
    columns = FAMILIES[family]()
    if "server_parquet" in method:  # read_parquet() wraps uint32, zeroes small nulls (below)
        for name in ("u32", "i8", "i16", "u8", "u16"):
            columns.pop(name, None)
    pq.write_table(pa.table({"ts": TS, **columns}), path, row_group_size=250)
    label = f"{family}_{method.split('-')[1]}_{method.split('-')[3]}"
    data = _dataset(tmp_path, label, path, timestamp="ts")
    result = _load_and_validate(questdb, data, method, tmp_path)
    assert result["passed"], [c for c in result["checks"] if not c["passed"]][:3]
    assert result["differing_rows"] == {"missing": 0, "unexpected": 0}


def test_server_parquet_is_unsupported_where_it_wraps_uint32(tmp_path):
    path = tmp_path / "u.parquet"
    pq.write_table(pa.table({"ts": TS, "u32": _ints(pa.uint32(), 0, 2**32 - 1)}), path)
    data = _dataset(tmp_path, "wrapped", path)
    files = IngestFiles(path, data["manifest"], tmp_path / "run.json", tmp_path / "a.json",
                        tmp_path / "export")  # fmt: skip
    record = ingest_job(_settings(), parse_variant_name("none-server_parquet-parquet-http"), files)
    assert "uint32 column as a signed INT" in record.extra["unsupported"]
    pq.write_table(pa.table({"ts": TS, "i8": _ints(pa.int8(), 0, 9)}), path)
    data = _dataset(tmp_path, "zeroed", path)
    files = dataclasses.replace(files, manifest=data["manifest"])
    record = ingest_job(_settings(), parse_variant_name("none-server_parquet-parquet-http"), files)
    assert "its nulls would arrive as 0 (column 'i8')" in record.extra["unsupported"]


def test_a_changed_value_fails_the_validation(questdb, tmp_path):
    """The check can fail: a value changed in QuestDB after the load is a difference."""
    path = tmp_path / "ints.parquet"
    pq.write_table(pa.table({"ts": TS, **FAMILIES["integers"]()}), path)
    data = _dataset(tmp_path, "changed", path)
    variant = parse_variant_name("pandas-dataframe-parquet-http")
    manifest = load_json(data["manifest"], "manifest")
    files = IngestFiles(data["path"], data["manifest"], tmp_path / "run.json",
                        tmp_path / "actual.json", None)  # fmt: skip
    doc = _measure(questdb, _settings(), variant, files, manifest)
    questdb.sql("UPDATE changed SET i16 = 7 WHERE i16 = null")
    questdb.sql("SELECT wait_wal_table('changed')")
    from ingestbench.validate import export_table

    export_table(questdb, "changed", tmp_path / "export" / "changed")
    (tmp_path / "run.json").write_text(json.dumps(doc))
    result = validate_files(run=tmp_path / "run.json", actual=tmp_path / "actual.json",
                            export=tmp_path / "export", expected=data["expected"], parquet=path,
                            output=tmp_path / "v.json",
                            validation={"on_failure": "report"})  # fmt: skip
    assert not result["passed"] and "row_level" in result["failed_checks"]


def test_a_hive_partitioned_directory(questdb, tmp_path):
    root = tmp_path / "trades"
    for venue in ("XLON", "XPAR"):
        for day in (1, 2):
            part = root / f"venue={venue}" / f"day={day}"
            part.mkdir(parents=True)
            pq.write_table(pa.table({"ts": TS, "qty": _ints(pa.int32(), 0, 100)}),
                           part / "data.parquet")  # fmt: skip
    data = _dataset(tmp_path, "hive", root)
    manifest = load_json(data["manifest"], "manifest")
    assert manifest["rows"] == 4 * N and {"venue", "day"} <= set(manifest["nulls"])
    for method in ("pandas-dataframe-parquet-http", "polars-dataframe-parquet-http"):
        result = _load_and_validate(questdb, data, method, tmp_path)
        assert result["passed"], [c for c in result["checks"] if not c["passed"]][:3]


def test_a_csv_with_a_custom_null_marker(questdb, tmp_path):
    path = tmp_path / "t.csv"
    lines = ["ts|sym|qty|note"] + [
        f"2024-01-01 00:00:{i // 4:02d}.{i:06d}|{'NULL' if i % 5 == 1 else 'abc'[i % 3]}|"
        f"{'NULL' if i % 4 == 2 else i}|{'NULL' if i % 4 == 3 else f'n{i}'}"
        for i in range(200)
    ]
    path.write_text("\n".join(lines) + "\n")
    data = _dataset(tmp_path, "nulls_csv", path, symbols=["sym"],
                    csv={"delimiter": "|", "null_values": ["NULL"]})  # fmt: skip
    manifest = load_json(data["manifest"], "manifest")
    assert manifest["nulls"] == {"ts": 0, "sym": 40, "qty": 50, "note": 50}
    for method in ("pandas-dataframe-csv-http", "polars-dataframe-csv-tcp"):
        result = _load_and_validate(questdb, data, method, tmp_path)
        assert result["passed"], [c for c in result["checks"] if not c["passed"]][:3]
    # QuestDB's CSV import takes only empty fields as nulls: unsupported, with that reason,
    # decided before any server starts; its validation records the reason.
    run = tmp_path / "imp" / "run.json"
    files = IngestFiles(path, data["manifest"], run, tmp_path / "imp" / "actual.json",
                        tmp_path / "imp" / "export")  # fmt: skip
    record = ingest_job(_settings(), parse_variant_name("none-server_csv-csv-http"), files)
    assert "only empty fields as nulls" in record.extra["unsupported"] and record.repeats == []
    result = validate_files(
        run=run,
        actual=files.actual,
        export=files.export,
        expected=data["expected"],
        parquet=path,
        output=run.with_name("v.json"),
    )
    assert result["unsupported"] == record.extra["unsupported"]


def test_the_vectorized_encoder_loads_a_numeric_own_table(questdb, tmp_path):
    path = tmp_path / "num.parquet"
    table = pa.table({"ts": TS, "sym": pa.array(["a", "b", None] * (N // 3)).dictionary_encode(),
                      **FAMILIES["floats"](), "i": _ints(pa.int32(), 0, 9)})  # fmt: skip
    pq.write_table(table, path)
    result = _load_and_validate(questdb, _dataset(tmp_path, "numeric", path),
                                "polars-vectorized-parquet-tcp-w2", tmp_path)  # fmt: skip
    assert result["passed"], [c for c in result["checks"] if not c["passed"]][:3]


def test_server_parquet_reads_only_the_tables_columns(questdb, tmp_path):
    """A column left out (`unsupported_columns: skip`) is not part of the server's INSERT."""
    path = tmp_path / "skip.parquet"
    pq.write_table(pa.table({"ts": TS, "v": np.arange(N, dtype=np.float64),
                             "tags": [[1, 2]] * N}), path)  # fmt: skip
    data = _dataset(tmp_path, "skipped", path, unsupported_columns="skip")
    for method in ("none-server_parquet-parquet-http", "pandas-dataframe-parquet-http"):
        result = _load_and_validate(questdb, data, method, tmp_path)
        assert result["passed"], [c for c in result["checks"] if not c["passed"]][:3]
    assert "tags" not in {
        c for (c,) in questdb.rows("SELECT \"column\" FROM table_columns('skipped')")
    }


@pytest.mark.parametrize(
    "method",
    ["pandas-rows-parquet-http", "pandas-iterrows-parquet-tcp", "pandas-batches-parquet-http-b700",
     "pandas-threads-parquet-tcp-w2", "polars-processes-parquet-http-w2",
     "pandas-dataframe-parquet-http-call", "polars-threads-csv-http-w2-call",
     "pandas-processes-csv-tcp-w2", "polars-vectorized-parquet-tcp-w2",
     "pandas-vectorized-csv-http-w2"],
)  # fmt: skip
def test_every_client_path_loads_the_example_trades(questdb, tmp_path, method):
    from ingestbench.own.example import write_example

    fmt = parse_variant_name(method).format
    path = tmp_path / f"trades.{fmt}"
    write_example(path, 3_000)
    entry = {"symbols": ["venue", "instrument", "side"],
             "csv": {"delimiter": ";", "null_values": ["NA"]}} if fmt == "csv" else {}  # fmt: skip
    label = "ex_" + method.replace("-", "_")
    result = _load_and_validate(questdb, _dataset(tmp_path, label, path, **entry), method, tmp_path)
    assert result["passed"], [c for c in result["checks"] if not c["passed"]][:3]


@pytest.mark.parametrize("method", ["none-server_csv-csv-http", "none-server_copy-csv-http"])
@pytest.mark.parametrize("time_format", [None, "%d/%m/%Y %H:%M:%S"])
def test_the_servers_csv_imports_read_an_own_csv(questdb, tmp_path, method, time_format):
    """Empty fields as nulls, the file's delimiter, and its time format as QuestDB's pattern."""
    path = tmp_path / "t.csv"
    stamp = "%d/%m/%Y %H:%M:%S" if time_format else "%Y-%m-%dT%H:%M:%S.%fZ"
    start = dt.datetime(2024, 3, 1, tzinfo=dt.UTC)
    lines = ["ts|sym|qty|price"] + [
        f"{(start + dt.timedelta(seconds=i // 3)).strftime(stamp)}|{'abc'[i % 3] if i % 5 else ''}|"
        f"{'' if i % 4 == 2 else i}|{i / 8}"
        for i in range(300)
    ]  # fmt: skip
    path.write_text("\n".join(lines) + "\n")
    csv = {"delimiter": "|", **({"timestamp_format": time_format} if time_format else {})}
    label = f"imp_{method.split('-')[1]}_{'fmt' if time_format else 'iso'}"
    data = _dataset(tmp_path, label, path, symbols=["sym"], csv=csv)
    result = _load_and_validate(questdb, data, method, tmp_path)
    assert result["passed"], [c for c in result["checks"] if not c["passed"]][:3]


def test_the_ilp_text_carries_no_decimal(tmp_path):
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"ts": TS, **FAMILIES["decimals"]()}), path)
    data = _dataset(tmp_path, "dec_text", path)
    assert data["ilp"].stat().st_size == 0  # not made
    files = IngestFiles(data["ilp"], data["manifest"], tmp_path / "run.json", None, None)
    record = ingest_job(_settings(), parse_variant_name("none-ilp_file-ilp-tcp-w2"), files)
    assert "carries no decimal" in record.extra["unsupported"]


def _shuffled(n: int, seed: int) -> pa.Table:
    """Rows whose file order is not their time order, so only the file's first rows match."""
    order = np.random.default_rng(seed).permutation(n)
    return pa.table({"ts": TS.take(pa.array(order % N)),
                     "sym": pa.array([f"s{i % 7}" for i in order]).dictionary_encode(),
                     "qty": _ints(pa.int64(), 0, 10**6).take(pa.array(order % N)),
                     "note": pa.array([f"n{i}" for i in order])})  # fmt: skip


def _capped_source(tmp_path: Path, shape: str) -> tuple[Path, dict]:
    if shape == "directory":
        root = tmp_path / "capped"
        for i, venue in enumerate(("XLON", "XPAR", "XAMS")):
            (root / f"venue={venue}").mkdir(parents=True)
            pq.write_table(_shuffled(N, i), root / f"venue={venue}" / "part.parquet",
                           row_group_size=128)  # fmt: skip
        return root, {}
    path = tmp_path / f"capped.{shape}"
    table = _shuffled(2 * N, 9)
    if shape == "csv":
        import pyarrow.csv as pacsv

        pacsv.write_csv(table, path)
        return path, {"symbols": ["sym"]}
    pq.write_table(table, path, row_group_size=128)
    return path, {}


@pytest.mark.parametrize("shape", ["parquet", "csv", "directory"])
def test_a_capped_row_loop_loads_and_validates_the_files_first_rows(questdb, tmp_path, shape):
    """Past `rows_cap` a row loop loads the file's first rows in file order, as on TSBS data,
    and the validation checks exactly that prefix; a prefix of other rows fails it."""
    path, entry = _capped_source(tmp_path, shape)
    data = _dataset(tmp_path, f"capped_{shape}", path, timestamp="ts", **entry)
    method = f"pandas-rows-{'csv' if shape == 'csv' else 'parquet'}-http"
    cap = N + 37  # across a row group, and (directory) into its second file
    result = _load_and_validate(questdb, data, method, tmp_path, _settings(rows_cap=cap))
    assert result["passed"], [c for c in result["checks"] if not c["passed"]][:3]
    assert result["source_rows"] == f"first {cap} in file order"
    run = tmp_path / method / "run.json"
    doc = json.loads(run.read_text())
    assert doc["rows"] == cap
    # the validation of another prefix than the one loaded
    doc["rows"], doc["table_rows"] = cap + 1, {table: cap + 1 for table in doc["table_rows"]}
    run.write_text(json.dumps(doc))
    result = _validate(data, tmp_path / method)
    assert not result["passed"]
    assert {"row_count", "row_level"} <= set(result["failed_checks"])


@pytest.mark.parametrize(
    ("change", "check"),
    [("UPDATE {t} SET note = null WHERE n = 3", "count:note"),
     ("UPDATE {t} SET city = 'Zürich' WHERE city = '日本'", "distinct:city"),
     ("UPDATE {t} SET n = n + 1 WHERE n = 3", "sum:n"),
     ("UPDATE {t} SET day = to_date('1980-01-01', 'yyyy-MM-dd') WHERE n = 0", "min:day"),
     ("UPDATE {t} SET ok = true WHERE n = 1", "true:ok"),
     ("UPDATE {t} SET amount = null WHERE n = 0", "count:amount")],
)  # fmt: skip
def test_every_repeat_of_an_own_table_is_checked(questdb, tmp_path, monkeypatch, change, check):
    """A repeat whose table differs from the file in one column (its row count kept) fails the
    job there, naming that column's check."""
    from ingestbench.ingest import runner
    from ingestbench.validate.repeat_checks import RepeatCheckFailed

    path = tmp_path / "kinds.parquet"
    columns = {**FAMILIES["strings"](), **FAMILIES["dates"](), **FAMILIES["decimals"](),
               "ok": FAMILIES["booleans"]()["ok"]}  # fmt: skip
    pq.write_table(pa.table({"ts": TS, **columns}), path)
    label = "changed_" + check.replace(":", "_")
    data = _dataset(tmp_path, label, path, timestamp="ts")
    visible, calls = runner.wait_visible, []

    def visible_then_changed(qdb, name, rows, *args):
        count = visible(qdb, name, rows, *args)
        calls.append(name)
        if len(calls) == 2:  # the second repeat: one column changed on the server
            qdb.sql(change.format(t=name))
            visible(qdb, name, rows, *args)
        return count

    monkeypatch.setattr(runner, "wait_visible", visible_then_changed)
    variant = "pandas-dataframe-parquet-http"
    with pytest.raises(RepeatCheckFailed) as caught:
        _load_and_validate(questdb, data, variant, tmp_path, _settings(repeats=3))
    assert f"{variant} repeat 1: table {label} differs from its source in {check} (" in str(
        caught.value
    ), str(caught.value)
    assert len(calls) == 2  # the third repeat never ran
