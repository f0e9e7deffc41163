"""Atomic writes: a result file is either complete under its final name or not there at all."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write to a hidden temporary name beside `path`, then rename (atomic on one filesystem)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_json_atomic(path: str | Path, doc: Any) -> None:
    write_text_atomic(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
