"""The generate loop: params -> host simulation -> every writer, then the manifest, all atomic."""

from __future__ import annotations

import contextlib
import json
import logging
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from ingestbench.storage.files import atomic_paths
from ingestbench.tsbs.columns import use_case_tables
from ingestbench.tsbs.formats import BOTH, WRITERS
from ingestbench.tsbs.hosts import ROW_GROUP_ROWS, iter_rows, shuffle_within_lag
from ingestbench.tsbs.manifest import file_entry, manifest
from ingestbench.tsbs.params import DatasetParams, GeneratorError, positive_int, unwritable
from ingestbench.tsbs.writers import Writer

log = logging.getLogger(__name__)


def _normalise_formats(formats: Sequence[str] | str) -> tuple[str, ...]:
    if isinstance(formats, str):
        formats = BOTH if formats == "both" else (formats,)
    chosen = tuple(dict.fromkeys(formats))
    bad = [f for f in chosen if f not in WRITERS]
    if bad or not chosen:
        raise GeneratorError(
            f"unknown output format {bad[0] if bad else 'none'!r}: "
            f"choose {', '.join(WRITERS)} or both (--format)."
        )
    return chosen


class _Progress:
    """tqdm bar on a terminal, and an INFO log line about every 10 % either way."""

    def __init__(self, total: int, name: str, bar: bool):
        self.total, self.name, self.done, self.next_log = total, name, 0, 0.1
        self.bar = None
        if bar and sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="epoch", desc=name, leave=False)

    def __call__(self, n: int) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        if self.done >= self.next_log * self.total or self.done == self.total:
            log.info("%s: %d/%d epochs", self.name, self.done, self.total)
            self.next_log = math.floor(self.done / self.total * 10 + 1) / 10

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def generate(
    params: DatasetParams,
    out_dir: Path | str,
    formats: Sequence[str] | str = BOTH,
    progress: bool = True,
    *,
    row_group_rows: int = ROW_GROUP_ROWS,
) -> dict:
    """Write ``out_dir/<name>.parquet`` and/or ``.csv`` and ``<name>.manifest.json``.

    Every file goes to ``<final>.tmp-<pid>`` first and is renamed into place only when all are
    complete, so a failure leaves earlier files untouched and no partial file under a final name.
    Returns the manifest dict. Raises GeneratorError (one sentence) on bad input or an unwritable
    output directory. ``row_group_rows`` sets rows per chunk / row group (whole epochs); it changes
    the Parquet layout, never the rows.
    """
    if not isinstance(params, DatasetParams):
        raise GeneratorError(
            f"generate() needs a DatasetParams (got {type(params).__name__}): "
            "build one with DatasetParams(...) or DatasetParams.from_config(...)."
        )
    formats = _normalise_formats(formats)
    row_group_rows = positive_int(row_group_rows, "row_group_rows", "generate()'s row_group_rows")
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GeneratorError(
            f"cannot create the output directory {out_dir} ({exc.strerror or exc}): "
            "choose a writable output directory (--out)."
        ) from None

    name = params.name
    if len(use_case_tables(params.use_case)) > 1:  # a folder of files, a file per table
        from ingestbench.tsbs.iot_files import generate_iot

        log.info("generating %s (%d points, two tables) into %s as %s", name, params.rows,
                 out_dir, ", ".join(formats))  # fmt: skip
        bar = _Progress(params.epochs, name, progress)
        try:
            doc = generate_iot(params, out_dir, formats, bar, row_group_rows)
        finally:
            bar.close()
        log.info("wrote %s: %s rows", name, doc["rows"])
        return doc
    finals = {fmt: out_dir / f"{name}.{fmt}" for fmt in formats}
    finals["manifest"] = out_dir / f"{name}.manifest.json"
    log.info(
        "generating %s (%d rows) into %s as %s", name, params.rows, out_dir, ", ".join(formats)
    )

    writers: dict[str, Writer] = {}
    bar = _Progress(params.epochs, name, progress)
    current = finals[formats[0]]
    try:
        # Every file goes to a temporary name; all are renamed together when all are complete.
        with atomic_paths(*finals.values()) as temp_list:
            temps = dict(zip(finals, temp_list, strict=True))
            try:
                for fmt in formats:
                    current = temps[fmt]
                    writers[fmt] = WRITERS[fmt](temps[fmt], params, row_group_rows)
                chunks = iter_rows(params, row_group_rows, bar)
                if params.lag_ns is not None:
                    chunks = shuffle_within_lag(chunks, params.lag_ns, params.seed)
                for chunk in chunks:
                    for fmt, writer in writers.items():
                        current = temps[fmt]
                        writer.write(chunk)
                infos = {}
                for fmt, writer in writers.items():
                    current = temps[fmt]
                    writer.close()
                    infos[fmt] = writer.manifest_info()
                writers.clear()
                bar.close()

                files = {}
                for fmt in formats:
                    current = temps[fmt]
                    files[fmt] = {**file_entry(finals[fmt].name, temps[fmt]), **infos[fmt]}
                doc = manifest(params, files)
                current = temps["manifest"]
                temps["manifest"].write_text(json.dumps(doc, indent=2) + "\n")
                current = out_dir
            except BaseException:
                bar.close()
                for writer in writers.values():
                    with contextlib.suppress(Exception):
                        writer.close()
                raise
    except OSError as exc:
        raise unwritable(current, exc) from None
    log.info("wrote %s", ", ".join(str(finals[k]) for k in (*formats, "manifest")))
    return doc
