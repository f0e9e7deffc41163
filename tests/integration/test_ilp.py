"""The ILP text format and the `ilp_file` method: lines that read back to the Parquet's rows, and
the file sent as it is over TCP and HTTP, validated row for row against a real QuestDB."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ingestbench.ingest.methods import cpu_job, ilp_file
from ingestbench.ingest.methods.ilp_file import IlpFileError, line_blocks
from ingestbench.ingest.runner import run_variant
from ingestbench.server.handle import QuestDB
from ingestbench.server.table import FIELDS, TAGS
from ingestbench.tsbs import DatasetParams, generate
from ingestbench.tsbs.ilp import double_text
from ingestbench.validate import (
    expected_aggregates,
    export_table,
    questdb_aggregates,
    validate_run,
)
from ingestbench.variants import parse_variant_name
from tests.helpers import cpu_aggregates

# A line as TSBS's serializer writes it: "cpu,hostname=host_0,... usage_guest=38i"

LINE = re.compile(
    r"cpu,hostname=host_\d+,region=[a-z0-9-]+,datacenter=[a-z0-9-]+,rack=\d+,os=[A-Za-z0-9.]+,"
    r"arch=x(64|86),team=[A-Z]+,service=\d+,service_version=[01],"
    r"service_environment=(production|staging|test) "
    + ",".join(rf"{f}=(?:\d+i|\d+(\.\d+)?)" for f in FIELDS)
    + r" \d{19}"
)


@pytest.fixture(scope="module", params=["double", "long"])
def dataset(request, tmp_path_factory):
    """The tiny dataset (2,000 rows) as Parquet and ILP text, doubles or integers."""
    params = DatasetParams(scale=40, epochs=50, seed=7, field_type=request.param)
    out = tmp_path_factory.mktemp(f"ilp-{request.param}")
    manifest = generate(params, out, formats=("parquet", "ilp"), progress=False)
    paths = {fmt: out / f"{params.name}.{fmt}" for fmt in ("parquet", "ilp")}
    return {"params": params, "manifest": manifest, **paths}


def parse_ilp(path: Path) -> pd.DataFrame:
    """A small parser for the lines this writer makes (no escapes: TSBS values have none)."""
    rows = []
    for line in path.read_text().splitlines():
        head, fields, ts = line.split(" ")
        row = dict(pair.split("=") for pair in head.split(",")[1:])
        for pair in fields.split(","):
            name, text = pair.split("=")
            row[name] = int(text[:-1]) if text.endswith("i") else float(text)
        row["timestamp"] = pd.Timestamp(int(ts), tz="UTC")
        rows.append(row)
    return pd.DataFrame(rows)


def test_lines_have_tsbs_layout_and_parse_back_to_the_parquet_rows(dataset):
    text = dataset["ilp"].read_text()
    lines = text.splitlines()
    assert text.endswith("\n") and len(lines) == dataset["params"].rows
    assert all(LINE.fullmatch(line) for line in lines), next(
        line for line in lines if not LINE.fullmatch(line)
    )
    long = dataset["params"].field_type == "long"
    assert all(("i," in line) == long for line in lines)  # the integer suffix, only for longs
    values = "".join(re.sub(r"[a-z_]+=", "", line.split(" ")[1]) for line in lines)
    assert "e" not in values  # no exponent notation
    parsed = parse_ilp(dataset["ilp"])
    source = pd.read_parquet(dataset["parquet"])
    for tag in TAGS:
        source[tag] = source[tag].astype(str)
    pd.testing.assert_frame_equal(parsed, source[list(parsed.columns)], check_exact=True)


def test_the_manifest_lists_and_hashes_the_ilp_file(dataset):
    entry = dataset["manifest"]["files"]["ilp"]
    data = dataset["ilp"].read_bytes()
    assert entry["path"] == dataset["ilp"].name and entry["bytes"] == len(data)
    assert entry["sha256"] == hashlib.sha256(data).hexdigest()


def test_doubles_are_written_as_go_writes_them():
    values = np.array([0.0, 100.0, 3.0, 42.17, 0.1 + 0.2, 1e-5, 1.2345e-7, 1e20])
    assert double_text(values).to_list() == [
        "0", "100", "3", "42.17", "0.30000000000000004", "0.00001", "0.00000012345",
        "100000000000000000000",
    ]  # fmt: skip
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.random(20_000) * 100, rng.random(2_000) * 1e-6])
    text = double_text(values).to_list()
    assert [float(t) for t in text] == values.tolist()  # exact round trip
    assert all(len(t) <= len(np.format_float_positional(v, unique=True)) for t, v in
               zip(text, values, strict=True))  # fmt: skip


@pytest.mark.parametrize("block", [1, 100, 777, 3000, 1 << 20])
def test_blocks_are_whole_lines_and_together_the_file(dataset, block):
    data = dataset["ilp"].read_bytes()
    blocks = [bytes(b) for b in line_blocks(dataset["ilp"], block)]
    assert b"".join(blocks) == data
    assert all(b.endswith(b"\n") for b in blocks)
    if block < 400:  # shorter than a line: one line per block
        assert len(blocks) == dataset["params"].rows


def test_a_last_line_without_newline_still_ends(tmp_path):
    path = tmp_path / "x.ilp"
    path.write_bytes(b"a 1\nb 2")
    assert [bytes(b) for b in line_blocks(path, 3)] == [b"a 1\n", b"b 2\n"]


def _validated(qdb: QuestDB, table: str, dataset, doc, tmp_path: Path) -> dict:
    export = tmp_path / table  # a directory of each table's export
    export_table(qdb, table, export / "cpu")
    expected = cpu_aggregates(expected_aggregates(dataset["parquet"]))
    return validate_run(doc, dataset["parquet"], expected,
                        cpu_aggregates(questdb_aggregates(qdb, table)), export)  # fmt: skip


@pytest.mark.parametrize("transport", ["tcp", "http"])
@pytest.mark.parametrize("connections", [1, 2])
def test_ilp_file_lands_every_row(questdb, dataset, tmp_path, monkeypatch, transport, connections):
    # 3,000-byte reads end mid line (lines are ~340-490 bytes): every block is cut and carried.
    monkeypatch.setattr(ilp_file, "BLOCK_BYTES", {"tcp": 3000, "http": 3000})
    variant = parse_variant_name(f"none-ilp_file-ilp-{transport}-w{connections}")
    assert variant.workers == connections
    table = "cpu"  # the lines name it: the file is sent as it is
    rows = dataset["params"].rows
    job = cpu_job(
        questdb, table, variant, dataset["ilp"], rows, 2, field_type=dataset["params"].field_type
    )
    doc = run_variant(job, {"name": dataset["params"].name, "rows": rows}, 2)
    assert doc["ilp_bytes"] == dataset["ilp"].stat().st_size
    assert doc["ilp_protocol_version"] == 1  # text lines
    for r in doc["repeats"]:
        assert r["phases"]["serialize"] == 0.0  # no serialize pass: the file is the ILP
        assert r["phases"]["send"] > 0
    result = _validated(questdb, table, dataset, doc, tmp_path)
    assert result["passed"], result["failed_checks"]


def test_ilp_file_warms_up_from_the_datasets_parquet(questdb, dataset, tmp_path):
    variant = parse_variant_name("none-ilp_file-ilp-tcp-w2")
    rows = dataset["params"].rows
    job = cpu_job(
        questdb, "cpu", variant, dataset["ilp"], rows, 2, field_type=dataset["params"].field_type
    )
    doc = run_variant(job, {"name": dataset["params"].name, "rows": rows}, 1, warmup_rows=500)
    assert doc["warmup"]["rows"] == 500 and doc["warmup"]["method"] == "dataframe"
    assert [r["cold"] for r in doc["repeats"]] == [False]
    result = _validated(questdb, "cpu", dataset, doc, tmp_path)
    assert result["passed"], result["failed_checks"]


def test_http_reports_the_servers_sentence(questdb, dataset):
    job = cpu_job(
        questdb,
        "cpu",
        parse_variant_name("none-ilp_file-ilp-http-w2"),
        dataset["ilp"],
        dataset["params"].rows,
        2,
        field_type=dataset["params"].field_type,
    )
    original = questdb.sql
    sabotaged = dataclasses.replace(questdb)

    def sql(query, **kw):  # a tag cannot land in a DOUBLE column
        if query.startswith("CREATE TABLE"):
            query = query.replace("hostname SYMBOL", "hostname DOUBLE")
        return original(query, **kw)

    sabotaged.sql = sql
    job.qdb = sabotaged
    with pytest.raises(IlpFileError, match="QuestDB refused a block .*hostname") as err:
        run_variant(job, {"name": "tiny", "rows": 2000}, 1)
    assert "\n" not in str(err.value)


def test_a_missing_file_is_one_sentence(questdb, tmp_path):
    job = cpu_job(questdb, "cpu", parse_variant_name("none-ilp_file-ilp-tcp-w1"),
              tmp_path / "absent.ilp", 10, 2, field_type="double")  # fmt: skip
    with pytest.raises(Exception, match="does not exist; run the generate rule first"):
        run_variant(job, {"name": "tiny", "rows": 2000}, 1)


def test_a_table_other_than_the_files_is_one_sentence(questdb, dataset):
    job = cpu_job(
        questdb,
        "t_other",
        parse_variant_name("none-ilp_file-ilp-tcp-w1"),
        dataset["ilp"],
        dataset["params"].rows,
        2,
        field_type=dataset["params"].field_type,
    )
    with pytest.raises(IlpFileError, match="go to table 'cpu', not to the configured table"):
        run_variant(job, {"name": "tiny", "rows": 2000}, 1)
