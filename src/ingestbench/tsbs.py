"""The TSBS "cpu-only" dataset, generated with numpy and streamed to Parquet and CSV.

Semantics (taken from TSBS's Go source, see DESIGN.md, "The TSBS cpu-only dataset"):

* Hosts ``host_0 .. host_{scale-1}``. Each host draws its nine other tags once and keeps them:
  region (uniform over 9), datacenter (uniform within the region; 23 in all), rack ``"0".."99"``,
  os, arch, team, service ``"0".."19"``, service_version ``"0"``/``"1"``, service_environment.
* Ten fields in TSBS order. Every host has its own independent clamped random walk per field:
  start uniform on [0, 100), then each epoch adds an N(0, 1) step and clamps to [0, 100].
* Epoch 0 holds the start values at ``start``; epoch e is written at ``start + e * interval``.
  Rows go epoch by epoch, hosts in order; all hosts of an epoch share its timestamp.
  ``field_type="long"`` writes ``int64(value)`` (truncation), as TSBS does; ``"double"`` keeps the
  full values, as QuestDB's pandas benchmark does.

Random draws (one ``np.random.default_rng(seed)``, in this order, so a seed fixes the data and the
chunk size does not): the tag indices, one vector over all hosts per tag in ``TAGS`` order
(region, then datacenter within the drawn region, rack, os, arch, team, service, service_version,
service_environment); the start values, ``rng.random((10, scale)) * 100``; then per epoch >= 1
one ``rng.standard_normal((10, scale))`` block of steps (field-major, hosts in order).

Out-of-order mode (``out_of_order_lag_s``): every row gets the sort key ``timestamp + d`` where
``d`` is a uniform integer number of nanoseconds in [0, lag) drawn in row order from a second
generator, ``np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])``; rows are written
in the order of a stable sort on that key (ties keep the in-order row order). The data is the same
multiset of rows as the in-order dataset with the same seed, and a row is never preceded by a row
whose timestamp is ``lag`` or more later than its own. The sort is done chunk by chunk with a
carry: after sorting the carry plus a new chunk, the rows whose key is below the next chunk's first
timestamp are final (no later row can sort before them) and are written; the rest are carried.
The result equals one global stable sort, and memory stays bounded by chunk + lag window.

Output: ``<name>.parquet`` (tags as ``dictionary<int32, string>``, so pandas reads ``category`` and
polars ``Categorical``; fields ``double`` or ``int64``; ``timestamp[ns, tz=UTC]``; one row group per
chunk of about a million rows), ``<name>.csv`` (header, unquoted values, timestamps like
``2016-01-01T00:00:00.000000Z``), ``<name>.ilp`` (TSBS's ``--format=questdb`` lines, see
``ingestbench.ilp_text``) and ``<name>.manifest.json``. Every file is written to
``<final>.tmp-<pid>`` and renamed into place only when complete.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ingestbench.errors import UserError

log = logging.getLogger(__name__)

#: Bump when the same parameters would produce different rows (part of the manifest).
GENERATOR_VERSION = "1"
MANIFEST_SCHEMA_VERSION = 1

TAGS: tuple[str, ...] = (
    "hostname",
    "region",
    "datacenter",
    "rack",
    "os",
    "arch",
    "team",
    "service",
    "service_version",
    "service_environment",
)
FIELDS: tuple[str, ...] = (
    "usage_user",
    "usage_system",
    "usage_idle",
    "usage_nice",
    "usage_iowait",
    "usage_irq",
    "usage_softirq",
    "usage_steal",
    "usage_guest",
    "usage_guest_nice",
)
TIMESTAMP = "timestamp"
FIELD_TYPES = ("double", "long")
FORMATS = ("parquet", "csv", "ilp")  # ilp: TSBS --format=questdb lines (ingestbench.ilp_text)

#: Region -> its datacenters (TSBS's devops/common.go).
REGIONS: dict[str, tuple[str, ...]] = {
    "us-east-1": ("us-east-1a", "us-east-1b", "us-east-1c", "us-east-1e"),
    "us-west-1": ("us-west-1a", "us-west-1b"),
    "us-west-2": ("us-west-2a", "us-west-2b", "us-west-2c"),
    "eu-west-1": ("eu-west-1a", "eu-west-1b", "eu-west-1c"),
    "eu-central-1": ("eu-central-1a", "eu-central-1b"),
    "ap-southeast-1": ("ap-southeast-1a", "ap-southeast-1b"),
    "ap-southeast-2": ("ap-southeast-2a", "ap-southeast-2b"),
    "ap-northeast-1": ("ap-northeast-1a", "ap-northeast-1c"),
    "sa-east-1": ("sa-east-1a", "sa-east-1b", "sa-east-1c"),
}
#: The value set of every tag but hostname, in the order indices refer to.
TAG_VALUES: dict[str, tuple[str, ...]] = {
    "region": tuple(REGIONS),
    "datacenter": tuple(dc for dcs in REGIONS.values() for dc in dcs),
    "rack": tuple(str(i) for i in range(100)),
    "os": ("Ubuntu16.10", "Ubuntu16.04LTS", "Ubuntu15.10"),
    "arch": ("x64", "x86"),
    "team": ("SF", "NYC", "LON", "CHI"),
    "service": tuple(str(i) for i in range(20)),
    "service_version": ("0", "1"),
    "service_environment": ("production", "staging", "test"),
}

DEFAULT_START = "2016-01-01T00:00:00Z"
DEFAULT_INTERVAL_S = 10.0
#: Rows per chunk (one Parquet row group); whole epochs, at least one.
DEFAULT_CHUNK_ROWS = 1_000_000
PARQUET_COMPRESSION = "snappy"
NS = 1_000_000_000


class GeneratorError(UserError, ValueError):
    """Bad generator input or an unwritable output; the message is one sentence: cause and fix."""


# ----------------------------------------------------------------------------- parameters

_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(ns|us|µs|ms|s|m|h)?\s*$")
_UNIT_NS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "ms": 1_000_000,
    "s": NS,
    "m": 60 * NS,
    "h": 3600 * NS,
}


def parse_duration(value: Any, what: str, fix: str) -> float:
    """Seconds from a number (seconds) or a string like ``"10s"``, ``"500ms"``, ``"1m"``."""
    if isinstance(value, bool):
        raise GeneratorError(f"{what} must be a duration like '10s' (got {value!r}): {fix}.")
    if isinstance(value, int | float):
        return float(value)
    match = _DURATION.match(str(value))
    if not match:
        raise GeneratorError(
            f"{what} must be a duration like '10s', '500ms' or '1m' (got {value!r}): {fix}."
        )
    return float(match.group(1)) * _UNIT_NS[match.group(2) or "s"] / NS


def format_duration(ns: int) -> str:
    """Compact duration for names: 10s, 500ms, 250us, 7ns."""
    for unit, size in (("s", NS), ("ms", 1_000_000), ("us", 1_000)):
        if ns % size == 0:
            return f"{ns // size}{unit}"
    return f"{ns}ns"


def _parse_start(value: Any) -> datetime:
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            moment = datetime.fromisoformat(str(value).strip())
        except ValueError:
            raise GeneratorError(
                f"start must be an ISO-8601 time like {DEFAULT_START} (got {value!r}): "
                "set datasets[].start (or --start) to such a time."
            ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _positive_int(value: Any, what: str, key: str, flag: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise GeneratorError(
            f"{what} must be a positive integer (got {value!r}): "
            f"set datasets[].{key} (or {flag}) to 1 or more."
        )
    return int(value)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MAX_NS = 2**63 - 1


@dataclass(frozen=True)
class DatasetParams:
    """Parameters of one TSBS cpu dataset; they alone (with the generator version) fix its rows."""

    scale: int
    epochs: int
    seed: int = 42
    start: str = DEFAULT_START
    interval_s: float = DEFAULT_INTERVAL_S
    field_type: str = "double"
    out_of_order_lag_s: float | None = None

    def __post_init__(self) -> None:
        _positive_int(self.scale, "scale", "scale", "--scale")
        _positive_int(self.epochs, "epochs", "epochs", "--epochs")
        if (
            isinstance(self.seed, bool)
            or not isinstance(self.seed, int | np.integer)
            or self.seed < 0
        ):
            raise GeneratorError(
                f"seed must be a non-negative integer (got {self.seed!r}): "
                "set datasets[].seed (or --seed) to 0 or more."
            )
        if self.field_type not in FIELD_TYPES:
            raise GeneratorError(
                f"unknown field type {self.field_type!r}: set datasets[].field_type "
                "(or --field-type) to 'double' or 'long'."
            )
        start = _parse_start(self.start)
        if start < _EPOCH:
            raise GeneratorError(
                f"start must not be before 1970-01-01 (got {self.start!r}): "
                "set datasets[].start (or --start) to a later time."
            )
        interval_ok = isinstance(self.interval_s, int | float) and not isinstance(
            self.interval_s, bool
        )
        interval_ns = self.interval_ns if interval_ok else 0
        if not (interval_ok and interval_ns > 0 and interval_ns % 1_000 == 0):
            raise GeneratorError(
                "interval must be a positive whole number of microseconds "
                f"(got {self.interval_s!r} s): set datasets[].interval (or --interval) "
                "to '10s' or similar."
            )
        if self.start_ns + (self.epochs - 1) * interval_ns > _MAX_NS:
            raise GeneratorError(
                f"the last timestamp of {self.epochs} epochs every {format_duration(interval_ns)} "
                "after the start is past the year 2262 (nanosecond limit): use fewer epochs, "
                "a shorter interval or an earlier start."
            )
        lag = self.out_of_order_lag_s
        if lag is not None and not (
            isinstance(lag, int | float) and not isinstance(lag, bool) and math.isfinite(lag)
            and round(lag * NS) >= 1
        ):  # fmt: skip
            raise GeneratorError(
                f"the out-of-order lag must be a positive duration (got {lag!r}): set "
                "datasets[].out_of_order.lag (or --out-of-order-lag) to '30s' or similar, or null."
            )

    # -- derived values
    @property
    def rows(self) -> int:
        return self.scale * self.epochs

    @property
    def interval_ns(self) -> int:
        try:
            return round(self.interval_s * NS)
        except (TypeError, ValueError, OverflowError):  # not a number, NaN, infinite
            return 0

    @property
    def start_ns(self) -> int:
        delta = _parse_start(self.start) - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * NS + delta.microseconds * 1_000

    @property
    def lag_ns(self) -> int | None:
        lag = self.out_of_order_lag_s
        return None if lag is None else round(lag * NS)

    @property
    def name(self) -> str:
        """E.g. ``cpu-s4000-e250-seed42``, ``cpu-s4000-e250-seed42-long-ooo30s``."""
        parts = [f"cpu-s{self.scale}-e{self.epochs}-seed{self.seed}"]
        if self.field_type == "long":
            parts.append("long")
        if self.lag_ns is not None:
            parts.append(f"ooo{format_duration(self.lag_ns)}")
        if self.interval_ns != round(DEFAULT_INTERVAL_S * NS):
            parts.append(f"i{format_duration(self.interval_ns)}")
        start = _parse_start(self.start)
        if start != _parse_start(DEFAULT_START):
            stamp = start.strftime("%Y%m%dT%H%M%S")
            if start.microsecond:
                stamp += f"{start.microsecond:06d}"
            parts.append(f"t{stamp}Z")
        return "-".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "scale": self.scale,
            "epochs": self.epochs,
            "seed": self.seed,
            "start": format_timestamp(self.start_ns),
            "interval_s": self.interval_s,
            "field_type": self.field_type,
            "out_of_order_lag_s": self.out_of_order_lag_s,
        }

    @classmethod
    def from_config(cls, d: dict) -> DatasetParams:
        """From a ``datasets[]`` entry of config.yaml (``label`` and ``formats`` are ignored)."""
        if not isinstance(d, dict):
            raise GeneratorError(
                f"a dataset entry must be a mapping (got {type(d).__name__}): "
                "write datasets[] entries as 'scale: ..., epochs: ...'."
            )
        known = {
            "scale",
            "epochs",
            "rows",
            "seed",
            "start",
            "interval",
            "field_type",
            "out_of_order",
        }
        unknown = sorted(set(d) - known - {"label", "formats"})
        if unknown:
            log.warning("ignoring unknown dataset keys %s", ", ".join(unknown))
        if "scale" not in d:
            raise GeneratorError(
                "a dataset has no scale: set datasets[].scale to the number of hosts."
            )
        scale = _positive_int(d["scale"], "scale", "scale", "--scale")
        epochs, rows = d.get("epochs"), d.get("rows")
        if epochs is None and rows is None:
            raise GeneratorError(
                "a dataset has neither epochs nor rows: "
                "set datasets[].epochs (or rows) to 1 or more."
            )
        if rows is not None:
            rows = _positive_int(rows, "rows", "rows", "--rows")
            from_rows = -(-rows // scale)
            if epochs is not None and epochs != from_rows:
                raise GeneratorError(
                    f"a dataset sets both epochs ({epochs}) and rows ({rows}, i.e. {from_rows} "
                    "epochs): keep only one of datasets[].epochs and datasets[].rows."
                )
            epochs = from_rows
        lag = None
        ooo = d.get("out_of_order")
        if ooo is not None:
            if not isinstance(ooo, dict) or ooo.get("lag") is None:
                raise GeneratorError(
                    f"out_of_order must be null or a mapping with a lag (got {ooo!r}): "
                    "write 'out_of_order: {lag: 30s}'."
                )
            lag = parse_duration(ooo["lag"], "out_of_order.lag", "write 'lag: 30s' or similar")
        interval = d.get("interval")
        interval_s = (
            DEFAULT_INTERVAL_S
            if interval is None
            else parse_duration(interval, "interval", "set datasets[].interval to '10s' or similar")
        )
        start = d.get("start")
        if isinstance(start, datetime):  # YAML turns unquoted times into datetimes
            start = _parse_start(start).isoformat().replace("+00:00", "Z")
        return cls(
            scale=scale,
            epochs=epochs,
            seed=d.get("seed", 42) if d.get("seed") is not None else 42,
            start=start or DEFAULT_START,
            interval_s=interval_s,
            field_type=d.get("field_type") or "double",
            out_of_order_lag_s=lag,
        )


def format_timestamp(ns: int) -> str:
    """``2016-01-01T00:00:00.000000Z`` (the CSV format) for nanoseconds since the epoch."""
    return str(np.datetime64(int(ns) // 1_000, "us")) + "Z"


# ----------------------------------------------------------------------------- the rows


@dataclass
class _Chunk:
    """Rows of one chunk, column-major. The arrays may be views into reused buffers."""

    tags: np.ndarray  # (10, n) int32 indices into each tag's dictionary
    fields: np.ndarray  # (10, n) float64 or int64
    ts: np.ndarray  # (n,) int64 nanoseconds since the epoch, UTC
    next_ts: int | None  # first timestamp of the next chunk (None: last chunk)

    @property
    def n(self) -> int:
        return self.ts.shape[0]


def _draw_tags(rng: np.random.Generator, scale: int) -> np.ndarray:
    """(9, scale) int32 indices for every tag but hostname, in TAGS order."""
    out = np.empty((len(TAGS) - 1, scale), dtype=np.int32)
    dc_counts = np.array([len(v) for v in REGIONS.values()])
    dc_offsets = np.concatenate([[0], np.cumsum(dc_counts)[:-1]])
    for i, tag in enumerate(TAGS[1:]):
        if tag == "datacenter":
            region = out[0]
            out[i] = dc_offsets[region] + rng.integers(0, dc_counts[region])
        else:
            out[i] = rng.integers(0, len(TAG_VALUES[tag]), size=scale)
    return out


def _iter_rows(params: DatasetParams, chunk_rows: int, progress=None) -> Iterator[_Chunk]:
    """In-order chunks of whole epochs. Yielded arrays are reused: consume before the next."""
    scale, epochs = params.scale, params.epochs
    rng = np.random.default_rng(params.seed)
    host_tags = _draw_tags(rng, scale)
    state = rng.random((len(FIELDS), scale)) * 100.0

    k_max = max(1, min(epochs, chunk_rows // scale))
    n_max = k_max * scale
    tags = np.empty((len(TAGS), n_max), dtype=np.int32)
    tags[0] = np.tile(np.arange(scale, dtype=np.int32), k_max)
    for i in range(1, len(TAGS)):
        tags[i] = np.tile(host_tags[i - 1], k_max)
    values = np.empty((len(FIELDS), k_max, scale), dtype=np.float64)
    as_long = params.field_type == "long"
    longs = np.empty((len(FIELDS), n_max), dtype=np.int64) if as_long else None
    step = np.empty((len(FIELDS), scale), dtype=np.float64)
    offsets = np.repeat(np.arange(k_max, dtype=np.int64) * params.interval_ns, scale)
    ts = np.empty(n_max, dtype=np.int64)

    prev = state
    for e0 in range(0, epochs, k_max):
        k = min(k_max, epochs - e0)
        n = k * scale
        for j in range(k):
            cur = values[:, j, :]
            if e0 + j == 0:
                cur[...] = state
            else:
                rng.standard_normal(out=step)
                np.add(prev, step, out=cur)
                np.clip(cur, 0.0, 100.0, out=cur)
            prev = cur
        np.copyto(state, prev)  # the buffer is overwritten by the next chunk
        prev = state
        fields = values[:, :k, :].reshape(len(FIELDS), n)
        if longs is not None:
            np.copyto(longs[:, :n], fields, casting="unsafe")  # truncation, like Go's int64()
            fields = longs[:, :n]
        np.add(offsets[:n], params.start_ns + e0 * params.interval_ns, out=ts[:n])
        e1 = e0 + k
        next_ts = params.start_ns + e1 * params.interval_ns if e1 < epochs else None
        yield _Chunk(tags[:, :n], fields, ts[:n], next_ts)
        if progress is not None:
            progress(k)


def _shuffle_within_lag(chunks: Iterator[_Chunk], lag_ns: int, seed: int) -> Iterator[_Chunk]:
    """Stable sort by ``timestamp + U{0..lag_ns-1}``, chunk-wise with a carry (module docstring)."""
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    carry: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
    for chunk in chunks:
        keys = chunk.ts + rng.integers(0, lag_ns, size=chunk.n, dtype=np.int64)
        tags, fields, ts = chunk.tags, chunk.fields, chunk.ts
        if carry is not None:
            tags = np.concatenate([carry[0], tags], axis=1)
            fields = np.concatenate([carry[1], fields], axis=1)
            ts = np.concatenate([carry[2], ts])
            keys = np.concatenate([carry[3], keys])
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        done = keys.size if chunk.next_ts is None else int(np.searchsorted(keys, chunk.next_ts))
        head, tail = order[:done], order[done:]
        carry = (tags[:, tail], fields[:, tail], ts[tail], keys[done:])
        if done:
            yield _Chunk(tags[:, head], fields[:, head], ts[head], chunk.next_ts)


# ----------------------------------------------------------------------------- writers


# pa.array() imports pandas (over a second here) to sniff its input; from_buffers does not.


def _numeric_array(values: np.ndarray, arrow_type: pa.DataType) -> pa.Array:
    """Zero-copy Arrow array over a 1-D numpy array (no nulls)."""
    values = np.ascontiguousarray(values)
    return pa.Array.from_buffers(arrow_type, values.shape[0], [None, pa.py_buffer(values)])


def _string_array(values: Sequence[str]) -> pa.Array:
    encoded = [v.encode() for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    np.cumsum([len(v) for v in encoded], out=offsets[1:])
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]
    return pa.Array.from_buffers(pa.string(), len(encoded), buffers)


def _dictionaries(scale: int) -> list[pa.Array]:
    hosts = _string_array([f"host_{i}" for i in range(scale)])
    return [hosts] + [_string_array(TAG_VALUES[t]) for t in TAGS[1:]]


_TAG_TYPE = pa.dictionary(pa.int32(), pa.string())
_TS_TYPE = pa.timestamp("ns", tz="UTC")


def arrow_schema(field_type: str = "double") -> pa.Schema:
    """The Parquet file's Arrow schema: 10 dictionary tags, 10 fields, timestamp[ns, UTC]."""
    value_type = pa.float64() if field_type == "double" else pa.int64()
    return pa.schema(
        [pa.field(t, _TAG_TYPE, nullable=False) for t in TAGS]
        + [pa.field(f, value_type, nullable=False) for f in FIELDS]
        + [pa.field(TIMESTAMP, _TS_TYPE, nullable=False)]
    )


def column_schema(field_type: str = "double") -> list[dict[str, str]]:
    """Columns as the manifest records them (name, role, Arrow/Parquet type, CSV text, QuestDB)."""
    qdb_field = "DOUBLE" if field_type == "double" else "LONG"
    cols = [{"name": t, "role": "tag", "arrow": str(_TAG_TYPE), "questdb": "SYMBOL"} for t in TAGS]
    arrow_field = "double" if field_type == "double" else "int64"
    cols += [
        {"name": f, "role": "field", "arrow": arrow_field, "questdb": qdb_field} for f in FIELDS
    ]
    cols.append(
        {
            "name": TIMESTAMP,
            "role": "timestamp",
            "arrow": str(_TS_TYPE),
            "questdb": "TIMESTAMP",
            "csv": "ISO-8601 UTC, e.g. 2016-01-01T00:00:00.000000Z",
        }
    )
    return cols


def _tag_arrays(chunk: _Chunk, dictionaries: list[pa.Array]) -> list[pa.Array]:
    return [
        pa.DictionaryArray.from_arrays(_numeric_array(chunk.tags[i], pa.int32()), d, safe=False)
        for i, d in enumerate(dictionaries)
    ]


class _ParquetSink:
    def __init__(self, path: Path, params: DatasetParams, chunk_rows: int):
        import pyarrow.parquet as pq

        self.value_type = pa.float64() if params.field_type == "double" else pa.int64()
        self.schema = arrow_schema(params.field_type).with_metadata(
            {"ingestbench.dataset": params.name, "ingestbench.generator_version": GENERATOR_VERSION}
        )
        dictionary_columns = [*TAGS, TIMESTAMP]
        if params.field_type == "long":
            dictionary_columns += FIELDS  # 0..100: tiny dictionaries
        self.row_group_rows = max(chunk_rows, 1)
        self.writer = pq.ParquetWriter(
            str(path),
            self.schema,
            compression=PARQUET_COMPRESSION,
            use_dictionary=dictionary_columns,
            write_statistics=[*FIELDS, TIMESTAMP],  # tag min/max: costly, of no use
        )
        self.dictionaries = _dictionaries(params.scale)

    def write(self, chunk: _Chunk) -> None:
        ts = _numeric_array(chunk.ts, _TS_TYPE)
        fields = [_numeric_array(f, self.value_type) for f in chunk.fields]
        arrays = [*_tag_arrays(chunk, self.dictionaries), *fields, ts]
        table = pa.Table.from_arrays(arrays, schema=self.schema)
        self.writer.write_table(table, row_group_size=max(self.row_group_rows, chunk.n))

    def close(self) -> None:
        self.writer.close()


class _CsvSink:
    def __init__(self, path: Path, params: DatasetParams):
        import pyarrow.csv as pacsv

        self.params = params
        self.value_type = pa.float64() if params.field_type == "double" else pa.int64()
        self.schema = pa.schema(
            [pa.field(t, _TAG_TYPE) for t in TAGS]
            + [pa.field(f, self.value_type) for f in FIELDS]
            + [pa.field(TIMESTAMP, _TAG_TYPE)]
        )
        self.file = pa.OSFile(str(path), "wb")
        self.file.write((",".join(self.schema.names) + "\n").encode())
        options = pacsv.WriteOptions(include_header=False, quoting_style="none", batch_size=8192)
        self.writer = pacsv.CSVWriter(self.file, self.schema, write_options=options)
        self.dictionaries = _dictionaries(params.scale)

    def write(self, chunk: _Chunk) -> None:
        p = self.params
        epoch = (chunk.ts - p.start_ns) // p.interval_ns
        lo, hi = int(epoch.min()), int(epoch.max())
        first_us = (p.start_ns + lo * p.interval_ns) // 1_000
        stamps = np.arange(hi - lo + 1, dtype=np.int64) * (p.interval_ns // 1_000) + first_us
        text = np.char.add(np.datetime_as_string(stamps.astype("datetime64[us]"), unit="us"), "Z")
        ts = pa.DictionaryArray.from_arrays(
            _numeric_array((epoch - lo).astype(np.int32), pa.int32()),
            _string_array(text.tolist()),
            safe=False,
        )
        fields = [_numeric_array(f, self.value_type) for f in chunk.fields]
        arrays = [*_tag_arrays(chunk, self.dictionaries), *fields, ts]
        self.writer.write_table(pa.Table.from_arrays(arrays, schema=self.schema))

    def close(self) -> None:
        try:
            self.writer.close()
        finally:
            self.file.close()


# ----------------------------------------------------------------------------- generate


def _sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _package_version() -> str | None:
    try:
        from ingestbench import __version__
    except ImportError:
        return None
    return __version__


def _normalise_formats(formats: Sequence[str] | str) -> tuple[str, ...]:
    if isinstance(formats, str):
        formats = ("parquet", "csv") if formats == "both" else (formats,)
    chosen = tuple(dict.fromkeys(formats))
    bad = [f for f in chosen if f not in FORMATS]
    if bad or not chosen:
        raise GeneratorError(
            f"unknown output format {bad[0] if bad else 'none'!r}: "
            "choose parquet, csv, ilp or both (--format)."
        )
    return chosen


class _Progress:
    """tqdm bar on a terminal, and an INFO log line about every 10 % either way."""

    def __init__(self, total: int, name: str, bar: bool):
        self.total, self.name, self.done, self.next_log = total, name, 0, 0.1
        self.bar = None
        if bar and sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="epoch", desc=name, leave=False)

    def __call__(self, n: int) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        if self.done >= self.next_log * self.total or self.done == self.total:
            log.info("%s: %d/%d epochs", self.name, self.done, self.total)
            self.next_log = math.floor(self.done / self.total * 10 + 1) / 10

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def generate(
    params: DatasetParams,
    out_dir: Path | str,
    formats: Sequence[str] | str = FORMATS,
    progress: bool = True,
    *,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
) -> dict:
    """Write ``out_dir/<name>.parquet`` and/or ``.csv`` and ``<name>.manifest.json``.

    Every file goes to ``<final>.tmp-<pid>`` first and is renamed into place only when all are
    complete, so a failure leaves earlier files untouched and no partial file under a final name.
    Returns the manifest dict. Raises GeneratorError (one sentence) on bad input or an unwritable
    output directory. ``chunk_rows`` sets rows per chunk / row group (whole epochs); it changes
    the Parquet layout, never the rows.
    """
    if not isinstance(params, DatasetParams):
        raise GeneratorError(
            f"generate() needs a DatasetParams (got {type(params).__name__}): "
            "build one with DatasetParams(...) or DatasetParams.from_config(...)."
        )
    formats = _normalise_formats(formats)
    chunk_rows = _positive_int(chunk_rows, "chunk_rows", "chunk_rows", "chunk_rows")
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GeneratorError(
            f"cannot create the output directory {out_dir} ({exc.strerror or exc}): "
            "choose a writable output directory (--out)."
        ) from None

    name = params.name
    finals = {fmt: out_dir / f"{name}.{fmt}" for fmt in formats}
    finals["manifest"] = out_dir / f"{name}.manifest.json"
    temps = {key: path.with_name(f"{path.name}.tmp-{os.getpid()}") for key, path in finals.items()}
    log.info(
        "generating %s (%d rows) into %s as %s", name, params.rows, out_dir, ", ".join(formats)
    )

    sinks: dict = {}
    bar = _Progress(params.epochs, name, progress)
    current = temps[formats[0]]
    try:
        try:
            if "parquet" in formats:
                current = temps["parquet"]
                sinks["parquet"] = _ParquetSink(temps["parquet"], params, chunk_rows)
            if "csv" in formats:
                current = temps["csv"]
                sinks["csv"] = _CsvSink(temps["csv"], params)
            if "ilp" in formats:
                from .ilp_text import IlpSink  # imports this module

                current = temps["ilp"]
                sinks["ilp"] = IlpSink(temps["ilp"], params)
            chunks = _iter_rows(params, chunk_rows, bar)
            if params.lag_ns is not None:
                chunks = _shuffle_within_lag(chunks, params.lag_ns, params.seed)
            for chunk in chunks:
                for fmt, sink in sinks.items():
                    current = temps[fmt]
                    sink.write(chunk)
            for fmt, sink in sinks.items():
                current = temps[fmt]
                sink.close()
            sinks.clear()
            bar.close()

            files = {}
            for fmt in formats:
                current = temps[fmt]
                files[fmt] = {
                    "path": finals[fmt].name,
                    "bytes": temps[fmt].stat().st_size,
                    "sha256": _sha256(temps[fmt]),
                }
            if "parquet" in files:
                files["parquet"].update(compression=PARQUET_COMPRESSION, row_group_rows=chunk_rows)
            manifest = _manifest(params, files)
            current = temps["manifest"]
            temps["manifest"].write_text(json.dumps(manifest, indent=2) + "\n")
            for key in (*formats, "manifest"):
                current = finals[key]
                os.replace(temps[key], finals[key])
        except OSError as exc:
            reason = exc.strerror or (str(exc).splitlines() or [type(exc).__name__])[0]
            raise GeneratorError(
                f"cannot write {current} ({reason}): choose a writable output directory "
                "with enough free space (--out)."
            ) from None
    except BaseException:
        bar.close()
        for sink in sinks.values():
            with contextlib.suppress(Exception):
                sink.close()
        for path in temps.values():
            with contextlib.suppress(OSError):
                path.unlink()
        raise
    log.info("wrote %s", ", ".join(str(finals[k]) for k in (*formats, "manifest")))
    return manifest


def _manifest(params: DatasetParams, files: dict) -> dict:
    last_ns = params.start_ns + (params.epochs - 1) * params.interval_ns
    return {
        "schema_version": MANIFEST_SCHEMA_VERSION,
        "name": params.name,
        "params": params.to_dict(),
        "rows": params.rows,
        "hosts": params.scale,
        "epochs": params.epochs,
        "first_timestamp": format_timestamp(params.start_ns),
        "last_timestamp": format_timestamp(last_ns),
        "order": "in order" if params.lag_ns is None else "shuffled within the lag",
        "columns": column_schema(params.field_type),
        "files": files,
        "generator": {
            "module": __name__,
            "version": GENERATOR_VERSION,
            "ingestbench": _package_version(),
            "numpy": np.__version__,
            "pyarrow": pa.__version__,
        },
    }
