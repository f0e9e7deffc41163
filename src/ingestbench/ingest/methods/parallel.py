"""Several senders at once: threads in this process, or spawned worker processes.

The worker functions are module-level on purpose: spawned processes import them by name.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from questdb import Sender

from ingestbench.columnar.arrow import to_pandas
from ingestbench.ingest.frames.readers import import_libraries, read_frame
from ingestbench.ingest.methods.base import (
    STREAMED,
    Busy,
    Job,
    Method,
    SendError,
    client_errors,
    cpu_seconds,
    dataframe_into,
    read_whole,
    row_ranges,
    serialized_bytes,
    stream_chunks,
)
from ingestbench.ingest.methods.experiments import (
    ResendLoad,
    close_politely,
    dataframe_batch,
    ilp_resender,
)
from ingestbench.ingest.timing import Clock
from ingestbench.ingest.workers import collect, gather, watched
from ingestbench.tables.spec import TableSpec


class Threads(Method):
    """N threads, one sender each (serialization releases the GIL). Streamed: each thread takes
    the next chunk of one stream when it is free, so rows reach the server close to time order.
    Whole-file: contiguous row ranges, one per thread."""

    def send_frame(self, job: Job, spec: TableSpec, frame) -> None:
        """A contiguous share of the frame per thread, each on its own sender."""
        parts = [frame[o : o + n] for o, n in row_ranges(len(frame), job.variant.workers)]
        with ThreadPoolExecutor(len(parts)) as pool:
            list(pool.map(lambda part: super(Threads, self).send_frame(job, spec, part), parts))

    def stream_pass(self, job: Job, clock: Clock) -> dict[str, Any]:
        with contextlib.ExitStack() as stack:
            with client_errors(job, "connecting"):
                senders = [
                    stack.enter_context(Sender.from_conf(job.conf()))
                    for _ in range(job.variant.workers)
                ]
            clock.start_wall()  # connecting is outside every phase; the file opens now
            clock.current = "send"
            chunks = stack.enter_context(stream_chunks(job, clock, to_pandas))

            def send(sender):
                try:
                    with client_errors(job, "sending"):
                        while (item := chunks.get()) is not None:
                            with Busy(clock, "send"):
                                dataframe_into(sender, item[1], item[0])
                        with Busy(clock, "send"):
                            sender.flush()
                except BaseException:
                    chunks.close()  # stop reading; the other threads see the end
                    raise

            with ThreadPoolExecutor(len(senders)) as pool:
                try:
                    list(pool.map(send, senders))
                except BaseException:
                    # SIGTERM or Ctrl-C lands here, in the main thread: end the stream, or the
                    # pool's exit would wait for the threads to send the rest of the file.
                    chunks.close()
                    raise
            clock.restart()  # visible starts when the last flush returned
        return {STREAMED: True}

    def send_pass(self, job: Job, clock: Clock) -> Any:
        if job.variant.chunk_rows is not None:
            return self.stream_pass(job, clock)
        frames = []
        for part in job.tables:
            frames.append((part.spec, read_whole(job, part)))
            clock.lap("read")
        frames = [(spec, to_pandas(frame)) for spec, frame in frames]
        # Worker i takes the i-th contiguous row range of every table.
        n = job.variant.workers
        parts = [[] for _ in range(n)]
        for spec, frame in frames:
            for i, (o, rows) in enumerate(row_ranges(len(frame), n)):
                parts[i].append((spec, frame.iloc[o : o + rows]))
        parts = [p for p in parts if p]
        clock.lap("convert")
        with contextlib.ExitStack() as stack:
            with client_errors(job, "connecting"):
                senders = [stack.enter_context(Sender.from_conf(job.conf())) for _ in parts]
            clock.restart()  # connecting is outside every phase

            def send(sender, part):
                with client_errors(job, "sending"):
                    for spec, frame in part:
                        dataframe_into(sender, frame, spec)
                    sender.flush()

            with ThreadPoolExecutor(len(parts)) as pool:
                list(pool.map(send, senders, parts))
            clock.lap("send")
        return parts

    def serialize_pass(self, job: Job, state: Any) -> int:
        with ThreadPoolExecutor(len(state)) as pool:
            return sum(pool.map(lambda part: serialized_bytes(job, part), state))


def process_worker(job: Job, ranges: list[tuple[int, int]], barrier, results) -> None:
    """One process: connect, then read its rows (the (offset, length) range of each table),
    send them, serialize them, phase by phase."""
    try:
        import_libraries(job.variant.library)  # before the clock starts, as in the parent
        with Sender.from_conf(job.conf()) as sender:
            cpu0 = cpu_seconds()
            barrier.wait()  # all connected: the clock starts
            v = job.variant
            frames = [
                (part.spec, read_frame(part.path, v.library, v.format, offset, length,
                                       spec=part.spec))
                for part, (offset, length) in zip(job.tables, ranges, strict=True)
            ]  # fmt: skip
            barrier.wait()  # read
            frames = [(spec, to_pandas(frame)) for spec, frame in frames]
            barrier.wait()  # convert
            for spec, frame in frames:
                dataframe_into(sender, frame, spec)
            sender.flush()
            barrier.wait()  # send
            cpu1 = cpu_seconds()
        t0 = time.perf_counter()
        nbytes = serialized_bytes(job, frames)
        results.put(("ok", cpu1 - cpu0, nbytes, time.perf_counter() - t0))
    except BaseException as exc:  # report, and let the others through the barrier
        barrier.abort()
        results.put(("error", f"{type(exc).__name__}: {exc}", None, None))


def stream_worker(job: Job, chunks, results) -> None:
    """One process: connect and say so, then send the chunks the parent queues until None;
    report the CPU and the busy seconds of sending. Messages, not a barrier: a barrier's shared
    lock can be left held by a worker killed inside it, and then nobody gets through."""
    try:
        import_libraries(job.variant.library)  # before the clock starts, as in the parent
        with Sender.from_conf(job.conf()) as sender:
            cpu0, busy = cpu_seconds(), 0.0
            results.put(("ready", None, None, None))  # the parent starts the clock on all
            while (item := chunks.get()) is not None:
                t0 = time.perf_counter()
                dataframe_into(sender, item[1], item[0])
                busy += time.perf_counter() - t0
            t0 = time.perf_counter()
            sender.flush()
            busy += time.perf_counter() - t0
            cpu1 = cpu_seconds()
        results.put(("ok", cpu1 - cpu0, busy, None))
    except BaseException as exc:  # report; the parent stops waiting for this worker
        results.put(("error", f"{type(exc).__name__}: {exc}", None, None))


class _WorkerGone(Exception):
    pass


class Processes(Method):
    """N processes, one sender each. Streamed: the parent reads and converts the chunks and
    queues them (a pickled chunk costs a copy, far less than serializing it); each worker takes
    the next chunk when it is free, so rows reach the server close to time order. Whole-file:
    each worker reads its own row range of the file."""

    def stream_pass(self, job: Job, clock: Clock) -> dict[str, Any]:
        ctx = mp.get_context("spawn")  # fork is unsafe with pyarrow/polars thread pools
        n = job.variant.workers
        queue_ = ctx.Queue(maxsize=n)  # chunks in flight: bounded, so memory is too
        results = ctx.Queue()
        procs = [
            ctx.Process(target=stream_worker, args=(job, queue_, results), daemon=True)
            for _ in range(n)
        ]
        for p in procs:
            p.start()

        def put(item) -> None:  # wait for room, but not for a worker that is gone
            while True:
                try:
                    return queue_.put(item, timeout=0.2)
                except queue.Full:
                    if any(p.exitcode is not None for p in procs):
                        raise _WorkerGone from None

        def all_ready(messages) -> bool:
            kinds = [m[0] for m in messages]
            return kinds.count("ready") == n or "error" in kinds

        def all_done(messages) -> bool:
            return sum(m[0] != "ready" for m in messages) == n

        messages: list[tuple] = []
        try:
            with watched(procs):
                started = gather(procs, results, messages, all_ready, timeout_s=600)
                if started and "error" not in [m[0] for m in messages]:
                    clock.start_wall()  # all workers connected: the file opens now
                    clock.current = "send"
                    try:
                        with stream_chunks(job, clock, to_pandas) as chunks:
                            for chunk in chunks:
                                put(chunk)
                        for _ in procs:
                            put(None)
                    except _WorkerGone:
                        pass  # a worker failed or died; its message follows
                else:
                    for _ in procs:  # a worker failed to start: let the others end
                        with contextlib.suppress(queue.Full):
                            queue_.put_nowait(None)
                gather(procs, results, messages, all_done, timeout_s=600)
                outcomes = self._outcomes(job, procs, [m for m in messages if m[0] != "ready"])
            clock.add("send", sum(o[2] for o in outcomes))
            clock.restart()  # visible starts when every worker's last flush returned
        finally:
            queue_.cancel_join_thread()  # never block exit on chunks nobody will take
        return {STREAMED: True, "worker_cpu_s": sum(o[1] for o in outcomes)}

    @staticmethod
    def _outcomes(job: Job, procs, outcomes: list[tuple] | None) -> list[tuple]:
        """Every worker's report; a SendError naming the first failure or a worker that died."""
        if outcomes is None or len(outcomes) < len(procs):  # a worker died without reporting
            codes = [p.exitcode for p in procs]
            raise SendError(
                f"{job.variant.name}: a worker process died without a word (exit codes {codes}); "
                f"check memory and the server log, then rerun this job."
            )
        errors = [o[1] for o in outcomes if o[0] == "error"]
        if errors:
            raise SendError(
                f"{job.variant.name}: a worker process failed ({errors[0][:300]}); check the "
                f"server log and the input file, then rerun this job."
            )
        return outcomes

    def send_pass(self, job: Job, clock: Clock) -> Any:
        if job.variant.chunk_rows is not None:
            return self.stream_pass(job, clock)
        ctx = mp.get_context("spawn")  # fork is unsafe with pyarrow/polars thread pools
        n = job.variant.workers
        # Worker i reads the i-th contiguous row range of every table (empty past a table's end).
        per_table = [row_ranges(part.rows, n) for part in job.tables]
        ranges = [[r[i] if i < len(r) else (0, 0) for r in per_table] for i in range(n)]
        ranges = [r for r in ranges if any(length for _o, length in r)]
        barrier, results = ctx.Barrier(len(ranges) + 1, timeout=600), ctx.Queue()
        procs = [
            ctx.Process(target=process_worker, args=(job, r, barrier, results), daemon=True)
            for r in ranges
        ]
        for p in procs:
            p.start()
        with watched(procs, barrier):
            try:
                barrier.wait()  # all workers started, imported and connected
                clock.restart()
                for phase in ("read", "convert", "send"):
                    barrier.wait()
                    clock.lap(phase)
            except threading.BrokenBarrierError:
                pass  # a worker failed or died; its message follows
            outcomes = self._outcomes(job, procs, collect(procs, results, timeout_s=600))
        return {
            "worker_cpu_s": sum(o[1] for o in outcomes),
            "ilp_bytes": sum(o[2] for o in outcomes),
            "serialize_s": max(o[3] for o in outcomes),  # the workers serialize in parallel
        }

    def timed_serialize(self, job: Job, state: Any) -> tuple[int | None, float]:
        if state.get(STREAMED):
            return self.streamed_serialize(job)
        return state["ilp_bytes"], state["serialize_s"]  # done by the workers, after sending


def deliver_threads(load: ResendLoad) -> None:
    """Delivery: `workers` threads, each with its own sender, each taking the next batch."""
    batches = iter(load.batches())
    lock = threading.Lock()
    failures: list[BaseException] = []

    def worker() -> None:
        conn = ilp_resender(load)
        try:
            while not failures:
                with lock:
                    item = next(batches, None)
                    if item is None:
                        break
                load.sending(item[0], len(item[1]))
                conn.send(dataframe_batch(load, item[1]))
            close_politely(conn)
        except BaseException as exc:  # noqa: BLE001 (handed to the main thread)
            failures.append(exc)
        finally:
            conn.close()

    threads = [threading.Thread(target=worker) for _ in range(load.settings.workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise failures[0]
