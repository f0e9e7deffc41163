"""Disk space: what a run will write, held against the free space, before anything is written.

A 100M-row dataset takes about 8 GB as Parquet and 28 GB as CSV, and each ingestion job adds a
QuestDB data directory and a validation export of the same rows. A run that fills the disk halfway
leaves nothing useful, so the workflow (and `ingestbench generate`) checks first and stops with one
sentence: how much is needed, how much is free, and what to do.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ingestbench.errors import UserError

log = logging.getLogger(__name__)

# Bytes per TSBS cpu row of each generated file (double fields, from the generator's manifests).
FILE_BYTES_PER_ROW = {"parquet": 80, "csv": 280, "ilp": 490}
# One ingestion job at a time (resource `questdb`): its server's data directory and the table's
# Parquet export for validation (93 B/row measured), plus DuckDB's spill while validating (row
# hashes). The data directory holds the table (10 symbols, 10 doubles, the timestamp: 128 B/row)
# and its WAL until applied and purged (as much again), plus preallocated pages per column file,
# a fixed cost that dominates small tables (778 B/row measured at 1M rows) and fades at 100M.
SERVER_DATA_BYTES_PER_ROW = 300
EXPORT_BYTES_PER_ROW = 100
SPILL_BYTES_PER_ROW = 40
# Estimates are estimates: ask for this much more, so "just enough" does not fail at 99 %.
SAFETY = 1.15

GB = 1e9


class DiskSpaceError(UserError):
    pass


@dataclass(frozen=True)
class Need:
    """Bytes that will be written under `path` (a file system is found from it)."""

    path: Path
    nbytes: int
    what: str


def files_bytes(rows: int, formats: Iterable[str]) -> int:
    return sum(rows * FILE_BYTES_PER_ROW[fmt] for fmt in formats)


def sorted_copy_bytes(source_files: Iterable[str | Path]) -> int:
    """What an own dataset's sorted copy takes while DuckDB writes it: the copy, about the
    size of its source, and DuckDB's spill of the sort, as much again."""
    return 2 * sum(Path(f).stat().st_size for f in source_files if Path(f).is_file())


def job_bytes(rows: int) -> tuple[int, int]:
    """(bytes in the server's data directory, bytes under results/) of one ingestion job."""
    return rows * SERVER_DATA_BYTES_PER_ROW, rows * (EXPORT_BYTES_PER_ROW + SPILL_BYTES_PER_ROW)


def existing_ancestor(path: Path) -> Path:
    """`path` or its nearest existing parent (results/ may not exist before the first run)."""
    path = Path(path).absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def free_bytes(path: Path) -> int:
    return shutil.disk_usage(existing_ancestor(path)).free


def server_data_root() -> Path:
    """Where an embedded server keeps its data directory (server.py makes it with mkdtemp)."""
    return Path(tempfile.gettempdir())


def check_needs(needs: Iterable[Need], free: Callable[[Path], int] = free_bytes) -> None:
    """Raise DiskSpaceError if the needs on any one file system exceed its free space.

    `free` gives the free bytes under a path (injectable, so a shortage can be simulated).
    """
    by_device: dict[int, list[Need]] = {}
    for need in needs:
        if need.nbytes > 0:
            device = os.stat(existing_ancestor(need.path)).st_dev
            by_device.setdefault(device, []).append(need)
    for group in by_device.values():
        needed = int(sum(n.nbytes for n in group) * SAFETY)
        where = group[0].path
        available = free(where)
        detail = ", ".join(f"{n.what} {n.nbytes / GB:.1f} GB" for n in group)
        log.info("disk: %s need about %.1f GB (%s); %.1f GB free",
                 where, needed / GB, detail, available / GB)  # fmt: skip
        if needed > available:
            raise DiskSpaceError(
                f"not enough disk space under {existing_ancestor(where)}: this run needs about "
                f"{needed / GB:.1f} GB ({detail}, plus {SAFETY - 1:.0%} margin) and "
                f"{available / GB:.1f} GB is free; free some space, point results/ (or TMPDIR) "
                f"at a bigger disk, or configure fewer or smaller datasets."
            )


def workflow_needs(
    to_generate: Iterable[tuple[int, Iterable[str]]],
    pending_job_rows: Iterable[int],
    results: Path = Path("results"),
    embedded_server: bool = True,
    data: Path | None = None,
    keep_exports: bool = False,
    sorted_copies: Iterable[int] = (),
) -> list[Need]:
    """The needs of a workflow run.

    `to_generate`: (rows, formats) of each dataset whose files are not there yet;
    `pending_job_rows`: the rows of each ingestion job still to run; `data`: where the datasets
    go (default results/data); `sorted_copies`: the bytes each own dataset's sorted copy still
    to write takes there (sorted_copy_bytes). Jobs run
    one at a time; an export deleted once validated counts once (the largest), a kept one
    (`keep_exports`) counts for every job. An external server keeps its data elsewhere: only an
    embedded one counts here.
    """
    pending = list(pending_job_rows)
    data = results / "data" if data is None else data
    copies = sum(sorted_copies)
    needs = [Need(data, sum(files_bytes(r, f) for r, f in to_generate) + copies,
                  "datasets and sorted copies" if copies else "datasets")]  # fmt: skip
    largest = max(pending, default=0)
    server, exported = job_bytes(largest)
    if embedded_server:
        needs.append(Need(server_data_root(), server, "one QuestDB data directory"))
    if keep_exports:
        exported = sum(pending) * EXPORT_BYTES_PER_ROW + largest * SPILL_BYTES_PER_ROW
        needs.append(Need(results, exported, "the kept validation exports and a spill"))
    else:
        needs.append(Need(results, exported, "one validation export and spill"))
    return needs
