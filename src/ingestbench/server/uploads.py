"""Handing a whole data file to QuestDB without holding it twice (on disk or in client memory).

- `placed_in`: a file in the server's copy root (for `read_parquet`), as a hard link when the copy
  root is on the same file system (no second copy, however big the file), else as a copy; the
  placed file goes again when the block ends, also on failure.
- `upload_multipart`: a multipart/form-data POST (QuestDB's `/imp`) whose body is streamed from
  the file; `requests.post(files=...)` would build the whole body in memory first.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import requests
from requests_toolbelt import MultipartEncoder

log = logging.getLogger(__name__)


@contextlib.contextmanager
def placed_in(directory: Path, source: Path) -> Iterator[Path]:
    """`source` under `directory` (same name) for the duration of the block."""
    placed = Path(directory) / Path(source).name
    placed.unlink(missing_ok=True)  # a leftover of an earlier, killed job
    try:
        try:
            os.link(source, placed)
            log.info("linked %s into the server's copy root %s", source, directory)
        except OSError as exc:  # another file system (EXDEV), or links not allowed
            log.warning("cannot hard-link %s into %s (%s); copying it instead, which needs "
                        "%.1f GB more disk", source, directory, exc.strerror or exc,
                        Path(source).stat().st_size / 1e9)  # fmt: skip
            shutil.copyfile(source, placed)
        yield placed
    finally:
        placed.unlink(missing_ok=True)


UPLOAD_READ_BYTES = 1 << 20


class _BigReads:
    """The encoder's body as an iterable of big reads, with its length (so no chunked encoding).

    Given the encoder itself, urllib3 reads it 16 KiB at a time, and every read of the encoder
    is Python work: the upload cost the client 1.3 CPU-s per 1M CSV rows, 0.36 in 1 MiB reads;
    on a small machine that CPU is taken from the server doing the import."""

    def __init__(self, encoder: MultipartEncoder, read_bytes: int):
        self.encoder, self.read_bytes = encoder, read_bytes

    def __len__(self) -> int:
        return self.encoder.len

    def __iter__(self) -> Iterator[bytes]:
        while chunk := self.encoder.read(self.read_bytes):
            yield chunk


def upload_multipart(
    request: Callable[..., requests.Response],
    endpoint: str,
    params: dict[str, str],
    fields: dict[str, str],
    file_field: str,
    path: Path,
    timeout_s: float = 3600,
) -> requests.Response:
    """POST `fields` and the file at `path` as multipart/form-data to `endpoint`, the file read
    as it is sent; `request` is the server's (QuestDB.request: its credentials and CA, and what
    fails in one sentence)."""
    with open(path, "rb") as fh:
        encoder = MultipartEncoder(
            fields={**fields, file_field: (Path(path).name, fh, "application/octet-stream")}
        )
        return request(
            "POST",
            endpoint,
            params=params,
            data=_BigReads(encoder, UPLOAD_READ_BYTES),
            headers={"Content-Type": encoder.content_type},
            timeout=timeout_s,
        )
