"""What one sample of the readers' sampler costs: the server's CPU per `tables()` query (its idle
CPU subtracted) and the sampler's own, 1,000 samples back to back against an idle 1M-row WAL
table, three rounds. Run from the checkout: `PYTHONPATH=. .venv/bin/python <this file>`."""

import pathlib
import tempfile
import time

import requests
from tests.helpers import QUESTDB_VERSION

from ingestbench.queryload.worker import SAMPLE_SQL
from ingestbench.server.jar import fetch_jar
from ingestbench.server.process import embedded_server

N = 1000


def main() -> None:
    log = pathlib.Path(tempfile.mkdtemp()) / "server.log"
    with embedded_server(fetch_jar(QUESTDB_VERSION), startup_timeout_s=300, log_path=log) as q:
        q.sql("CREATE TABLE cpu (v DOUBLE, ts TIMESTAMP) TIMESTAMP(ts) PARTITION BY DAY WAL")
        q.sql("INSERT INTO cpu SELECT x * 1.0, dateadd('s', x::int, '2024-01-01') "
              "FROM long_sequence(1000000)")  # fmt: skip
        q.sql("SELECT wait_wal_table('cpu')")
        sql = SAMPLE_SQL.format(table="cpu")
        session = requests.Session()
        for _ in range(50):  # warm
            session.get(f"{q.url}/exec", params={"query": sql}).json()
        rounds = []
        for _ in range(3):
            idle0 = q.cpu_seconds()
            time.sleep(5)
            idle = (q.cpu_seconds() - idle0) / 5
            server0, own0, t0 = q.cpu_seconds(), time.thread_time(), time.monotonic()
            for _ in range(N):
                session.get(f"{q.url}/exec", params={"query": sql}).json()
            wall = time.monotonic() - t0
            server = q.cpu_seconds() - server0 - idle * wall
            own = time.thread_time() - own0
            rounds.append((server / N * 1e3, own / N * 1e3, wall / N * 1e3, idle))
    print("| round | server CPU ms per sample (idle subtracted) | sampler CPU ms per sample | "
          "latency ms | server idle CPU-s/s |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|")
    for i, (server, own, latency, idle) in enumerate(rounds):
        print(f"| {i} | {server:.3f} | {own:.3f} | {latency:.3f} | {idle:.3f} |")
    server = sorted(r[0] for r in rounds)[1]
    own = sorted(r[1] for r in rounds)[1]
    # ms of CPU per sample times 10 samples a second, over 1,000 ms: percent of one core.
    print(f"\nmedian: server {server:.3f} ms + sampler {own:.3f} ms of CPU per sample; at 10 "
          f"samples/s {server + own:.2f} % of one core")  # fmt: skip


if __name__ == "__main__":
    main()
