"""A whole workflow run, watched: its wall time, peak disk use and peak RSS (servers apart).

Runs `snakemake --cores N [ARGS...]` in this checkout or `--workdir` (`make bench-run-scale`
passes `--configfile configs/scale.yaml`) and samples once a second:

- client RSS: Snakemake and every process under it except the QuestDB servers (java) and their
  children, summed (jobs of one run overlap: this is the whole workflow's memory, not one job's);
- server RSS: the QuestDB servers' own, summed;
- disk: used bytes of the file systems of the workflow's directory and of the temporary
  directory (where the embedded servers keep their data), above what they used at the start.

A run longer than one sitting can be stopped (Ctrl-C or SIGTERM: Snakemake is told to stop and
removes what its running jobs left half-written) and started again with the same arguments:
each sitting appends one line to the CSV (`--csv`), and the printed totals add up every line
of the same `--label` (default: the same arguments), so the wall time of a resumed run is the
sum of its sittings.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import psutil
from findings import findings_file

REPO = Path(__file__).resolve().parents[1]
GIB = 1 << 30
FIELDS = ["started", "label", "exit", "wall_s", "client_rss_gib", "server_rss_gib", "disk_gib"]


def _is_server(proc: psutil.Process) -> bool:
    with contextlib.suppress(psutil.Error):
        return proc.name() == "java"
    return False


def _used_bytes(paths: list[Path]) -> int:
    """Used bytes of the distinct file systems holding `paths`."""
    seen, used = set(), 0
    for path in paths:
        st = os.statvfs(path)
        key = os.stat(path).st_dev
        if key not in seen:
            seen.add(key)
            used += (st.f_blocks - st.f_bfree) * st.f_frsize
    return used


class Watch:
    """Peaks of one process tree's RSS (servers apart) and of disk use, sampled on a thread."""

    def __init__(self, root_pid: int, paths: list[Path], interval_s: float = 1.0):
        self.root_pid, self.paths, self.interval_s = root_pid, paths, interval_s
        self.disk0 = _used_bytes(paths)
        self.client = self.server = self.disk = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        try:
            root = psutil.Process(self.root_pid)
            tree = [root, *root.children(recursive=True)]
        except psutil.Error:
            return
        servers = {p.pid for p in tree if _is_server(p)}
        for p in tree:  # a server's children belong to it
            with contextlib.suppress(psutil.Error):
                if p.ppid() in servers:
                    servers.add(p.pid)
        client = server = 0
        for p in tree:
            with contextlib.suppress(psutil.Error):
                rss = p.memory_info().rss
                if p.pid in servers:
                    server += rss
                else:
                    client += rss
        self.client, self.server = max(self.client, client), max(self.server, server)
        self.disk = max(self.disk, _used_bytes(self.paths) - self.disk0)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def run(workdir: Path, cores: str, args: list[str], label: str) -> dict:
    cmd = [sys.executable, "-m", "snakemake", "--cores", cores, "--rerun-incomplete", *args]
    print("bench_run:", " ".join(cmd[2:]), flush=True)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=workdir)
    # Ctrl-C reaches Snakemake too (same process group); SIGTERM is passed on to it.
    signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
    with Watch(proc.pid, [workdir, Path(tempfile.gettempdir())]) as watch:
        while True:
            try:
                code = proc.wait()
                break
            except KeyboardInterrupt:
                continue  # Snakemake got the Ctrl-C too: wait for it to wind down
    return {
        "started": started,
        "label": label,
        "exit": code,
        "wall_s": round(time.perf_counter() - t0, 1),
        "client_rss_gib": round(watch.client / GIB, 2),
        "server_rss_gib": round(watch.server / GIB, 2),
        "disk_gib": round(watch.disk / GIB, 1),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cores", default="all", help="Snakemake's --cores (default: all)")
    p.add_argument("--workdir", type=Path, default=REPO, help="the workflow (default: here)")
    p.add_argument("--csv", type=Path, help="default: results/benchmarks/bench_run.csv there")
    p.add_argument("--label", help="sittings of one run share it (default: the arguments)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="more Snakemake arguments")
    a = p.parse_args()
    args = a.args[1:] if a.args[:1] == ["--"] else a.args
    row = run(a.workdir, a.cores, args, a.label or " ".join(args))
    a.csv = a.csv or findings_file("run.csv", a.workdir / "results/benchmarks/bench_run.csv")
    a.csv.parent.mkdir(parents=True, exist_ok=True)
    new = not a.csv.exists()
    with open(a.csv, "a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        if new:
            writer.writeheader()
        writer.writerow(row)
    with open(a.csv, newline="") as fh:
        sittings = [r for r in csv.DictReader(fh) if r["label"] == row["label"]]
    print(f"\n{'started':<26}{'exit':>5}{'wall':>10}{'client RSS':>12}{'server RSS':>12}"
          f"{'disk':>11}")  # fmt: skip
    for r in sittings:
        wall_min = float(r["wall_s"]) / 60
        print(f"{r['started']:<26}{r['exit']:>5}{wall_min:>8.1f} m{r['client_rss_gib']:>8} GiB"
              f"{r['server_rss_gib']:>8} GiB{r['disk_gib']:>6} GiB")  # fmt: skip
    total = sum(float(r["wall_s"]) for r in sittings)
    peaks = {k: max(float(r[k]) for r in sittings) for k in FIELDS[4:]}
    print(f"{len(sittings)} sitting(s): {total / 60:.1f} min in all; peaks: client RSS "
          f"{peaks['client_rss_gib']} GiB, server RSS {peaks['server_rss_gib']} GiB, disk "
          f"{peaks['disk_gib']} GiB")  # fmt: skip
    sys.exit(row["exit"])


if __name__ == "__main__":
    main()
