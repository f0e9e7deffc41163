"""Run one variant's repeats against a server and build its run file (results.records)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import psutil
from tqdm import tqdm

from ingestbench.errors import UserError
from ingestbench.ingest.contention import Contention
from ingestbench.ingest.frames.readers import import_libraries
from ingestbench.ingest.methods import METHODS, Job
from ingestbench.ingest.timing import Clock, whole_file_end_to_end
from ingestbench.ingest.warmup import warm_up
from ingestbench.ingest.workers import child_pool
from ingestbench.results.records import END_TO_END_PHASES, PHASES, SCHEMA_VERSION
from ingestbench.server.deadline import Deadline
from ingestbench.server.table import disk_bytes, raise_send_cause, recreate_table, wait_visible

log = logging.getLogger(__name__)
HEARTBEAT_S = 10.0


def _rss(proc: psutil.Process) -> int:
    with contextlib.suppress(psutil.Error):  # a worker may just have exited
        return proc.memory_info().rss
    return 0


class PeakRss:
    """Samples peak resident memory of the client and, apart, of the embedded server.

    The client is the process `root_pid` (default: this one) and its descendants (process
    workers), without the server (`server_pid`, a child of this process when embedded) and its
    descendants. Memory is read every `interval_s`; the process tree, whose lookup walks every
    process on the machine (about 3 ms of CPU here, charged to the client it measures), only
    every `tree_interval_s`: workers start and stop rarely, and a new one grows from nothing.
    """

    def __init__(
        self,
        server_pid: int | None = None,
        interval_s: float = 0.02,
        root_pid: int | None = None,
        tree_interval_s: float = 0.25,
        apart: tuple[int, ...] = (),
    ):
        self.interval_s, self.server_pid, self.root_pid = interval_s, server_pid, root_pid
        self.apart = apart  # children that are not the client (the readers' process)
        self.tree_interval_s = tree_interval_s
        self.client = 0
        self.server: int | None = None if server_pid is None else 0
        self._client_tree: list[psutil.Process] = []
        self._server_tree: list[psutil.Process] = []
        self._tree_due = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _look_up_trees(self) -> bool:
        """Find the client's and the server's processes; False once the root has exited."""
        try:
            root = psutil.Process(self.root_pid)
            descendants = root.children(recursive=True)
        except psutil.Error:  # the root has exited: its peak stands
            return False
        server_tree: list[psutil.Process] = []
        if self.server_pid is not None:
            with contextlib.suppress(psutil.Error):
                server = psutil.Process(self.server_pid)
                server_tree = [server, *server.children(recursive=True)]
        left_out = {p.pid for p in server_tree} | set(self.apart)
        self._client_tree = [root, *(p for p in descendants if p.pid not in left_out)]
        self._server_tree = server_tree
        return True

    def _sample(self, look_up: bool = False) -> None:
        now = time.monotonic()
        if look_up or now >= self._tree_due:
            self._tree_due = now + self.tree_interval_s
            if not self._look_up_trees():
                return
        if self.server_pid is not None:
            self.server = max(self.server or 0, sum(_rss(p) for p in self._server_tree))
        self.client = max(self.client, sum(_rss(p) for p in self._client_tree))

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def __enter__(self) -> PeakRss:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample(look_up=True)


class Heartbeat:
    """Every `interval_s` while a repeat runs, say how long it has run and in which phase.

    Long repeats (the rows loop, small batches, big datasets) then show they are alive in the
    job's log (and on the progress bar); a sleeping thread costs the timed code nothing.
    """

    def __init__(self, label: str, clock: Clock, bar=None, interval_s: float | None = None):
        self.label, self.clock, self.bar = label, clock, bar
        self.interval_s = interval_s or HEARTBEAT_S
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        start = time.perf_counter()
        while not self._stop.wait(self.interval_s):
            elapsed = time.perf_counter() - start
            log.info("%s: %.0f s so far, %s", self.label, elapsed, self.clock.current)
            if self.bar is not None:
                self.bar.set_postfix(phase=self.clock.current, s=f"{elapsed:.0f}")

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def _client_cpu() -> float:
    t = psutil.Process().cpu_times()
    return t.user + t.system


@dataclasses.dataclass
class RepeatGuards:
    """What every repeat's tables are checked against (validate.repeat_checks): each table's
    checks of its source (`source` computes them, once, when the first repeat has read the data:
    a damaged file is then told by the variant's reader), and the tolerance for sums of doubles;
    how long its server may make no progress (server.deadline); what else runs on the machine."""

    source: Callable[[], dict[str, dict[str, Any]]]
    rel_tolerance: float
    deadline_s: float
    contention: Contention | None = None  # looked at before and after every repeat

    @functools.cached_property
    def expected(self) -> dict[str, dict[str, Any]]:
        # In a child process of its own: DuckDB's pass over the source would leave memory in
        # this one (its allocator keeps what it freed), and the later repeats' client peak RSS
        # would count the checker's memory as the client's.
        with child_pool() as child:
            return child.submit(self.source).result()

    def check(self, job: Job, index: int) -> None:
        from ingestbench.validate.repeat_checks import check_repeat

        parts = [(p.spec.table, p.spec) for p in job.tables if p.spec.table in self.expected]
        label = f"{job.variant.name} repeat {index}"
        check_repeat(job.qdb, parts, self.expected, label, self.rel_tolerance)


def run_repeat(
    job: Job, index: int, bar=None, guards: RepeatGuards | None = None, beside=None
) -> dict[str, Any]:
    """One timed ingestion into a freshly created table, then (untimed) its checks; within the
    guards' deadline when given. `beside` (a readers.load.QueryLoad) runs readers for the
    timed span, in a process whose CPU and memory are not the client's."""
    clock = Clock()
    label = f"{job.variant.name} repeat {index}"
    if guards is None:
        return _repeat(job, index, clock, label, bar, None, beside)
    if guards.contention is not None:
        guards.contention.look()
    with Deadline(
        job.qdb, guards.deadline_s, label, lambda: WAITING_FOR.get(clock.current, clock.current)
    ):
        return _repeat(job, index, clock, label, bar, guards, beside)


#: What a repeat waits for in each phase of its clock, in words.
WAITING_FOR = {
    "read": "its client to read the data file",
    "convert": "its client to convert the rows",
    "send": "the server to accept the rows",
    "visible": "the rows to become visible (the WAL applied)",
}


def _repeat(
    job: Job, index: int, clock: Clock, label: str, bar, guards: RepeatGuards | None, beside=None
) -> dict[str, Any]:
    method = METHODS[job.variant.method]()
    for part in job.tables:
        recreate_table(job.qdb, part.spec, dedup=job.dedup)
    with Heartbeat(label, clock, bar), beside or contextlib.nullcontext():
        server_cpu0, cpu0 = job.qdb.cpu_seconds(), _client_cpu()
        with PeakRss(job.qdb.pid, apart=beside.pids() if beside else ()) as rss:
            started = time.perf_counter()  # before the clock's start: elapsed spans every lap
            clock.restart()
            try:
                state = method.send_pass(job, clock)
            except UserError as exc:  # a suspended table or a full disk is the cause to tell
                raise_send_cause(job.qdb, [p.spec.table for p in job.tables])
                raise exc from None
            for part in job.tables:
                wait_visible(job.qdb, part.spec.table, part.rows)
            clock.lap("visible")
            elapsed = time.perf_counter() - started
            if beside is not None:  # the readers' window ends with the rows visible
                beside.stop()
        cpu1, server_cpu1 = _client_cpu(), job.qdb.cpu_seconds()
        # After the CPU readings: not charged.
        sizes = [disk_bytes(job.qdb, part.spec.table) for part in job.tables]
        table_bytes = None if None in sizes else sum(sizes)
        if guards is not None:
            guards.check(job, index)
            if guards.contention is not None:
                guards.contention.look()
        # The serialize pass runs apart, after the phases of end_to_end (ingestbench.ingest.timing),
        # so client CPU and peak RSS exclude it.
        clock.current = "serialize (the separate pass)"
        ilp_bytes, clock.phases["serialize"] = method.timed_serialize(job, state)
    client_cpu = cpu1 - cpu0 + (state.get("worker_cpu_s", 0.0) if isinstance(state, dict) else 0)
    phases = {p: round(clock.phases[p], 6) for p in PHASES}
    busy = sum(phases[p] for p in END_TO_END_PHASES)
    # Whole-file mode: the phases ran one after the other. Streamed: they overlapped, so end to
    # end is the wall time, and overlap says how much of the phases' busy time it hid.
    end_to_end = whole_file_end_to_end(phases, elapsed) if clock.wall is None else clock.wall
    return {
        "repeat": index,
        "cold": index == 0,
        "phases": phases,
        "end_to_end": round(end_to_end, 6),
        "overlap": round(busy / end_to_end, 4) if end_to_end > 0 else 1.0,
        "client_cpu_s": round(client_cpu, 3),
        "server_cpu_s": None if server_cpu0 is None else round(server_cpu1 - server_cpu0, 3),
        "client_rss_bytes": rss.client,
        "server_rss_bytes": rss.server,
        "table_disk_bytes": table_bytes,
        "ilp_bytes": ilp_bytes,
    }


def run_variant(
    job: Job,
    dataset: dict[str, Any],
    repeats: int,
    warmup_rows: int = 0,
    guards: RepeatGuards | None = None,
) -> dict:
    """An untimed warm-up (unless warmup_rows is 0), then all repeats, each checked and within
    a deadline when `guards` are given; the run-file document."""
    import_libraries(job.variant.library)
    guarded = contextlib.nullcontext()
    if guards is not None:
        guarded = Deadline(job.qdb, guards.deadline_s, f"{job.variant.name} warm-up",
                           lambda: "the warm-up's rows")  # fmt: skip
    with guarded:
        warmup = warm_up(job, warmup_rows, dataset.get("rows") or job.rows)
    results = []
    bar = tqdm(range(repeats), desc=job.variant.name, unit="repeat", disable=None)
    for i in bar:
        result = run_repeat(job, i, bar, guards)
        result["cold"] = result["cold"] and warmup is None  # a warm-up met the cold server
        results.append(result)
        log.info("repeat %d: %s, end_to_end %.3f s (%.0f rows/s)", i, result["phases"],
                 result["end_to_end"], job.rows / result["end_to_end"])  # fmt: skip
        bar.set_postfix(rows_per_s=f"{job.rows / result['end_to_end']:,.0f}")
    ilp_bytes = [r.pop("ilp_bytes") for r in results][-1]  # identical in every repeat
    # A method may fix the version itself (an ILP text file is version 1 whatever the config says).
    protocol = getattr(METHODS[job.variant.method], "protocol_version", job.protocol_version)
    return {
        "schema_version": SCHEMA_VERSION,
        "dataset": dataset,
        "variant": job.variant.to_dict(),
        "rows": job.rows,
        # keyed by the dataset's name of each table: what the validation checks each against
        "table_rows": {p.dataset_table: p.rows for p in job.tables},
        "ilp_bytes": ilp_bytes,
        "ilp_protocol_version": protocol if ilp_bytes is not None else None,
        "server": {"mode": "embedded" if job.qdb.pid else "external", "version": job.qdb.version()},
        "warmup": warmup,
        "repeats": results,
        **({"repeat_checks": sorted(guards.expected)} if guards and guards.expected else {}),
    }
