"""Overlap reading with sending: a reader thread fills a small bounded queue with ready chunks.

The reader thread reads a chunk, converts it into the frame the client takes, and queues it while
the consumers send earlier chunks; the queue holds at most `depth` chunks, so memory stays at a
few chunks however big the file is. Reading and converting are timed on the reader thread
(busy time, summed over chunks) through `Clock.add`.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

DEPTH = 2  # chunks ready ahead of the senders: enough to hide a slow chunk, little memory


class _End:
    """The end of the stream; carries the reader's error, if any, to every consumer."""

    def __init__(self, error: BaseException | None = None):
        self.error = error


class ChunkStream:
    """Chunks from `frames`, passed through `convert`, read ahead on a thread of their own.

    Use as a context manager; `get()` (thread-safe, for several consumers) returns the next
    chunk in file order, None at the end, and re-raises the reader's error.
    """

    def __init__(
        self, frames: Iterable[Any], convert: Callable[[Any], Any], clock, depth: int = DEPTH
    ):
        self._frames, self._convert, self._clock = frames, convert, clock
        self._queue: queue.Queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="chunk-reader", daemon=True)

    def _put(self, item: Any) -> bool:
        """Queue an item, waiting for room; False if the stream was closed meanwhile."""
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        frames = iter(self._frames)
        end = _End()
        try:
            while not self._stop.is_set():
                t0 = time.perf_counter()
                frame = next(frames, None)
                t1 = time.perf_counter()
                self._clock.add("read", t1 - t0)
                if frame is None:
                    break
                chunk = self._convert(frame)
                self._clock.add("convert", time.perf_counter() - t1)
                if not self._put(chunk):
                    break
        except BaseException as exc:  # handed to the consumers, who raise it
            end = _End(exc)
        finally:
            close = getattr(frames, "close", None)
            if close is not None:
                close()  # a generator: let it close the file now
        self._put(end)

    def get(self) -> Any:
        item = self._queue.get()
        if isinstance(item, _End):
            self._queue.put(item)  # the reader has stopped, so there is room: others see it too
            if item.error is not None:
                raise item.error
            return None
        return item

    def __iter__(self) -> Iterator[Any]:
        while (chunk := self.get()) is not None:
            yield chunk

    def __enter__(self) -> ChunkStream:
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop reading (early, on an error elsewhere) and wake every consumer with the end."""
        self._stop.set()
        self._thread.join()
        while True:  # drop what was read ahead, then leave the end for blocked consumers
            try:
                self._queue.get_nowait()
            except queue.Empty:
                break
        self._queue.put(_End())

    def __exit__(self, *exc) -> None:
        self.close()
