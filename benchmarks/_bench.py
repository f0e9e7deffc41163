"""What the QuestDB benchmarks share: a generated dataset and the workflow's server, temporary."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ingestbench.config import load_config
from ingestbench.readers import import_libraries
from ingestbench.server import QuestDB, questdb_server
from ingestbench.tsbs import DatasetParams, generate

REPO = Path(__file__).resolve().parents[1]
TABLE = "cpu"


@contextlib.contextmanager
def dataset_and_server(
    scale: int, epochs: int, formats: tuple[str, ...] = ("parquet",)
) -> Iterator[tuple[DatasetParams, dict[str, Path], QuestDB, dict]]:
    """(params, {format: path}, server, config): TSBS cpu (seed 42) in a temporary directory and
    a QuestDB started as `config.yaml` says (a fresh embedded one by default); both go on exit."""
    config = load_config(REPO / "config.yaml")
    import_libraries("polars")  # imports are start-up cost, not part of any case
    with tempfile.TemporaryDirectory(prefix="ingestbench-bench-") as tmp:
        params = DatasetParams(scale=scale, epochs=epochs, seed=42)
        generate(params, tmp, formats=formats, progress=False)
        paths = {fmt: Path(tmp) / f"{params.name}.{fmt}" for fmt in formats}
        with questdb_server(config["questdb"]) as qdb:
            yield params, paths, qdb, config
