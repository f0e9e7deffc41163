"""Atomic writes: a result file is either complete under its final name or not there at all."""

from __future__ import annotations

import contextlib
import errno
import json
import os
from pathlib import Path
from typing import Any

from .errors import UserError

# A full disk, a full quota, or a file-size limit (ulimit -f): the user frees space and reruns.
NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


@contextlib.contextmanager
def space_for(path: str | Path):
    """Turn running out of space while writing `path` into one sentence naming it."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in NO_SPACE:
            raise
        raise UserError(
            f"no space left to write {path} ({exc.strerror}); nothing half-written was kept: "
            f"free space on its disk (or raise the file size limit), then rerun."
        ) from None


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write to a hidden temporary name beside `path`, then rename (atomic on one filesystem)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with space_for(path):
            tmp.write_text(text)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_json_atomic(path: str | Path, doc: Any) -> None:
    write_text_atomic(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
