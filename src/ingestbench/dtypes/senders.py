"""The four client paths of the dtype matrix, on a frame in memory, as the benchmark's methods
take their frames: `dataframe()` (polars through the workflow's `to_pandas`), `threads` (two
senders, a half each), `rows` (one `row()` call per row from the library's own row iterator) and
`vectorized` (the workflow's ILP encoder on the frame's Arrow batch, raw connections).

Categorical columns are symbols, as `dataframe()` decides by default (``symbols="auto"``).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from questdb import Sender

from ingestbench.arrow import to_pandas
from ingestbench.ingest.frames.encoder import IlpEncoder, as_record_batch
from ingestbench.ingest.methods.base import row_ranges
from ingestbench.ingest.methods.ilp_file import CONNECTIONS
from ingestbench.server.process import QuestDB

AT = "ts"


def _conf(qdb: QuestDB, transport: str) -> str:
    return qdb.ilp_conf(transport, 2)


def dataframe(qdb: QuestDB, transport: str, table: str, frame: Any, symbol: bool) -> None:
    with Sender.from_conf(_conf(qdb, transport)) as sender:
        sender.dataframe(to_pandas(frame), table_name=table, at=AT)


def threads(qdb: QuestDB, transport: str, table: str, frame: Any, symbol: bool) -> None:
    parts = [frame[offset : offset + length] for offset, length in row_ranges(len(frame), 2)]
    with ThreadPoolExecutor(len(parts)) as pool:
        list(pool.map(lambda part: dataframe(qdb, transport, table, part, symbol), parts))


def rows(qdb: QuestDB, transport: str, table: str, frame: Any, symbol: bool) -> None:
    if type(frame).__module__.startswith("polars"):
        tuples = frame.iter_rows()
    else:
        tuples = frame.itertuples(index=False, name=None)
    with Sender.from_conf(_conf(qdb, transport)) as sender:
        for seq, value, at in tuples:
            sender.row(
                table,
                symbols={"value": value} if symbol else None,
                columns={"seq": seq} if symbol else {"seq": seq, "value": value},
                at=at,
            )


def vectorized(qdb: QuestDB, transport: str, table: str, frame: Any, symbol: bool) -> None:
    fields = ["seq"] if symbol else ["seq", "value"]
    encoder = IlpEncoder(table, ["value"] if symbol else [], fields, AT)
    data = encoder.encode(as_record_batch(frame))
    connection = CONNECTIONS[transport](qdb)
    try:
        connection.send(memoryview(data))
    finally:
        connection.close()


#: The matrix's methods, by the names the benchmark's variants use.
METHODS = {"dataframe": dataframe, "threads": threads, "rows": rows, "vectorized": vectorized}
