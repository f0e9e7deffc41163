"""Where the client's CPU goes, sampled by perf: one client path end to end, by thread and work.

The variant (default: pandas `vectorized`, 2 TCP connections) runs as bench-client-cpu runs it
end to end: 1M rows from Parquet against a fresh QuestDB, warmed up, then --repeats timed
repeats through the workflow's own `run_repeat` (the separate serialize pass, which the client's
CPU figure leaves out, is skipped). The run is recorded by `perf record` (on-CPU samples at
997 Hz, with call chains, the kernel's included), and the samples this Python process took
while the repeats ran are sorted two ways (the JVM's are left out):

- by thread: the workers that encode and send, the chunk reader, the peak-RSS sampler, and the
  main thread (waiting for rows to be visible); each thread gives the kernel the name of the
  function it runs, so that perf can tell them apart;
- by work, from the call chain: page faults (fresh memory being zeroed), socket sends, file
  reads, Parquet decoding, Arrow joins and takes, Arrow <-> pandas conversion, NumPy, code
  compiled by numba, the Python interpreter, libc (memcpy, malloc), the scheduler.

Needs perf (Debian: linux-perf) and the right to sample (root, or kernel.perf_event_paranoid at
most 1).

    .venv/bin/python benchmarks/bench_client_perf.py   # or: make bench-client-perf
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _bench import bench_parser, medians, variant_arguments, warm_job

#: A sample taken in anonymous executable memory, which perf shows as a JIT's (perf-<pid>.map):
#: in this process, numba's compiled functions (the JVM's samples are another process's).
NUMBA_LEAF = "LEAF:[unknown] (/tmp/perf-"
#: Kinds of work, by what a sample's call chain holds: the first that matches names it.
WORK = (
    ("page faults (fresh memory)", ("page_fault",)),
    ("socket send", ("sendto", "sendmsg")),
    ("socket receive (HTTP replies)", ("recvfrom", "__libc_recv")),
    ("file reads", ("ksys_read", "ksys_pread", "filemap_read")),
    ("Parquet decoding", ("parquet::", "libparquet", "snappy", "ZSTD")),
    ("Arrow joins", ("BinaryJoinElementWise",)),
    ("Arrow takes", ("Take",)),
    ("Arrow <-> pandas", ("libarrow_python",)),
    ("Arrow compute, other", ("libarrow_compute",)),
    ("Arrow core (copies, concatenation)", ("libarrow.so",)),
    ("NumPy", ("_multiarray_umath",)),
    ("code compiled by numba", (NUMBA_LEAF,)),
    ("scheduler, locks", ("futex", "schedule", "sched_yield")),
    ("Python interpreter", ("libpython",)),
    ("libc (memcpy, malloc)", ("libc.so",)),
)
#: Thread roles, by the function a thread runs (the name it gives the kernel, cut to 15 bytes).
ROLES = {
    "_worker": "workers",  # the method's pool threads (vectorized: encode and send)
    "ChunkStream._ru": "chunk reader",
    "PeakRss._run": "RSS sampler",
    "Heartbeat._run": "heartbeat",
}


def main() -> None:
    p = bench_parser(__doc__)
    variant_arguments(p, repeats=5)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        return run_repeats(a)
    perf = shutil.which("perf")
    if perf is None:
        sys.exit(
            "perf is not installed; install it (Debian: apt-get install linux-perf), then rerun."
        )
    with tempfile.TemporaryDirectory(prefix="ingestbench-perf-") as tmp:
        data = Path(tmp) / "perf.data"
        child = [sys.executable, __file__, "--child", *sys.argv[1:]]
        record = [perf, "record", "-k", "CLOCK_MONOTONIC", "-F", "997", "-g", "-q", "-o", str(data)]
        done = subprocess.run([*record, "--", *child], capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"perf record failed (exit code {done.returncode}): "
                     f"{(done.stderr or done.stdout).strip()[-600:]}; perf needs root or "
                     f"kernel.perf_event_paranoid at most 1.")  # fmt: skip
        window = re.search(r"^WINDOW (\S+)$", done.stdout, re.MULTILINE)
        pid = int(re.search(r"^PID (\d+)$", done.stdout, re.MULTILINE).group(1))
        summary = re.search(r"^SUMMARY (.+)$", done.stdout, re.MULTILINE)
        script = subprocess.run(
            [perf, "script", "-i", str(data), "--time", window.group(1), "-F",
             "comm,pid,tid,ip,sym,dso"], capture_output=True, text=True, check=True,
        )  # fmt: skip
    samples = process_samples(script.stdout, pid)
    print(f"\n{a.variant}, {a.field_type} fields: {summary.group(1)}")
    print(f"perf, 997 Hz: {len(samples)} on-CPU samples of the client process in {a.repeats} "
          f"repeats ({len(samples) / 997 / a.repeats:.2f} CPU-s per repeat)\n")  # fmt: skip
    report(samples)


def run_repeats(a) -> None:
    """In the child process perf records: warm up, then the timed repeats between two marks."""
    name_threads_for_the_kernel()
    from ingestbench.ingest.methods import METHODS
    from ingestbench.ingest.runner import run_repeat

    with warm_job(a) as (params, job):
        METHODS[job.variant.method].timed_serialize = lambda self, job, state: (0, 0.0)
        start = time.clock_gettime(time.CLOCK_MONOTONIC)
        results = [run_repeat(job, i) for i in range(a.repeats)]
        end = time.clock_gettime(time.CLOCK_MONOTONIC)
    rate, client, server = medians(results, params.rows)
    print(f"PID {os.getpid()}")
    print(f"WINDOW {start:.6f},{end:.6f}")
    print(f"SUMMARY {params.rows:,} rows, {rate:,.0f} rows/s, client {client:.2f} and server "
          f"{server:.2f} CPU-s per 1M rows (medians, without perf: bench-client-cpu)")  # fmt: skip


def name_threads_for_the_kernel() -> None:
    """Every thread started from now on names itself after the function it runs (PR_SET_NAME),
    where the kernel, and so perf, shows it; Python 3.11 leaves them all "python"."""
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    run = threading.Thread.run

    def named_run(self) -> None:
        target = getattr(self, "_target", None)
        name = getattr(target, "__qualname__", type(self).__name__)
        prctl(15, name.encode()[:15], 0, 0, 0)  # PR_SET_NAME
        run(self)

    threading.Thread.run = named_run


def process_samples(script: str, pid: int) -> list[tuple[str, str]]:
    """(thread role, the call chain as one string) of each sample of process `pid`."""
    header = re.compile(r"^(.*?)\s+(\d+)/(\d+)\s*$")
    samples = []
    for block in script.split("\n\n"):
        lines = [line.strip() for line in block.strip().splitlines() if line.strip()]
        m = header.match(lines[0]) if lines else None
        if m is None or int(m.group(2)) != pid:
            continue
        comm = m.group(1).strip()
        leaf = lines[1].split(maxsplit=1)[-1] if len(lines) > 1 else ""
        chain = " ".join([f"LEAF:{leaf}", *lines[1:]])
        samples.append((ROLES.get(comm, "main thread, other"), chain))
    return samples


def work_of(chain: str) -> str:
    return next((name for name, keys in WORK if any(k in chain for k in keys)), "other")


def report(samples: list[tuple[str, str]]) -> None:
    total = len(samples) or 1
    by_role = collections.Counter(role for role, _ in samples)
    print(f"{'thread':<28}{'share':>7}")
    for name, n in by_role.most_common():
        print(f"{name:<28}{n / total:>7.1%}")
    print(f"\n{'work':<38}{'share':>7}")
    by_work = collections.Counter(work_of(chain) for _, chain in samples)
    for name, n in by_work.most_common():
        print(f"{name:<38}{n / total:>7.1%}")
    print("\nthe kinds of work of each thread, as shares of all samples:")
    for name, _ in by_role.most_common():
        kinds = collections.Counter(work_of(c) for role, c in samples if role == name)
        print(f"  {name}: " + ", ".join(f"{k} {n / total:.1%}" for k, n in kinds.most_common(6)))


if __name__ == "__main__":
    main()
