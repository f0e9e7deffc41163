"""The variant matrix: which ways of ingesting exist, and which combinations make sense; and the
delivery experiment's paths, the combinations of a method, a transport, a resend rule and a table.

This module is the one place that decides it; rules, scripts and the summary only read it.
It is light: the Snakefile imports it at parse time.

May import: catalogue.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Iterable
from dataclasses import asdict, astuple, dataclass
from typing import Any

from ingestbench import catalogue

LIBRARIES, FORMATS, TRANSPORTS = catalogue.LIBRARIES, catalogue.FORMATS, catalogue.TRANSPORTS
SQL_TRANSPORT = catalogue.SQL_TRANSPORT
METHOD_NAMES = catalogue.METHOD_NAMES
# The catalogue's families and properties, by the names the code reads them under.
CLIENT_METHODS = catalogue.names(family="client")
SERVER_METHODS = catalogue.names(family="server")
FILE_METHODS = catalogue.names(family="file")
#: SQL over PostgreSQL's wire protocol (transport `pg`): INSERT statements through a driver, the
#: path most users try first; `batch_rows` is the rows per call (to_sql's chunksize).
SQL_METHODS = catalogue.names(family="sql")
PROTOCOL_2_METHODS = catalogue.names(protocol_2=True)
SENDER_POOL_METHODS = catalogue.names(sender_pool=True)
CAPPED_METHODS = catalogue.names(capped=True)
COPY_ROOT_METHODS = catalogue.names(copy_root=True)
#: Why a copy-root method cannot run against an external server without questdb.copy_root.
NO_COPY_ROOT = (
    "the external server's copy root is not known (questdb.copy_root is unset), and "
    f"{' and '.join(COPY_ROOT_METHODS)} have the server read the file from there"
)
#: Said once before any job runs, when the config plans such variants.
NO_SUCH_VARIANT = (
    "{name} is not a variant's name{closest}; `ingestbench variants --config FILE` lists every "
    "variant the config runs."
)

NO_COPY_ROOT_PLANNED = (
    "{variants}: recorded as unsupported without starting anything, because {reason}; to run "
    "them, set questdb.copy_root to the server's cairo.sql.copy.root as this machine sees it."
)


def server_unsupported(method: str, mode: str, copy_root: str | None) -> str | None:
    """Why `method` cannot run against the configured server (the config alone tells), or None.
    The ingest job records such a variant as unsupported before it reaches any server."""
    if catalogue.METHODS[method].copy_root and mode == "external" and not copy_root:
        return NO_COPY_ROOT
    return None


DEFAULT_WORKERS = 2
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
        if not catalogue.METHODS[self.method].chunked and self.chunk_rows is not None:
            object.__setattr__(self, "chunk_rows", None)  # only client methods read in chunks

    @property
    def name(self) -> str:
        """`library-method-format-transport`, then the catalogue's suffixes the method has."""
        method = catalogue.METHODS[self.method]
        values = {
            "workers": self.workers if method.workers else None,
            "batch_rows": self.batch_rows if method.batch_rows else None,
            "chunk_rows": (WHOLE_FILE if self.chunk_rows is None else self.chunk_rows)
            if method.chunked and self.chunk_rows != READ_CHUNK_ROWS
            else None,
        }
        # (the flush mode's suffix is a paced path's: ingestbench.paced.names)
        suffixes = [f"{letter}{values[field]}" for letter, field in catalogue.NAME_SUFFIXES.items()
                    if values.get(field) is not None]  # fmt: skip
        return "-".join([self.library, self.method, self.format, self.transport, *suffixes])

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
    """Normalise one combination; return None when it makes no sense (the single exclusion rule,
    read off the method's catalogue record).

    `chunk_rows`: rows per chunk, "all" for whole-file mode, None for the default.
    """
    m = catalogue.METHODS.get(method)
    if m is None or fmt not in m.formats:
        return None
    if m.family == "server":
        # The server reads the file: no client library, its own format, always over HTTP/SQL.
        return Variant(catalogue.NO_LIBRARY, method, fmt, m.transports[0])
    if library not in m.libraries:
        return None
    if m.family == "sql":
        transport = m.transports[0]  # SQL over PGWire whatever the transport asked
    elif transport not in m.transports:
        return None
    chunk = None if chunk_rows == WHOLE_FILE else (chunk_rows or READ_CHUNK_ROWS)
    return Variant(
        library,
        method,
        fmt,
        transport,
        workers=(workers or DEFAULT_WORKERS) if m.workers else 1,
        batch_rows=(batch_rows or m.batch_rows) if m.batch_rows else None,
        chunk_rows=chunk if m.chunked else None,
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
    if len(parts) < 4:
        raise ValueError(f"not a valid variant name: {name!r}")
    settings: dict[str, Any] = {}
    try:
        for extra in parts[4:]:
            field, value = catalogue.NAME_SUFFIXES[extra[:1]], extra[1:]
            if field not in ("workers", "batch_rows", "chunk_rows"):
                raise ValueError(field)  # a paced path's suffix: not a backfill variant
            whole = field == "chunk_rows" and value == WHOLE_FILE
            settings[field] = value if whole else int(value)
    except (KeyError, ValueError):
        raise ValueError(f"not a valid variant name: {name!r}") from None
    variant = make_variant(*parts[:4], **settings)
    if variant is None or variant.name != name:
        raise ValueError(f"not a valid variant name: {name!r}")
    return variant


def no_such_variant(name: str, planned: Iterable[str]) -> str:
    """The sentence for a name that is no variant (a typo in a Snakemake target), naming the
    planned variant closest to it."""
    closest = difflib.get_close_matches(name, sorted(set(planned)), n=1)
    return NO_SUCH_VARIANT.format(
        name=name, closest=f" (did you mean {closest[0]}?)" if closest else ""
    )


#: Delivery: the transports whose paths also run on a DEDUP table (what their retries duplicate;
#: TSBS cpu has one row per timestamp and host).
DEDUP_TRANSPORTS = ("http", catalogue.SQL_TRANSPORT, "tcp")


def delivery_path_names() -> tuple[str, ...]:
    """The delivery paths, `method-transport[-resume]`, in catalogue order (each method's
    `-resume` paths after its plain ones), then their `-dedup` ones."""
    plain = []
    for m in catalogue.delivery_names():
        plain += [f"{m}-{t}" for t in catalogue.METHODS[m].delivery_transports]
        plain += [f"{m}-{t}-resume" for t in catalogue.METHODS[m].resume_transports]
    dedup = [f"{p}-dedup" for p in plain if p.split("-")[1] in DEDUP_TRANSPORTS]
    return (*plain, *dedup)
