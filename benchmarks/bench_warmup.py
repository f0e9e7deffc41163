"""How many rows a fresh QuestDB needs before its ingestion rate settles (the warm-up size).

Serializes the dataset once (untimed) into ILP buffers of --block rows, starts a fresh server
(as `config.yaml` says) and sends the same buffers --rounds times over HTTP, each round into a
freshly created table. HTTP acknowledges every flush, so each block's time is the server's.
Prints the rate of every block, in the order the server met them, and each round's rate until
all its rows were visible; the rows sent before the block rates stop rising is what a warm-up
must cover (`warmup_rows` in the config).

    .venv/bin/python benchmarks/bench_warmup.py            # 1M rows, blocks of 100k, 2 rounds
"""

from __future__ import annotations

import time

from _bench import TABLE, bench_parser, dataset_and_server
from bench_ceiling import serialized_buffers
from questdb import Sender

from ingestbench.server.table import recreate_table, wait_visible


def main() -> None:
    parser = bench_parser(__doc__)
    parser.add_argument("--block", type=int, default=100_000, help="rows per flush")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()

    import bench_ceiling

    bench_ceiling.AUTO_FLUSH_ROWS = args.block
    with dataset_and_server(args.scale, args.epochs) as (params, paths, qdb, config):
        version = config["ilp_protocol_version"]
        buffers = serialized_buffers(qdb, paths["parquet"], "http", params.rows, version)
        conf = qdb.ilp_conf("http", version, auto_flush="off")
        sent = 0
        print(f"{'round':>5} {'rows sent before':>17} {'block rows/s':>13}")
        for rnd in range(args.rounds):
            recreate_table(qdb, TABLE)
            with Sender.from_conf(conf) as sender:
                t_round = time.perf_counter()
                for i, buf in enumerate(buffers):
                    rows = min(args.block, params.rows - i * args.block)
                    t0 = time.perf_counter()
                    sender.flush(buf, clear=False)
                    rate = rows / (time.perf_counter() - t0)
                    print(f"{rnd:>5} {sent:>17,} {rate:>13,.0f}")
                    sent += rows
            wait_visible(qdb, TABLE, params.rows)
            total = params.rows / (time.perf_counter() - t_round)
            print(f"round {rnd}: {total:,.0f} rows/s until visible")


if __name__ == "__main__":
    main()
