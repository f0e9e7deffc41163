"""What one sample costs: the server's CPU per tables() query and the sampler's own, on an
embedded server with a 1M-row WAL table, 1,000 samples back to back."""
import pathlib, tempfile, time
import psutil, requests
from ingestbench.server.jar import fetch_jar
from ingestbench.server.process import embedded_server
from ingestbench.queryload.worker import SAMPLE_SQL
from tests.helpers import QUESTDB_VERSION

N = 1000
with embedded_server(fetch_jar(QUESTDB_VERSION), startup_timeout_s=300,
                     log_path=pathlib.Path(tempfile.mkdtemp()) / "s.log") as q:
    q.sql("CREATE TABLE cpu (v DOUBLE, ts TIMESTAMP) TIMESTAMP(ts) PARTITION BY DAY WAL")
    q.sql("INSERT INTO cpu SELECT x*1.0, dateadd('s', x::int, '2024-01-01') FROM long_sequence(1000000)")
    q.sql("SELECT wait_wal_table('cpu')")
    sql = SAMPLE_SQL.format(table="cpu")
    s = requests.Session()
    for _ in range(50):
        s.get(f"{q.url}/exec", params={"query": sql}).json()
    rounds = []
    for _ in range(3):
        idle0 = q.cpu_seconds(); time.sleep(5); idle = (q.cpu_seconds() - idle0) / 5
        srv0, me0, t0 = q.cpu_seconds(), time.thread_time(), time.monotonic()
        for _ in range(N):
            s.get(f"{q.url}/exec", params={"query": sql}).json()
        wall = time.monotonic() - t0
        server = q.cpu_seconds() - srv0 - idle * wall
        rounds.append((server / N * 1e3, (time.thread_time() - me0) / N * 1e3, wall / N * 1e3, idle))
    print("| round | server CPU ms per sample (idle subtracted) | sampler CPU ms per sample | latency ms | server idle CPU-s/s |")
    print("|---:|---:|---:|---:|---:|")
    for i, (a, b, c, d) in enumerate(rounds):
        print(f"| {i} | {a:.3f} | {b:.3f} | {c:.3f} | {d:.3f} |")
    med = sorted(r[0] for r in rounds)[1]; me = sorted(r[1] for r in rounds)[1]
    print(f"\nmedian: server {med:.3f} ms + sampler {me:.3f} ms of CPU per sample; at 10 samples/s "
          f"{(med + me) * 10 / 10:.2f} % of one core")
