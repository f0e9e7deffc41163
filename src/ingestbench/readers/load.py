"""`QueryLoad`: the parent's handle on the readers' process for one repeat, or for a stretch of
queries against the finished table.

Entering it spawns the process and waits until its connections are open; the window it measures
begins when entering returns (the repeat's clock starts right after) and ends at `stop()` (the
repeat's rows visible). Queries started outside that window are left out of its figures; the
samples keep the few taken while the process started (negative times: the empty table) and one
taken once it stopped (the writer at the last transaction).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import time
from typing import Any

from ingestbench.readers.stats import query_stats, visibility
from ingestbench.readers.worker import LoadPlan, run

#: How long the process may take to start, or to send its logs back once stopped.
START_S, REPORT_S = 60.0, 60.0


class LoadError(RuntimeError):
    """The readers' process did not start or did not report."""


class QueryLoad:
    """Readers (and the sampler) in their own process, for one window of time."""

    def __init__(self, plan: LoadPlan, lag_basis: str = "txn"):
        self.plan, self.lag_basis = plan, lag_basis
        self.began = self.ended = 0.0
        self.logs: dict[str, Any] = {}
        self._proc: Any = None

    def pids(self) -> tuple[int, ...]:
        """The process whose memory and CPU are the readers', not the client's."""
        return (self._proc.pid,) if self._proc is not None and self._proc.pid else ()

    def __enter__(self) -> QueryLoad:
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._stop = ctx.Event()
        self._proc = ctx.Process(target=_main, args=(self.plan, child, self._stop, os.getpid()),
                                 name="readers", daemon=True)  # fmt: skip
        self._proc.start()
        child.close()
        if not self._conn.poll(START_S) or self._conn.recv() != "ready":
            self._end()
            raise LoadError(f"the readers' process did not start within {START_S:.0f} s.")
        self.began = time.monotonic()
        return self

    def stop(self) -> None:
        """The end of the measured window (the rows visible): the readers stop."""
        if not self.ended:
            self.ended = time.monotonic()
            self._stop.set()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
        try:
            if self._conn.poll(REPORT_S):
                self.logs = self._conn.recv()
            elif exc[0] is None:
                raise LoadError(f"the readers' process sent nothing within {REPORT_S:.0f} s.")
        finally:
            self._end()

    def _end(self) -> None:
        self._proc.join(5)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join()

    def run_for(self, seconds: float) -> QueryLoad:
        """The readers alone for `seconds` (the finished table): entered, waited, stopped."""
        with self:
            time.sleep(seconds)
        return self

    def record(self) -> dict[str, Any]:
        """The window's figures: queries per kind, errors, readers behind, the readers' and the
        sampler's CPU, and from the samples the visibility lag and the series."""
        names = [k.name for k in self.plan.kinds]
        window = (self.began, self.ended)
        out = query_stats(self.logs.get("readers", []), names, window, self.plan.rate_per_s)
        sampler = self.logs.get("sampler") or {}
        sampler_cpu = sampler.get("cpu_s", 0.0)
        out["readers_cpu_s"] = round(self.logs.get("cpu_s", 0.0) - sampler_cpu, 3)
        if self.plan.sample_interval_s:
            samples = sampler.get("samples", [])  # the last one taken once stopped
            out["sampler"] = {"samples": len(samples), "failed": sampler.get("failed", 0),
                              "errors": sampler.get("errors", []),
                              "cpu_s": round(sampler_cpu, 3),
                              "interval_s": self.plan.sample_interval_s}  # fmt: skip
            out["visibility"] = visibility(samples, self.lag_basis)
            out["series"] = [(round(t - self.began, 4), *rest) for t, *rest in samples]
        return out


def _main(plan: LoadPlan, conn: Any, stop: Any, parent: int) -> None:
    """The child's entry: end with the job (even a killed one), on the plan's cores."""
    from ingestbench.server.process import die_with_parent

    die_with_parent()
    if os.getppid() != parent:
        os._exit(1)
    with contextlib.suppress(KeyboardInterrupt):
        run(plan, conn, stop)
