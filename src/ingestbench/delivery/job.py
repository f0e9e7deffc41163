"""Rule `delivery`'s job: the experiment on its own server, then delivery.csv and the matrix."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any

from ingestbench.config import QuestDBSettings
from ingestbench.delivery.experiment import run_experiment, to_csv
from ingestbench.delivery.settings import DeliverySettings
from ingestbench.delivery.summary import delivery_section
from ingestbench.storage.files import load_json, write_text_atomic

log = logging.getLogger(__name__)


def delivery_job(
    config: dict[str, Any],
    manifest: Path,
    data: Path,
    csv_path: Path,
    md_path: Path,
    jar: Path | None,
    server_log: Path | None = None,
    histories: Path | None = None,
) -> None:
    """delivery.csv, the matrix and, in `histories`, one history file per case."""
    if jar is None:
        raise ValueError("the delivery experiment needs the workflow's own server (a jar)")
    settings = DeliverySettings.from_config(config)
    with tempfile.TemporaryDirectory(prefix="delivery-") as work:
        rows = run_experiment(settings, load_json(manifest, "manifest"), data,
                              QuestDBSettings.from_config(config), jar, Path(work),
                              server_log, histories)  # fmt: skip
    write_text_atomic(csv_path, to_csv(rows))
    write_text_atomic(md_path, delivery_section(csv_path))
    log.info("delivery: %d cases into %s", len(rows), csv_path)
