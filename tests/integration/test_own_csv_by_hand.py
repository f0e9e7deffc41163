"""Your own CSV by hand: a .tsv file split on tabs, and a `;`-separated file with the CSV
options of `ingestbench ingest`, each loaded into a real QuestDB and counted."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.helpers import REPO

pytestmark = pytest.mark.server
ROWS = 300


def _write(path, sep: str) -> None:
    lines = [sep.join(["ts", "host", "v", "note"])] + [
        sep.join([f"2024-01-01T00:{i // 60:02d}:{i % 60:02d}Z", f"h{i % 7}", f"{i}.5",
                  f"a,b {i}"])  # a comma inside a field: split on commas, it breaks the rows
        for i in range(ROWS)
    ]  # fmt: skip
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(("name", "sep", "options"), [
    ("mine.tsv", "\t", []),
    ("mine.csv", ";", ["--delimiter", ";"]),
])  # fmt: skip
def test_an_own_csv_by_hand_reads_with_its_separator(tmp_path, name, sep, options):
    data = tmp_path / name
    _write(data, sep)
    config = tmp_path / "c.yaml"
    config.write_text("warmup_rows: 0\n")
    out = tmp_path / "run.json"
    cmd = [sys.executable, "-m", "ingestbench.cli", "ingest", "pandas-dataframe-csv-http",
           "--data", str(data), *options, "--config", str(config), "--repeats", "1",
           "--out", str(out)]  # fmt: skip
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=REPO)
    assert result.returncode == 0, result.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert doc["rows"] == ROWS and doc["dataset"]["columns"] == 4
