"""docs/methods.md's method table and variant matrices, generated so they cannot drift.

The method table has one row per method of ingestbench.variants (a method without its text here
stops `make readme`); the matrices count, per config and dataset, the variants and the timed
ingestions (variants x repeats) that `ingestbench variants --config FILE` would list. Both are
written between marker comments of docs/methods.md by `make readme` and checked by its `--check`.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from ingestbench import CHECKOUT
from ingestbench.config import load_config
from ingestbench.datasets import plan
from ingestbench.variants import METHOD_NAMES

METHODS_DOC = CHECKOUT / "docs" / "methods.md"
#: The configs whose matrices docs/methods.md shows.
MATRIX_CONFIGS = ("config.yaml", "configs/full.yaml")
_GENERATED = "<!-- written by `make readme` from {}; do not edit -->"

#: What each method does, and the phases of its repeats that take time.
METHOD_TEXT: dict[str, tuple[str, str]] = {
    "rows": (
        "Python loop calling `sender.row()` per row (pandas `itertuples`, polars `iter_rows`): "
        "the baseline of QuestDB's blog (capped by `rows_cap`)",
        "read, send, visible",
    ),
    "iterrows": (
        "pandas only: `df.iterrows()` + `sender.row()`, the loop QuestDB's published pandas "
        "benchmark divides by (capped by `rows_cap` like `rows`)",
        "read, send, visible",
    ),
    "dataframe": (
        "`sender.dataframe()` on each chunk (one call in whole-file mode); polars goes to pandas "
        "through Arrow (timed as convert; categories stay categories)",
        "read, convert, send, visible",
    ),
    "threads": (
        "N threads, each with its own sender (serialization releases the GIL). Streamed (the "
        "default): each takes the next chunk of one stream when it is free, so rows reach the "
        "server close to time order; whole-file (`chunk_rows: all`): contiguous row ranges, one "
        "per thread",
        "all",
    ),
    "processes": (
        "N spawned processes, each with its own sender. Streamed: the parent reads and converts "
        "the chunks and queues them, each worker taking the next when it is free; whole-file: "
        "each worker reads its own row range of the file, and barriers keep the phases apart",
        "all",
    ),
    "batches": (
        "auto-flush off, an explicit `flush()` every K rows (buffered vs the auto-flush default "
        "of `dataframe`)",
        "all",
    ),
    "vectorized": (
        "the frame (pandas or polars, as Arrow) encoded into ILP column by column with Arrow, "
        "NumPy and one compiled loop instead of the client's cell-by-cell `dataframe()`, byte "
        "for byte the same lines, written to N raw connections (TCP socket or `/write` POSTs, "
        'as `ilp_file` does); see "Encoding ILP column by column"',
        "read, convert, send, visible",
    ),
    "server_csv": (
        "QuestDB imports the CSV itself through `/imp` with the schema",
        "send, visible",
    ),
    "server_copy": (
        "QuestDB's parallel CSV import: the file is placed in the server's copy root (timed as "
        "read), then SQL `COPY … FROM` into the empty table; `send` ends when "
        "`sys.text_import_log` says it finished",
        "read, send, visible",
    ),
    "server_parquet": (
        "the file is placed in the server's copy root (timed as read), then `INSERT INTO … "
        "SELECT * FROM read_parquet(…)`",
        "read, send, visible",
    ),
    "ilp_file": (
        "the dataset's ILP text file sent as it is, no library (`none`), format `ilp`, over TCP "
        "or HTTP with N connections: the wire ceiling "
        "([methodology.md](methodology.md#the-wire-ceiling))",
        "send, visible",
    ),
    "to_sql": (
        "SQL over PGWire (transport `pg`): pandas `DataFrame.to_sql` through SQLAlchemy's "
        'PostgreSQL dialect on psycopg 3, appending (`if_exists="append"`) into the table '
        "every variant lands in, an `executemany` of a one-row INSERT every K rows (`chunksize`, "
        "`-bK`); capped by `rows_cap` like the row loops",
        "read, send, visible",
    ),
    "to_sql_multi": (
        '`to_sql` with `method="multi"`: one INSERT with the VALUES of K rows per statement '
        "(K = 1,000 by default: PGWire takes at most 65,535 bind parameters per statement)",
        "read, send, visible",
    ),
    "write_database": (
        "polars only: `DataFrame.write_database` through the same SQLAlchemy engine "
        '(`if_table_exists="append"`; pandas\' `to_sql` beneath, K rows per `chunksize`)',
        "read, send, visible",
    ),
    "executemany": (
        "psycopg 3 without SQLAlchemy: a prepared INSERT, `cursor.executemany` over K rows "
        "(pipelined), one transaction per K rows; the rows from `itertuples`/`iter_rows`",
        "read, send, visible",
    ),
    "asyncpg": (
        "asyncpg: `executemany` of a prepared INSERT over K rows, one transaction each; binary "
        "parameters where psycopg sends text (the timestamp column's zone dropped first, as "
        "asyncpg binds a TIMESTAMP)",
        "read, convert, send, visible",
    ),
    "psycopg_copy": (
        "psycopg 3's `cursor.copy()` (`COPY … FROM STDIN`, PostgreSQL's fast path): tried once, "
        "`unsupported` with QuestDB's answer (it takes no COPY from the client)",
        "none",
    ),
    "adbc": (
        'polars only: `write_database(engine="adbc")`, ADBC\'s PostgreSQL driver (`COPY … '
        "FROM STDIN`): tried once, `unsupported` with QuestDB's answer",
        "none",
    ),
}


def _all_methods() -> tuple[str, ...]:
    return METHOD_NAMES


def method_table() -> str:
    names = _all_methods()
    missing = [m for m in names if m not in METHOD_TEXT]
    if missing:
        raise SystemExit(
            f"docs/methods.md has no text for the methods {missing}: add theirs to METHOD_TEXT in "
            "ingestbench.dev.methods_doc, then run `make readme`."
        )
    lines = [
        _GENERATED.format("ingestbench.variants and ingestbench.dev.methods_doc"),
        "",
        "| method | what it does | phases it fills |",
        "| --- | --- | --- |",
    ]
    lines += [f"| `{m}` | {METHOD_TEXT[m][0]} | {METHOD_TEXT[m][1]} |" for m in names]
    return "\n".join(lines)


def matrix_table(configs: tuple[str, ...] = MATRIX_CONFIGS) -> str:
    """Per config and dataset: its variants, timed ingestions and variants per method."""
    lines = [
        _GENERATED.format(", ".join(configs)),
        "",
        "| config | dataset | variants | ingestions | variants per method |",
        "| --- | --- | ---: | ---: | --- |",
    ]
    for name in configs:
        config = load_config(CHECKOUT / name)
        by_dataset = dict(plan(config).values())
        for label, variants in by_dataset.items():
            methods = Counter(v.method for v in variants)
            per_method = ", ".join(f"`{m}` {methods[m]}" for m in _all_methods() if m in methods)
            lines.append(
                f"| `{name}` | `{label}` | {len(variants)} | "
                f"{len(variants) * config['repeats']:,} | {per_method} |"
            )
        total = sum(len(v) for v in by_dataset.values())
        lines.append(
            f"| `{name}` | all {len(by_dataset)} | **{total}** | "
            f"**{total * config['repeats']:,}** | {config['repeats']} repeats each |"
        )
    return "\n".join(lines)


def with_blocks(text: str, blocks: dict[str, str], path: Path = METHODS_DOC) -> str:
    """`text` with the part between `<!-- NAME:begin -->` and `<!-- NAME:end -->` replaced by
    each block."""
    for name, block in blocks.items():
        begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
        pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
        if not pattern.search(text):
            raise SystemExit(f"{path} has no {begin} … {end} block; put one where it goes.")
        text = pattern.sub(lambda _, b=begin, e=end, x=block: f"{b}\n{x}\n{e}", text)
    return text


def methods_doc(text: str) -> str:
    """docs/methods.md's text with its generated blocks current."""
    return with_blocks(text, {"methods": method_table(), "matrix": matrix_table()})
