"""Files the workflow writes and reads.

Writes are atomic: a result file is either complete under its final name or not there at all
(each goes to a hidden temporary name beside its final one and is renamed into place, which is
atomic on one filesystem). Reads of JSON result files fail with one sentence naming the file and
the fix.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ingestbench.errors import UserError

# A full disk, a full quota, or a file-size limit (ulimit -f): the user frees space and reruns.
NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


@contextlib.contextmanager
def space_for(path: str | Path) -> Iterator[None]:
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


def temporary_path(path: str | Path) -> Path:
    """The hidden temporary name beside `path`; it keeps the suffix (writers infer the format)."""
    path = Path(path)
    return path.with_name(f".{path.stem}.tmp-{os.getpid()}{path.suffix}")


@contextlib.contextmanager
def atomic_paths(*paths: str | Path) -> Iterator[list[Path]]:
    """Temporary paths to write; all are renamed into place together when the block succeeds.

    On any error the temporaries are removed and the final files stay as they were.
    """
    finals = [Path(p) for p in paths]
    temps = [temporary_path(p) for p in finals]
    try:
        for final in finals:
            final.parent.mkdir(parents=True, exist_ok=True)
        yield temps
        for tmp, final in zip(temps, finals, strict=True):
            os.replace(tmp, final)
    finally:
        for tmp in temps:
            with contextlib.suppress(OSError):
                tmp.unlink()


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """One temporary path to write, renamed to `path` when the block succeeds."""
    with atomic_paths(path) as (tmp,):
        yield tmp


def write_text_atomic(path: str | Path, text: str) -> None:
    with space_for(path), atomic_path(path) as tmp:
        tmp.write_text(text)


def write_json_atomic(path: str | Path, doc: Any) -> None:
    write_text_atomic(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


class ResultFileError(UserError):
    """A result file that is missing, unreadable or not what its reader expects."""


#: What to do about a result file that is there but unusable: the rule that wrote it writes it anew.
RERUN = "delete it and rerun the rule that writes it"


def load_json(
    path: str | Path,
    what: str,
    error: type[UserError] = ResultFileError,
    fix: str = RERUN,
    missing: str = "rerun the rule that writes it",
) -> dict[str, Any]:
    """The JSON object in `path`; else `error` naming `what` ("run file"), the path and the fix:
    `missing` for a file that is not there, `fix` for one that is unreadable or not an object."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise error(f"the {what} {path} is missing; {missing}.") from None
    except OSError as exc:
        raise error(
            f"cannot read the {what} {path} ({exc.strerror}); make it readable or {fix}."
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise error(f"the {what} {path} is not valid JSON ({reason}); {fix}.") from None
    if not isinstance(data, dict):
        raise error(f"the {what} {path} holds a JSON {type(data).__name__}, not an object; {fix}.")
    return data
