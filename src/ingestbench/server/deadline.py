"""A deadline for a repeat whose server makes no progress.

A stopped server (SIGSTOP, a frozen VM) or one stuck in a garbage collection answers nothing, and
every HTTP call to it waits its full timeout. While a repeat runs, a thread asks the server for
its WAL transactions (`wal_tables()`) every few seconds, with a short timeout of its own: a
server that answers is making progress (rows that never become visible are caught apart, by
server.table.wait_visible, when their count stands still). When no answer came for `limit_s`,
the deadline expires: an embedded server (which this process owns)
is killed, so the repeat's blocked calls fail at once, and the repeat fails with one sentence
naming the server, its log and what it was waiting for. An external server is not ours to kill:
the main thread is interrupted instead, which takes effect when its blocked call returns.
"""

from __future__ import annotations

import _thread
import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Callable

from ingestbench.server.handle import QuestDB, QuestDBError

log = logging.getLogger(__name__)
#: The floor of the default deadline, and the rows per second that scale it up for a big dataset
#: (whose server may pause longer, collecting a bigger heap): a minute of silence is no GC pause.
DEFAULT_MIN_S = 60.0
DEFAULT_ROWS_PER_S = 20_000
#: How often the server is asked, at most; each question waits at most this long for its answer.
POLL_S = 5.0


def default_limit_s(rows: int) -> float:
    """The default deadline: a minute, or longer for a dataset whose ingestion takes longer."""
    return max(DEFAULT_MIN_S, rows / DEFAULT_ROWS_PER_S)


class DeadlineExpired(QuestDBError):
    """A repeat's server made no progress for the configured time."""


class Deadline:
    """While the block runs, fail it if the server makes no progress for `limit_s`.

    `waiting_for` says, when asked, what the repeat is waiting for (the clock's phase)."""

    def __init__(
        self, qdb: QuestDB, limit_s: float, label: str, waiting_for: Callable[[], str]
    ) -> None:
        self.qdb, self.limit_s, self.label, self.waiting_for = qdb, limit_s, label, waiting_for
        self.poll_s = min(POLL_S, max(limit_s / 4, 0.2))
        self.expired: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="deadline")

    def _answers(self) -> bool:
        """Whether the server answers a light query within the poll interval."""
        try:
            self.qdb.sql("SELECT name, sequencerTxn, writerTxn FROM wal_tables()",
                         timeout=self.poll_s)  # fmt: skip
        except QuestDBError:
            return False
        return True

    def _run(self) -> None:
        answered_at = time.monotonic()
        while not self._stop.wait(self.poll_s):
            if self._answers():
                answered_at = time.monotonic()
            elif time.monotonic() - answered_at > self.limit_s and not self._stop.is_set():
                self._expire()
                return

    def _expire(self) -> None:
        qdb = self.qdb
        where = f"{qdb.url}" + (f" (pid {qdb.pid})" if qdb.pid else "")
        log_hint = f"its log {qdb.log_path}" if qdb.log_path else "its log"
        self.expired = (
            f"{self.label}: the QuestDB server at {where} made no progress for "
            f"{self.limit_s:g} s while the job waited for {self.waiting_for()}; "
            f"{log_hint} may say why (a stopped process, a long garbage collection, a machine "
            f"out of memory): fix that, or raise guards.repeat_deadline_s if the server is only "
            f"slow, then rerun."
        )
        log.error("%s", self.expired)
        if qdb.pid is not None:  # ours: killed, so every call blocked on it fails now
            with contextlib.suppress(ProcessLookupError):
                os.kill(qdb.pid, signal.SIGKILL)
        else:
            _thread.interrupt_main()

    def __enter__(self) -> Deadline:
        self._thread.start()
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        # Not joined: the thread may be inside a probe of up to poll_s, which the repeat that
        # follows need not wait for; it ends at its next wake.
        self._stop.set()
        if self.expired is not None:
            raise DeadlineExpired(self.expired) from None
        return False
