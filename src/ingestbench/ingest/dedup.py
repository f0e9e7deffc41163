"""The replay check of a DEDUP table (datasets[].dedup): after the timed repeats, the first
rows of the dataset are sent again with `dataframe()` over HTTP; a table with upsert keys on the
timestamp and every tag must replace them, not add them. The validation then compares the table
with the source row for row, so a duplicate or a changed value fails it as well.

Untimed and after the last repeat: it measures nothing, it checks what DEDUP promises.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from questdb import Sender

from ingestbench.errors import UserError
from ingestbench.ingest.frames.readers import read_frame
from ingestbench.ingest.methods import Job, client_errors, dataframe_into
from ingestbench.server.table import wait_wal
from ingestbench.variants import Variant

#: Rows sent again: enough to cross several epochs and every host, at most what the table holds.
REPLAY_ROWS = 100_000


class DedupError(UserError):
    pass


def replay_check(job: Job, parquet: Path) -> dict[str, Any]:
    """Send the first rows of `parquet` again; the table must still hold `job.rows` rows."""
    rows = min(REPLAY_ROWS, job.rows)
    variant = Variant("pandas", "dataframe", "parquet", "http")
    replay = dataclasses.replace(job, variant=variant)  # its connection: over HTTP
    frame = read_frame(parquet, "pandas", "parquet", 0, rows)
    with client_errors(replay, "replaying rows"), Sender.from_conf(replay.conf()) as sender:
        dataframe_into(sender, frame, job.tables[0].spec)
        sender.flush()
    table = job.tables[0].spec.table  # its name on the server
    wait_wal(job.qdb, table)
    count = int(job.qdb.scalar(f"SELECT count() FROM {table}"))
    if count != job.rows:
        raise DedupError(
            f"{job.variant.name}: the DEDUP table {table} holds {count} rows after "
            f"{rows} of its {job.rows} rows were sent again; it should hold {job.rows}: check "
            f"the table's upsert keys (SHOW CREATE TABLE {table}), then rerun."
        )
    return {"replayed_rows": rows, "rows_after": count}
