"""What one sample of the readers' sampler costs: the server's CPU per sample and the sampler's.

The sampler (ingestbench.readers) asks the server for a table's WAL state ten times a second
while readers run. Here it asks `--samples` times back to back against an idle 1M-row WAL table
on the config's server, in `--rounds` rounds; the server's idle CPU, measured for 5 s before
each round, is subtracted from what the round cost it.

    .venv/bin/python benchmarks/bench_sampler_cost.py   # or: make bench-sampler-cost
"""

from __future__ import annotations

import argparse
import statistics
import time

import requests
from _bench import REPO

from ingestbench.config import QuestDBSettings, load_config
from ingestbench.readers.sampler import SAMPLE_SQL
from ingestbench.server.configured import questdb_server

SAMPLES_PER_S = 10  # the sampler's rate while readers run


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--samples", type=int, default=1000, help="per round (default: 1000)")
    p.add_argument("--rounds", type=int, default=3, help="(default: 3)")
    p.add_argument("--rows", type=int, default=1_000_000, help="the table's (default: 1M)")
    a = p.parse_args()
    config = load_config(REPO / "config.yaml")
    with questdb_server(QuestDBSettings.from_config(config)) as q:
        q.sql("CREATE TABLE cpu (v DOUBLE, ts TIMESTAMP) TIMESTAMP(ts) PARTITION BY DAY WAL")
        q.sql("INSERT INTO cpu SELECT x * 1.0, dateadd('s', x::int, '2024-01-01') "
              f"FROM long_sequence({a.rows})")  # fmt: skip
        q.sql("SELECT wait_wal_table('cpu')")
        sql = SAMPLE_SQL.format(table="cpu")
        session = requests.Session()
        for _ in range(50):  # warm
            session.get(f"{q.url}/exec", params={"query": sql}).json()
        rounds = []
        for _ in range(a.rounds):
            idle0 = q.cpu_seconds()
            time.sleep(5)
            idle = (q.cpu_seconds() - idle0) / 5
            server0, own0, t0 = q.cpu_seconds(), time.thread_time(), time.monotonic()
            for _ in range(a.samples):
                session.get(f"{q.url}/exec", params={"query": sql}).json()
            wall = time.monotonic() - t0
            server = q.cpu_seconds() - server0 - idle * wall
            own = time.thread_time() - own0
            rounds.append((server / a.samples * 1e3, own / a.samples * 1e3,
                           wall / a.samples * 1e3, idle))  # fmt: skip
    print("| round | server CPU ms per sample (idle subtracted) | sampler CPU ms per sample | "
          "latency ms | server idle CPU-s/s |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|")
    for i, (server, own, latency, idle) in enumerate(rounds):
        print(f"| {i} | {server:.3f} | {own:.3f} | {latency:.3f} | {idle:.3f} |")
    server = statistics.median(r[0] for r in rounds)
    own = statistics.median(r[1] for r in rounds)
    # ms of CPU per sample times the samples a second, over 1,000 ms: percent of one core.
    share = (server + own) * SAMPLES_PER_S / 10
    print(f"\nmedian: server {server:.3f} ms + sampler {own:.3f} ms of CPU per sample; at "
          f"{SAMPLES_PER_S} samples/s {share:.2f} % of one core")  # fmt: skip


if __name__ == "__main__":
    main()
