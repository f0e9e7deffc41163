"""The rows loop, dataframe() and the server's own ceiling, measured in one run on one server.

Can pandas `dataframe()` over HTTP send 25x the rows/s of the pandas rows loop (about the ratio
QuestDB's blog reports)? Whether that is reachable on a machine depends on how fast the server
takes ILP at all, so this benchmark measures, against one QuestDB started as `config.yaml` says
(a fresh embedded one by default) and with the workflow's own methods and timing boundaries
(rows/s of the `send` phase, medians of the repeats, interleaved):

- `rows loop`: pandas `itertuples` + `sender.row()` over HTTP, on the first --loop-rows rows;
- `dataframe`: one `sender.dataframe()` over HTTP (auto-flush every 75,000 rows);
- `ceiling`: the same rows serialized beforehand (untimed) into 75,000-row buffers, then only
  flushed: what a client that spends no time at all serializing would reach here, over HTTP with
  one and two connections and over TCP with one and two, in ILP protocol version 2 (binary
  doubles) and version 1 (text doubles, the same wire format as the ILP text file);
- `ilp_file`: the workflow's own wire-ceiling variant, the dataset's ILP text file (TSBS's
  `--format=questdb` lines, text doubles, ~490 B/row against ~355 for the buffers' binary
  doubles) sent as it is over TCP with one and two connections and over HTTP with one. The last
  lines set `ilp_file` beside the pre-serialized buffers with the same transport and connections:
  the version 1 buffers are the like-for-like reference (the server parses text doubles for both),
  the version 2 ones show what binary doubles add.

It prints each rate, its ratio to the rows loop and the server's CPU seconds per 1M rows (over
send and WAL apply; it grows with the time a case takes, not only with its rows, so slow cases
show more), so the ratio the 25x target needs can be held against what the server allows here.

    .venv/bin/python benchmarks/bench_ceiling.py            # or: make bench-ceiling
"""

from __future__ import annotations

import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _bench import TABLE, bench_parser, dataset_and_server
from questdb import Sender

from ingestbench.ingest.methods import cpu_job, dataframe_into, read_whole
from ingestbench.ingest.runner import run_repeat
from ingestbench.server.handle import QuestDB
from ingestbench.server.table import recreate_table, wait_visible
from ingestbench.variants import Variant, parse_variant_name

AUTO_FLUSH_ROWS = 75_000  # the client's HTTP default, so the ceiling sends the same requests
PAIRS = (("http", 1), ("http", 2), ("tcp", 1), ("tcp", 2))  # (transport, connections)
CEILING_VERSIONS = {1: "v1 text", 2: "v2 binary"}  # ILP protocol version: how doubles travel


def ceiling_case(transport: str, connections: int, version: int) -> str:
    pair = f"{transport.upper()} x{connections}"
    return f"ceiling: pre-serialized {CEILING_VERSIONS[version]}, {pair}"


def workflow_send_rate(
    qdb: QuestDB, path: Path, method: str, rows: int, version: int
) -> tuple[float, float]:
    """(rows/s of the send phase, server CPU-s per 1M rows) of one repeat of a workflow method."""
    job = cpu_job(
        qdb,
        TABLE,
        Variant("pandas", method, "parquet", "http"),
        path,
        rows,
        version,
        field_type="double",
    )
    result = run_repeat(job, 1)  # send, then wait until visible; server CPU spans both
    return rows / result["phases"]["send"], (result["server_cpu_s"] or 0.0) * 1e6 / rows


def ilp_file_send_rate(
    qdb: QuestDB, path: Path, transport: str, connections: int, rows: int
) -> tuple[float, float]:
    """(rows/s of the send phase, server CPU-s per 1M rows) of one repeat of `ilp_file`."""
    variant = parse_variant_name(f"none-ilp_file-ilp-{transport}-w{connections}")
    result = run_repeat(cpu_job(qdb, TABLE, variant, path, rows, field_type="double"), 1)
    return rows / result["phases"]["send"], (result["server_cpu_s"] or 0.0) * 1e6 / rows


def serialized_buffers(qdb: QuestDB, path: Path, transport: str, rows: int, version: int) -> list:
    """The file's rows as ILP buffers of AUTO_FLUSH_ROWS rows each."""
    variant = Variant("pandas", "dataframe", "parquet", transport)
    job = cpu_job(qdb, TABLE, variant, path, rows, version, field_type="double")
    frame = read_whole(job)
    with Sender.from_conf(job.conf()) as sender:
        buffers = []
        for start in range(0, len(frame), AUTO_FLUSH_ROWS):
            buf = sender.new_buffer()
            dataframe_into(buf, frame.iloc[start : start + AUTO_FLUSH_ROWS], job.tables[0].spec)
            buffers.append(buf)
    return buffers


def ceiling_rate(
    qdb: QuestDB, buffers: list, rows: int, transport: str, connections: int, version: int
) -> tuple[float, float]:
    """(rows/s, server CPU-s per 1M rows) of flushing pre-serialized buffers over N senders."""
    recreate_table(qdb, TABLE)
    conf = qdb.ilp_conf(transport, version, auto_flush="off")
    shares = [buffers[i::connections] for i in range(connections)]
    senders = [Sender.from_conf(conf) for _ in shares]
    for sender in senders:
        sender.establish()
    try:
        cpu0 = qdb.cpu_seconds() or 0.0
        t0 = time.perf_counter()

        def flush_all(sender, share):
            for buf in share:
                sender.flush(buf, clear=False)

        with ThreadPoolExecutor(connections) as pool:  # the client releases the GIL in flush()
            list(pool.map(flush_all, senders, shares))
        elapsed = time.perf_counter() - t0
    finally:
        for sender in senders:
            sender.close()
    wait_visible(qdb, TABLE, rows)  # every row landed (TCP has no acknowledgement)
    return rows / elapsed, ((qdb.cpu_seconds() or 0.0) - cpu0) * 1e6 / rows


def main() -> None:
    parser = bench_parser(__doc__)
    parser.add_argument("--loop-rows", type=int, default=100_000, help="rows of the rows loop")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    formats = ("parquet", "ilp")
    with dataset_and_server(args.scale, args.epochs, formats) as (params, paths, qdb, config):
        path, version = paths["parquet"], config["ilp_protocol_version"]
        cases = {
            "rows loop (itertuples + row()), HTTP": lambda: workflow_send_rate(
                qdb, path, "rows", min(args.loop_rows, params.rows), version
            ),
            "dataframe(), HTTP": lambda: workflow_send_rate(
                qdb, path, "dataframe", params.rows, version
            ),
        }
        buffers = {
            (t, v): serialized_buffers(qdb, path, t, params.rows, v)
            for t in ("http", "tcp")
            for v in CEILING_VERSIONS
        }
        for v in CEILING_VERSIONS:
            for transport, connections in PAIRS:
                cases[ceiling_case(transport, connections, v)] = (
                    lambda t=transport, c=connections, v=v: ceiling_rate(
                        qdb, buffers[t, v], params.rows, t, c, v
                    )
                )
        for transport, connections in (("tcp", 1), ("tcp", 2), ("http", 1)):
            name = f"ilp_file: ILP text file, {transport.upper()} x{connections}"
            cases[name] = lambda t=transport, c=connections: ilp_file_send_rate(
                qdb, paths["ilp"], t, c, params.rows
            )
        figures: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        for _ in range(args.repeats):  # interleaved, so drift on a noisy machine hits all
            for name, case in cases.items():
                figures[name].append(case())
    loop = statistics.median(rate for rate, _ in figures[next(iter(figures))])
    print(f"\n{params.rows:,} rows (rows loop: {args.loop_rows:,}), medians of {args.repeats}")
    print(f"{'send':<44} {'rows/s':>10} {'x rows loop':>12} {'server CPU-s/1M rows':>21}")
    for name, values in figures.items():
        rate = statistics.median(r for r, _ in values)
        cpu = statistics.median(c for _, c in values)
        print(f"{name:<44} {rate:>10,.0f} {rate / loop:>11.1f}x {cpu:>21.2f}")
    print(f"the 25x target needs dataframe() at {25 * loop:,.0f} rows/s")
    print("\nilp_file against the pre-serialized buffers (send rows/s, medians; target >= 90%"
          " of v1 text, the like-for-like reference)")  # fmt: skip
    for transport, connections in PAIRS:
        file_case = f"ilp_file: ILP text file, {transport.upper()} x{connections}"
        if file_case not in figures:
            continue
        file_rate = statistics.median(r for r, _ in figures[file_case])
        line = f"{transport.upper()} x{connections}: ilp_file {file_rate:>10,.0f}"
        for v, label in CEILING_VERSIONS.items():
            buffer_rate = statistics.median(
                r for r, _ in figures[ceiling_case(transport, connections, v)]
            )
            share = file_rate / buffer_rate
            line += f"   pre-serialized {label} {buffer_rate:>10,.0f} {share:6.1%}"
        print(line)


if __name__ == "__main__":
    main()
