"""The rule `dtype_matrix`: the matrix on a server of its own, then its files."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from ingestbench.config import QuestDBSettings
from ingestbench.dtypes.chart import draw_heatmap
from ingestbench.dtypes.matrix import Cell, run_matrix, write_csv, write_markdown
from ingestbench.ingest.environment import installed_version, questdb_info
from ingestbench.server.configured import questdb_server
from ingestbench.server.handle import QuestDB


@dataclass(frozen=True)
class MatrixFiles:
    csv: Path  # every cell: results/dtype_matrix.csv
    table: Path  # the readable table: results/dtype_matrix.md
    chart: Path  # the heatmap: results/plots/dtype_matrix.png


def versions_line(qdb: QuestDB) -> str:
    """What the cells depend on: the server's and the libraries' versions."""
    packages = ("questdb", "pandas", "polars", "pyarrow", "duckdb")
    named = [f"QuestDB {questdb_info(qdb, '')['version']}"]
    named += [f"{name} {installed_version(name)}" for name in packages]
    return "Measured with " + ", ".join(named) + "."


def matrix_job(
    config: dict, outputs: MatrixFiles, jar: Path | None, server_log: Path
) -> list[Cell]:
    """The workflow's rule: the matrix on its own server, then the CSV, the table and the chart."""
    options = config["dtype_matrix"]
    settings = QuestDBSettings.from_config(config)
    outputs.csv.parent.mkdir(parents=True, exist_ok=True)
    with (
        questdb_server(settings, jar, server_log) as qdb,
        tempfile.TemporaryDirectory(dir=outputs.csv.parent, prefix=".dtype-matrix-") as work,
    ):
        cells = run_matrix(qdb, Path(work), **options)
        versions = versions_line(qdb)
    write_csv(cells, outputs.csv)
    write_markdown(cells, outputs.table, versions)
    draw_heatmap(cells, outputs.chart, versions)
    return cells
