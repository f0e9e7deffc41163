"""The variant matrix: which ways of ingesting exist, and which combinations make sense.

This module is the one place that decides it; rules, scripts and the summary only read it.
It is light: the Snakefile imports it at parse time.

May import: nothing.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, astuple, dataclass
from typing import Any

LIBRARIES = ("pandas", "polars")
CLIENT_METHODS = (
    "rows",
    "iterrows",
    "dataframe",
    "threads",
    "processes",
    "batches",
    "vectorized",
)
#: Methods that write ILP protocol 2 themselves (binary doubles): version 1 is refused.
PROTOCOL_2_METHODS = ("vectorized",)
#: Parallel methods whose workers each run the `dataframe` method's sender: the 1-worker point of
#: their scaling is the `dataframe` variant.
SENDER_POOL_METHODS = ("threads", "processes")
#: Client methods with `workers` (threads, processes, or connections of the vectorized encoder).
PARALLEL_METHODS = (*SENDER_POOL_METHODS, "vectorized")
# Python loops calling sender.row() per row; slow, so `rows_cap` may cap the rows they ingest.
ROW_LOOP_METHODS = ("rows", "iterrows")
# DataFrame.iterrows() is a pandas API (QuestDB's published baseline); polars has no such loop.
PANDAS_ONLY_METHODS = ("iterrows",)
#: The methods where the server reads the file itself, and the format each reads.
SERVER_METHOD_FORMATS = {"server_csv": "csv", "server_copy": "csv", "server_parquet": "parquet"}
SERVER_METHODS = tuple(SERVER_METHOD_FORMATS)
#: Methods that send a file of ILP text as it is (library none, format ilp, workers = connections).
FILE_METHODS = ("ilp_file",)
#: Server methods that have the server read the file from its copy root (cairo.sql.copy.root).
COPY_ROOT_METHODS = ("server_copy", "server_parquet")
#: Why a copy-root method cannot run against an external server without questdb.copy_root.
NO_COPY_ROOT = (
    "the external server's copy root is not known (questdb.copy_root is unset), and "
    "server_copy and server_parquet have the server read the file from there"
)
#: Said once before any job runs, when the config plans such variants.
NO_COPY_ROOT_PLANNED = (
    "{variants}: recorded as unsupported without starting anything, because {reason}; to run "
    "them, set questdb.copy_root to the server's cairo.sql.copy.root as this machine sees it."
)


def server_unsupported(method: str, mode: str, copy_root: str | None) -> str | None:
    """Why `method` cannot run against the configured server (the config alone tells), or None.
    The ingest job records such a variant as unsupported before it reaches any server."""
    if method in COPY_ROOT_METHODS and mode == "external" and not copy_root:
        return NO_COPY_ROOT
    return None


#: SQL over PostgreSQL's wire protocol (transport `pg`): INSERT statements through a driver, the
#: path most users try first; `batch_rows` is the rows per call (to_sql's chunksize).
SQL_METHODS = ("to_sql", "to_sql_multi", "write_database", "executemany", "asyncpg",
               "psycopg_copy", "adbc")  # fmt: skip
#: The library each SQL method belongs to (None: either, the rows come from the frame).
SQL_METHOD_LIBRARY = {"to_sql": "pandas", "to_sql_multi": "pandas", "write_database": "polars",
                      "adbc": "polars"}  # fmt: skip
#: Rows per statement of to_sql_multi: one INSERT carries rows x columns bind parameters, and
#: PGWire counts them in 16 bits (at most 65,535), so 10,000 rows of 21 columns cannot go.
SQL_MULTI_BATCH_ROWS = 1_000
#: Every method of the matrix (the registry of classes, the schema and the docs agree with it).
METHOD_NAMES = (*CLIENT_METHODS, *SERVER_METHODS, *FILE_METHODS, *SQL_METHODS)
#: Methods slow enough that `rows_cap` caps the rows they ingest: the row loops and SQL.
CAPPED_METHODS = (*ROW_LOOP_METHODS, *SQL_METHODS)
FORMATS = ("parquet", "csv", "ilp")
TRANSPORTS = ("http", "tcp")
SQL_TRANSPORT = "pg"
DEFAULT_WORKERS = 2
DEFAULT_BATCH_ROWS = 10_000
# Rows per chunk of the streamed client methods: about 35-45 MiB of pandas frame and its ILP per
# chunk in flight, and ~10 chunks per 1M rows for the overlap to work with. Not yet confirmed by
# `make bench-chunks` (the sweep of 50k..1M rows), which is the way to re-choose it.
READ_CHUNK_ROWS = 100_000
WHOLE_FILE = "all"  # the config's (and the name's) word for chunk_rows null: one whole-file read


@dataclass(frozen=True, order=True)
class Variant:
    library: str  # pandas, polars, or none (the server reads the file itself)
    method: str
    format: str
    transport: str
    workers: int = 1
    batch_rows: int | None = None
    chunk_rows: int | None = READ_CHUNK_ROWS  # None: read the whole file at once

    def __post_init__(self) -> None:
        if self.method not in (*CLIENT_METHODS, *SQL_METHODS) and self.chunk_rows is not None:
            object.__setattr__(self, "chunk_rows", None)  # only client methods read in chunks

    @property
    def name(self) -> str:
        name = f"{self.library}-{self.method}-{self.format}-{self.transport}"
        if self.method in (*PARALLEL_METHODS, *FILE_METHODS):
            name += f"-w{self.workers}"
        if self.method == "batches" or self.method in SQL_METHODS:
            name += f"-b{self.batch_rows}"
        if self.method in (*CLIENT_METHODS, *SQL_METHODS) and self.chunk_rows != READ_CHUNK_ROWS:
            name += f"-c{WHOLE_FILE if self.chunk_rows is None else self.chunk_rows}"
        return name

    def sort_key(self) -> tuple:
        """Field order, with None before any number (whole-file mode sorts first)."""
        return tuple((v is not None, v) for v in astuple(self))

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, **asdict(self)}


def as_list(value: Any, default: Any = None) -> list:
    """A config value that may be one item or a list of them, as a list (`default` if unset)."""
    if value is None:
        value = default
    return list(value) if isinstance(value, list | tuple) else [value]


def make_variant(
    library: str,
    method: str,
    fmt: str,
    transport: str,
    workers=None,
    batch_rows=None,
    chunk_rows=None,
):
    """Normalise one combination; return None when it makes no sense (the single exclusion rule).

    `chunk_rows`: rows per chunk, "all" for whole-file mode, None for the default.
    """
    if method in SERVER_METHODS:
        # The server reads the file: no client library, its own format, always over HTTP/SQL.
        if fmt != SERVER_METHOD_FORMATS[method]:
            return None
        return Variant("none", method, fmt, "http")
    if method in FILE_METHODS:
        # The file's bytes as they are: no client library, ILP text, either transport.
        if library != "none" or fmt != "ilp" or transport not in TRANSPORTS:
            return None
        return Variant("none", method, fmt, transport, workers=workers or DEFAULT_WORKERS)
    if method in SQL_METHODS:
        # SQL over PGWire whatever the transport asked: the frame's rows as INSERTs.
        wanted = SQL_METHOD_LIBRARY.get(method, library)
        if library != wanted or library not in LIBRARIES or fmt not in FORMATS or fmt == "ilp":
            return None
        default = SQL_MULTI_BATCH_ROWS if method == "to_sql_multi" else DEFAULT_BATCH_ROWS
        chunk = None if chunk_rows == WHOLE_FILE else (chunk_rows or READ_CHUNK_ROWS)
        return Variant(library, method, fmt, SQL_TRANSPORT, batch_rows=batch_rows or default,
                       chunk_rows=chunk)  # fmt: skip
    known = (
        library in LIBRARIES,
        method in CLIENT_METHODS,
        fmt in FORMATS and fmt != "ilp",  # client methods read dataframes, not ILP text
        transport in TRANSPORTS,
    )
    if not all(known):
        return None
    if method in PANDAS_ONLY_METHODS and library != "pandas":
        return None
    return Variant(
        library,
        method,
        fmt,
        transport,
        workers=(workers or DEFAULT_WORKERS) if method in PARALLEL_METHODS else 1,
        batch_rows=(batch_rows or DEFAULT_BATCH_ROWS) if method == "batches" else None,
        chunk_rows=None if chunk_rows == WHOLE_FILE else (chunk_rows or READ_CHUNK_ROWS),
    )


def expand_spec(spec: dict[str, Any]) -> list[Variant]:
    """Cross product of one config spec's lists, invalid combinations dropped."""
    combos = itertools.product(
        as_list(spec.get("library"), (*LIBRARIES, "none")),
        as_list(spec["method"], None),
        as_list(spec.get("format"), FORMATS),
        as_list(spec.get("transport"), TRANSPORTS),
        as_list(spec.get("workers"), DEFAULT_WORKERS),
        as_list(spec.get("batch_rows"), None),  # each method's own default
        as_list(spec.get("chunk_rows"), READ_CHUNK_ROWS),
    )
    found = {make_variant(*c) for c in combos}
    return sorted((v for v in found if v is not None), key=Variant.sort_key)


def variants_by_dataset(
    config: dict[str, Any], dataset_labels: list[str]
) -> dict[str, list[Variant]]:
    """{dataset label: sorted unique variants} for a validated config."""
    out: dict[str, set[Variant]] = {label: set() for label in dataset_labels}
    for spec in config["variants"]:
        for label in spec.get("datasets", dataset_labels):
            out[label].update(expand_spec(spec))
    return {label: sorted(vs, key=Variant.sort_key) for label, vs in out.items()}


def parse_variant_name(name: str) -> Variant:
    """Inverse of Variant.name (used by the ingest rule's wildcard)."""
    parts = name.split("-")
    library, method, fmt, transport = parts[:4]
    workers, batch_rows, chunk_rows = 1, None, None
    try:
        for extra in parts[4:]:
            if extra.startswith("w"):
                workers = int(extra[1:])
            elif extra.startswith("b"):
                batch_rows = int(extra[1:])
            elif extra == f"c{WHOLE_FILE}":
                chunk_rows = WHOLE_FILE
            elif extra.startswith("c"):
                chunk_rows = int(extra[1:])
    except ValueError:
        raise ValueError(f"not a valid variant name: {name!r}") from None
    variant = make_variant(library, method, fmt, transport, workers, batch_rows, chunk_rows)
    if variant is None or variant.name != name:
        raise ValueError(f"not a valid variant name: {name!r}")
    return variant
