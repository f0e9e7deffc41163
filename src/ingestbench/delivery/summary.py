"""The delivery matrix as markdown: the section summary.md gets when the config has a
`delivery` section, and the table the report shows."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from ingestbench.delivery.matrix import cells, matrix, recommendation, unsupported
from ingestbench.delivery.paths import FAULTS

HEADING = "## Delivery under faults"


def read_rows(csv_path: Path) -> list[dict[str, Any]]:
    with open(csv_path, newline="") as fh:
        return list(csv.DictReader(fh))


def measured_faults(cells: dict[str, dict[str, str]]) -> list[str]:
    """The faults of a matrix's columns: those it has, in FAULTS order."""
    return [f for f in FAULTS if any(f in by_fault for by_fault in cells.values())]


def matrix_markdown(rows: list[dict[str, Any]]) -> str:
    """One row per path, one column per fault (those measured, in FAULTS order); then why each
    unsupported path did not run."""
    cells = matrix(rows)
    faults = measured_faults(cells)
    lines = ["| path | " + " | ".join(faults) + " |", "|---" * (len(faults) + 1) + "|"]
    for path, by_fault in cells.items():
        lines.append(f"| `{path}` | " + " | ".join(by_fault.get(f, "") for f in faults) + " |")
    if reasons := unsupported(rows):
        lines.append("")
        lines += [f"- `{path}` is unsupported: {why}." for path, why in reasons.items()]
    return "\n".join(lines)


def delivery_section(csv_paths: Path | list[Path]) -> str:
    """The section of one delivery.csv, or of one per server (`delivery/<server>/delivery.csv`,
    the server named over each matrix: its version's paths may differ)."""
    paths = [Path(p) for p in (csv_paths if isinstance(csv_paths, list) else [csv_paths])]
    intro = (
        f"{HEADING}\n\n"
        "Each cell is the worst of its fault points, from a row-for-row comparison of the table "
        'with its source (docs/faults.md, "Delivery under faults"; every case in '
        f"{paths[0].name}).\n\n"
    )
    if len(paths) == 1:
        rows = read_rows(paths[0])
        return f"{intro}{matrix_markdown(rows)}\n\n{recommendation(rows)}\n"
    parts = []
    for path in paths:
        rows = read_rows(path)
        parts.append(f"### QuestDB {path.parent.name}\n\n{matrix_markdown(rows)}\n\n"
                     f"{recommendation(rows)}\n")  # fmt: skip
    return intro + "\n".join(parts)


def summary_part(delivery_csv: list[str | Path]) -> tuple[None, str]:
    """No rows of summary.csv (delivery.csv has every case), and the delivery section of
    summary.md (each server's matrix), for results.summary.write_summary."""
    return None, delivery_section([Path(p) for p in delivery_csv])


def archive_part(delivery_csv: list[str | Path]) -> dict[str, Any]:
    """The archive's delivery part: per server (`delivery/<server>/delivery.csv`), its matrix
    (path -> fault -> the cell: text, class, each case's verdict and fault time), why each
    unsupported path did not run, and the recommendation; the page's delivery section."""
    servers = []
    for path in map(Path, delivery_csv):
        rows = read_rows(path)
        matrix_cells = cells(rows)
        servers.append({"server": path.parent.name, "faults": measured_faults(matrix_cells),
                        "cells": matrix_cells, "unsupported": unsupported(rows),
                        "recommendation": recommendation(rows)})  # fmt: skip
    return {"servers": servers}
