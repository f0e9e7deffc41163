"""The TSBS "iot" use case: simulated trucks, their readings and diagnostics, and TSBS's batch
layer that drops, delays and blanks entries, ported from TSBS's ``pkg/data/usecases/iot`` and
``pkg/data/usecases/common``, streamed as Arrow tables.

The trucks and their walks are in ingestbench.tsbs.truck_fleet, the batch layer in
ingestbench.tsbs.truck_batches; here, the stream of base points they share and the tables made of
what the batch layer emits. Semantics (taken from TSBS's Go source):

* The base stream (BaseSimulator.Next): per epoch, every truck's readings point, then every
  truck's diagnostics point, all at the epoch's timestamp ``start + epoch * interval``; epoch 0
  holds the start values, every later epoch advances every distribution once. Base point ``p``
  is of epoch ``p // (2 * scale)``, table ``(p // scale) % 2`` (0 readings, 1 diagnostics) and
  truck ``p % scale``; there are ``2 * scale * epochs`` of them.

Random draws (none depend on the chunk size): ``np.random.default_rng(seed)`` for the trucks:
model, fleet, driver, device version (``rng.integers(0, k, scale)`` each, in that order), then
the start values of latitude, longitude, elevation and heading (``rng.random(scale) * bound``
each). Three generators from ``np.random.SeedSequence(seed).spawn(3)``: [0] per epoch >= 1,
``9 * scale + 1`` uniforms: the steps of the seven readings walks (field-major, trucks in
order), the fuel_state steps, the load motives, then the one new load; [1] per epoch >= 1,
``scale`` standard normals, the status steps; [2] the batch layer: uniforms taken one at a time
in TSBS's order (truck_batches; an index is ``int(u * count)``), drawn in blocks of 65,536.

Output: `iter_trucks` yields ``{"readings": table, "diagnostics": table}``, each with
`arrow_schema_for` its `TableSpec` (``columns.READINGS``, ``columns.DIAGNOSTICS``); concatenated
per table, the rows are in TSBS's emission order, so held-back rows come after rows of later
epochs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pyarrow as pa

from ingestbench.tables.spec import TableSpec
from ingestbench.tsbs.columns import DIAGNOSTICS, READINGS
from ingestbench.tsbs.hosts import ROW_GROUP_ROWS
from ingestbench.tsbs.params import DatasetParams
from ingestbench.tsbs.truck_batches import BatchLayer
from ingestbench.tsbs.truck_fleet import DEVICE_VERSIONS, DRIVERS, FLEETS, MODELS, Trucks

#: The iot tables in the order a base point's table index refers to.
TABLES: tuple[TableSpec, ...] = (READINGS, DIAGNOSTICS)

TAG_TYPE = pa.dictionary(pa.int32(), pa.string())
TS_TYPE = pa.timestamp("ns", tz="UTC")
_FIELD_TYPE = {"double": pa.float64(), "long": pa.int64()}


def arrow_schema_for(spec: TableSpec) -> pa.Schema:
    """A table's Arrow schema: nullable dictionary tags and fields, a non-null timestamp."""
    return pa.schema(
        [pa.field(t, TAG_TYPE) for t in spec.tags]
        + [pa.field(f, _FIELD_TYPE[k]) for f, k in zip(spec.fields, spec.kinds, strict=True)]
        + [pa.field(spec.timestamp, TS_TYPE, nullable=False)]
    )


def _validity(null: np.ndarray) -> tuple[pa.Buffer | None, int]:
    nulls = int(np.count_nonzero(null))
    if not nulls:
        return None, 0
    return pa.py_buffer(np.packbits(~null, bitorder="little")), nulls


def _array(values: np.ndarray, null: np.ndarray | None, arrow_type: pa.DataType) -> pa.Array:
    """Arrow array over a 1-D numpy array, null where `null` (no pandas)."""
    values = np.ascontiguousarray(values)
    validity, nulls = (None, 0) if null is None else _validity(null)
    return pa.Array.from_buffers(
        arrow_type, len(values), [validity, pa.py_buffer(values)], null_count=nulls
    )


def _strings(values) -> pa.Array:
    """A string array (no nulls), built from its buffers."""
    encoded = [v.encode() for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    np.cumsum([len(v) for v in encoded], out=offsets[1:])
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]
    return pa.Array.from_buffers(pa.string(), len(encoded), buffers)


class _Tables:
    """Builds a chunk's two tables from its entries and the window of epoch values."""

    def __init__(self, trucks: Trucks, params: DatasetParams):
        self.trucks, self.n = trucks, params.scale
        self.start_ns, self.interval_ns = params.start_ns, params.interval_ns
        models = list(MODELS.values())
        self.dictionaries = [
            _strings(f"truck_{i}" for i in range(params.scale)),
            _strings(FLEETS),
            _strings(DRIVERS),
            _strings(MODELS),
            _strings(DEVICE_VERSIONS),
            *(_strings(m[j] for m in models) for j in range(3)),
        ]
        self.schemas = [arrow_schema_for(spec) for spec in TABLES]
        self.lo = 0  # the window's first epoch
        self.window: list[np.ndarray] = [np.empty((7, 0)), np.empty((3, 0))]

    def extend(self, stop: int) -> None:
        """Make the epochs up to stop-1 and add them to the window."""
        if stop > self.trucks.made:
            readings, diagnostics = self.trucks.values(stop)
            self.window = [
                np.concatenate([self.window[0], readings], axis=1),
                np.concatenate([self.window[1], diagnostics], axis=1),
            ]

    def trim(self, keep: int) -> None:
        """Drop the window's epochs before `keep`."""
        if keep > self.lo:
            cut = (keep - self.lo) * self.n
            self.window = [w[:, cut:].copy() for w in self.window]
            self.lo = keep

    def build(self, entries: np.ndarray) -> dict[str, pa.Table]:
        n = self.n
        point = entries[:, 0]
        epoch, rest = np.divmod(point, 2 * n)
        table = rest >= n
        out = {}
        for m, spec in enumerate(TABLES):
            rows = np.flatnonzero(table == m)
            truck = rest[rows] - m * n
            row_epoch = epoch[rows]
            zf, zt = entries[rows, 1], entries[rows, 2]
            arrays = []
            tags = self.trucks.tags[:, truck]
            for k, dictionary in enumerate(self.dictionaries):
                indices = _array(tags[k], zt == k, pa.int32())
                arrays.append(pa.DictionaryArray.from_arrays(indices, dictionary, safe=False))
            column = (row_epoch - self.lo) * n + truck
            n_fields = len(spec.fields)
            blank = np.where(zf >= 0, zf % n_fields, -1)
            values = self.window[m]
            for f, kind in enumerate(spec.kinds):
                v = values[f].take(column)
                if kind == "long":
                    v = v.astype(np.int64)
                arrays.append(_array(v, blank == f, _FIELD_TYPE[kind]))
            ts = row_epoch * self.interval_ns + self.start_ns
            arrays.append(_array(ts, None, TS_TYPE))
            out[spec.table] = pa.Table.from_arrays(arrays, schema=self.schemas[m])
        return out


def iter_trucks(
    params: DatasetParams,
    chunk_points: int = ROW_GROUP_ROWS,
    progress: Callable[[int], None] | None = None,
) -> Iterator[dict[str, pa.Table]]:
    """``{"readings": table, "diagnostics": table}`` chunks, each the entries the batch layer
    emits while it takes about `chunk_points` base points (whole epochs, at least one), in TSBS's
    emission order (module docstring); the same rows for any `chunk_points`. `progress(k)` gets
    the epochs the base simulator has finished since its last call."""
    n, epochs = params.scale, params.epochs
    per_epoch = 2 * n
    total = per_epoch * epochs
    step = max(1, chunk_points // per_epoch) * per_epoch
    trucks = Trucks(n, params.seed)
    layer = BatchLayer(total, params.seed)
    tables = _Tables(trucks, params)
    reported = 0
    yielded = False
    stop_at = 0
    while stop_at < total:
        stop_at = min(stop_at + step, total)
        entries = layer.run(stop_at)
        consumed = layer.consumed
        tables.extend(-(-consumed // per_epoch))  # every epoch a taken point is of
        last = stop_at == total
        # An empty chunk is left out, unless it is the last and nothing came before it.
        chunk = tables.build(entries) if len(entries) or (last and not yielded) else None
        oldest = layer.oldest_held()
        tables.trim((consumed if oldest is None else min(oldest, consumed)) // per_epoch)
        if chunk is not None:
            yielded = True
            yield chunk
        done = epochs if last else min(consumed // per_epoch, epochs)
        if progress is not None and done > reported:
            progress(done - reported)
        reported = done
