"""The readers' process: N reader threads and the visibility sampler (sampler) over HTTP `/exec`.

Spawned by `load.QueryLoad`, it says "ready" once its threads run and the sampler has taken its
first sample (the window's baseline, before any row of the window is sent), runs until the
parent sets `stop`, then sends back what it saw: each query (kind, start, latency, error), each
sample, and its CPU time (the sampler's thread apart, so the readers' and the sampler's costs are
told apart). Light: it imports requests and the standard library only, so it starts quickly.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import requests

from ingestbench.readers.queries import QueryKind
from ingestbench.readers.sampler import KEPT_ERRORS, VisibilitySampler


@dataclass(frozen=True)
class LoadPlan:
    """What the readers' process does: where the server is, the table, the queries, how many
    readers at which rate (None: as fast as possible), how often the sampler looks, and the
    cores the process may use (None: any)."""

    url: str
    http_kwargs: dict[str, Any]
    table: str
    kinds: tuple[QueryKind, ...]
    readers: int
    rate_per_s: float | None
    sample_interval_s: float | None  # None: no sampler (the queries against a finished table)
    seed: int = 0
    cores: tuple[int, ...] | None = None


@dataclass
class ReaderLog:
    """One reader's queries as parallel lists (compact to send back), and how far it fell
    behind its schedule."""

    kind: list[int] = field(default_factory=list)  # index into the plan's kinds
    start: list[float] = field(default_factory=list)  # time.monotonic() at the query's start
    seconds: list[float] = field(default_factory=list)
    ok: list[bool] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # the first KEPT_ERRORS, word for word
    late: int = 0  # queries started more than one period after their slot


def _get(session: requests.Session, plan: LoadPlan, sql: str) -> tuple[bool, str, bytes]:
    """One query; (ok, error text, body). The body of an answered query is read whole (a
    dashboard reads its rows) but not parsed: parsing would be the reader's cost, not the
    server's."""
    try:
        r = session.get(f"{plan.url}/exec", params={"query": sql}, timeout=60, **plan.http_kwargs)
        body = r.content
    except requests.RequestException as exc:
        return False, f"{type(exc).__name__}: {exc}"[:300], b""
    if r.status_code != 200:
        return False, f"HTTP {r.status_code}: {body[:300].decode(errors='replace')}", body
    return True, "", body


def _reader(plan: LoadPlan, index: int, stop: threading.Event, log: ReaderLog) -> None:
    rng = random.Random(plan.seed * 1000 + index)
    period = 1.0 / plan.rate_per_s if plan.rate_per_s else 0.0
    n = len(plan.kinds)
    with requests.Session() as session:
        slot, i = time.monotonic(), index  # readers start on different kinds
        while not stop.is_set():
            if period:
                wait = slot - time.monotonic()
                if wait > 0 and stop.wait(wait):
                    break
                if time.monotonic() - slot > period:
                    log.late += 1
                # A late reader does not burst to catch up: its rate falls, and shows it.
                slot = max(slot + period, time.monotonic())
            k = i % n
            sql = plan.kinds[k].sql(rng)
            t0 = time.monotonic()
            ok, error, _ = _get(session, plan, sql)
            log.kind.append(k)
            log.start.append(t0)
            log.seconds.append(time.monotonic() - t0)
            log.ok.append(ok)
            if not ok and len(log.errors) < KEPT_ERRORS:
                log.errors.append(f"{plan.kinds[k].name}: {error}")
            i += 1


def run(plan: LoadPlan, conn: Any, stop: Any) -> None:
    """The process's main: threads up, "ready", run until `stop`, then send the logs back."""
    if plan.cores:
        import os

        os.sched_setaffinity(0, plan.cores)
    halt = threading.Event()
    logs = [ReaderLog() for _ in range(plan.readers)]
    threads = [threading.Thread(target=_reader, args=(plan, i, halt, log), daemon=True)
               for i, log in enumerate(logs)]  # fmt: skip
    sampler = None
    if plan.sample_interval_s:
        sampler = VisibilitySampler(plan.url, plan.http_kwargs, plan.table, plan.sample_interval_s)
    cpu0 = time.process_time()
    if sampler is not None:
        sampler.start()
    for thread in threads:
        thread.start()
    # Ready once the baseline sample is in: a transaction committed before it would otherwise
    # be neither seen committed nor counted (a slow start on a busy machine missed them all).
    if sampler is not None:
        sampler.first.wait()
    conn.send("ready")
    stop.wait()
    halt.set()
    if sampler is not None:
        sampler.stop()
    for thread in threads:
        thread.join()
    cpu_s = time.process_time() - cpu0
    conn.send({"readers": [vars(log) for log in logs], "sampler": _sampled(sampler),
               "cpu_s": cpu_s})  # fmt: skip
    conn.close()


def _sampled(sampler: VisibilitySampler | None) -> dict[str, Any]:
    """What the parent gets of the samples: (time, rows accepted, rows visible, sequencer txn,
    writer txn) each, dated by its query's start, as the lag and the series read them."""
    if sampler is None:
        return {}
    samples = [(s.start, s.visible + s.pending, s.visible, s.sequencer_txn, s.writer_txn)
               for s in sampler.samples]  # fmt: skip
    return {"samples": samples, "failed": sampler.failed, "errors": sampler.errors,
            "cpu_s": sampler.cpu_s}  # fmt: skip
