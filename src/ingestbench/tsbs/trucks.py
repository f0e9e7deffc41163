"""The TSBS iot use case: simulated trucks, their readings and diagnostics, and TSBS's batch
layer that drops, delays and blanks entries (ported from TSBS's ``pkg/data/usecases/iot`` and
``pkg/data/usecases/common``).

Semantics:

* Trucks ``truck_0 .. truck_<scale-1>``. Each draws once a model (F-150, G-2000, H-2), a fleet,
  a driver and a device version; its load_capacity, fuel_capacity and nominal_fuel_consumption
  tags are its model's, written as TSBS prints a float32 tag ("2000", "15").
* Every truck has one distribution per field, as TSBS defines them: clamped random walks
  (latitude and longitude steps uniform on ±0.005, elevation and velocity ±10, heading, grade and
  fuel_consumption ±5; start values uniform on [0, 90), [0, 180), [0, 500), 0, [0, 360), 0, 25);
  fuel_state a walk down by up to 0.001 per epoch from 1, refilled to 1 at 0; current_load
  a uniform value on [0, 5000) redrawn with chance 0.05 per epoch (0 until the first redraw);
  status a walk of N(0, 1) steps clamped to [0, 5]. Values are truncated to TSBS's precision
  (5 decimals for latitude and longitude, 1 for fuel_consumption and fuel_state, 0 for the rest)
  as Go's ``float64(int(v * 10^p)) / 10^p`` does; status is an integer.
* The base stream, per epoch: every truck's readings point, then every truck's diagnostics
  point, all at the epoch's timestamp ``start + epoch * interval``; epoch 0 holds the start
  values, every later epoch advances every distribution once.
* The batch layer (TSBS's iot Simulator, batches of 10 entries, chances in `IOT_CHANCES`): a
  batch goes missing (its 10 base points dropped), is held back and sent later in place of a
  new batch, or is made of entries of which each may go missing, be held back and take a later
  entry's place, or lose one field (index drawn over 7, modulo the entry's field count) or one
  tag (one of the 8) to a null. At the end, held-back batches come first, then the held-back
  entries in batches of 10. A null tag or field is an Arrow null in the tables.

Random draws: ``np.random.default_rng(seed)`` for the trucks, in this order: model, fleet,
driver and device version (each one vector over the trucks), the start values of latitude,
longitude, elevation and heading (each a vector); then per epoch >= 1, for each of the ten
distributions in field order (readings, then diagnostics), its draws for all trucks (current_load:
the redraw chance, then the new value). The batch layer has its own
``random.Random(seed)``, drawn in TSBS's order per batch. Neither depends on the chunk size.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ingestbench.tsbs.columns import DIAGNOSTICS, IOT_TAGS, READINGS, TableSpec
from ingestbench.tsbs.hosts import GENERATOR_CHUNK_ROWS
from ingestbench.tsbs.params import DatasetParams


@dataclass(frozen=True)
class Chances:
    """TSBS's iot batch_config.go."""

    batch_size: int = 10
    batch_missing: float = 0.01
    batch_out_of_order: float = 0.05
    insert_previous_batch: float = 0.5
    entry_missing: float = 0.1
    entry_out_of_order: float = 0.3
    insert_previous_entry: float = 0.5
    zero_tag: float = 0.01
    zero_field: float = 0.1


IOT_CHANCES = Chances()
#: Model -> (load_capacity, fuel_capacity, nominal_fuel_consumption), as TSBS prints them.
MODELS: dict[str, tuple[str, str, str]] = {
    "F-150": ("2000", "200", "15"),
    "G-2000": ("5000", "300", "19"),
    "H-2": ("1500", "150", "12"),
}
FLEETS = ("East", "West", "North", "South")
DRIVERS = ("Derek", "Rodney", "Albert", "Andy", "Seth", "Trish")
DEVICE_VERSIONS = ("v1.0", "v1.5", "v2.0", "v2.3")
#: The field count the zeroed field's index is drawn over (the most fields of a table: readings).
MAX_FIELDS = len(READINGS.fields)

TAG_TYPE = pa.dictionary(pa.int32(), pa.string())
TS_TYPE = pa.timestamp("ns", tz="UTC")
_ARROW_FIELD = {"double": pa.float64(), "long": pa.int64()}


def arrow_schema_for(spec: TableSpec) -> pa.Schema:
    """A table's Arrow schema: nullable dictionary tags and fields, a non-null timestamp."""
    return pa.schema(
        [pa.field(t, TAG_TYPE) for t in spec.tags]
        + [pa.field(f, _ARROW_FIELD[k]) for f, k in zip(spec.fields, spec.kinds, strict=True)]
        + [pa.field(spec.timestamp, TS_TYPE, nullable=False)]
    )


# ----------------------------------------------------------------------------- the trucks


class Trucks:
    """Every truck's tags and distributions, advanced one epoch at a time (vectorized)."""

    def __init__(self, scale: int, seed: int):
        rng = self.rng = np.random.default_rng(seed)
        n = self.n = scale
        self.model = rng.integers(0, len(MODELS), n).astype(np.int32)
        self.fleet = rng.integers(0, len(FLEETS), n).astype(np.int32)
        self.driver = rng.integers(0, len(DRIVERS), n).astype(np.int32)
        self.device = rng.integers(0, len(DEVICE_VERSIONS), n).astype(np.int32)
        # readings: latitude, longitude, elevation, velocity, heading, grade, fuel_consumption
        self.readings = np.empty((7, n))
        self.readings[0] = rng.random(n) * 90.0
        self.readings[1] = rng.random(n) * 180.0
        self.readings[2] = rng.random(n) * 500.0
        self.readings[3] = 0.0
        self.readings[4] = rng.random(n) * 360.0
        self.readings[5] = 0.0
        self.readings[6] = 25.0
        # diagnostics: fuel_state, current_load, status
        self.diagnostics = np.empty((3, n))
        self.diagnostics[0] = 1.0
        self.diagnostics[1] = 0.0
        self.diagnostics[2] = 0.0

    #: (step low, step high, min, max) of each readings walk (TSBS's readings.go)
    _WALKS = (
        (-0.005, 0.005, -90.0, 90.0),
        (-0.005, 0.005, -180.0, 180.0),
        (-10.0, 10.0, 0.0, 5000.0),
        (-10.0, 10.0, 0.0, 100.0),
        (-5.0, 5.0, 0.0, 360.0),
        (-5.0, 5.0, 0.0, 100.0),
        (-5.0, 5.0, 0.0, 50.0),
    )

    def tick(self) -> None:
        rng, n = self.rng, self.n
        for k, (lo, hi, low, high) in enumerate(self._WALKS):
            self.readings[k] += rng.random(n) * (hi - lo) + lo
            np.clip(self.readings[k], low, high, out=self.readings[k])
        fuel = self.diagnostics[0]
        fuel += rng.random(n) * -0.001
        np.clip(fuel, 0.0, 1.0, out=fuel)
        fuel[fuel == 0.0] = 1.0  # refilled when empty
        redraw = rng.random(n) >= 0.95
        loads = rng.random(n) * 5000.0
        self.diagnostics[1][redraw] = loads[redraw]
        status = self.diagnostics[2]
        status += rng.standard_normal(n)
        np.clip(status, 0.0, 5.0, out=status)

    def values(self) -> tuple[np.ndarray, np.ndarray]:
        """This epoch's field values at TSBS's precision: readings (7, n), diagnostics (3, n)."""
        readings = _truncate(self.readings, (5, 5, 0, 0, 0, 0, 1))
        diagnostics = _truncate(self.diagnostics, (1, 0, 0))
        return readings, diagnostics


def _truncate(values: np.ndarray, precisions: tuple[int, ...]) -> np.ndarray:
    scale = np.array([10.0**p for p in precisions])[:, None]
    return np.trunc(values * scale) / scale


# ------------------------------------------------------------------------- the batch layer


class BatchLayer:
    """TSBS's iot Simulator on point indices: which base points come out, in which order, with
    which field and tag blanked. `entries()` yields (point, zeroed field or -1, zeroed tag or -1);
    `consumed` is how many base points it has taken so far."""

    def __init__(self, points: int, seed: int, chances: Chances = IOT_CHANCES):
        self.points, self.consumed = points, 0
        self.rand = random.Random(seed)
        self.c = chances
        self.held_batches: list[list[tuple[int, int, int]]] = []
        self.held_entries: list[int] = []

    def _next_point(self) -> int | None:
        if self.consumed >= self.points:
            return None
        self.consumed += 1
        return self.consumed - 1

    def _config(self) -> dict | None:
        """One batch's draws, in TSBS's order (None: the batch goes missing)."""
        r, c = self.rand.random, self.c
        if r() < c.batch_missing:
            return None
        out_of_order = r() < c.batch_out_of_order
        insert_previous = bool(self.held_batches) and r() < c.insert_previous_batch
        held = len(self.held_entries)
        insert_entry, missing, late, zero_field, zero_tag = set(), set(), set(), {}, {}
        for i in range(c.batch_size):
            if held > 0 and r() < c.insert_previous_entry:
                insert_entry.add(i)
                held -= 1
            if r() < c.entry_missing:
                missing.add(i)
                continue
            if r() < c.zero_field:
                zero_field[i] = self.rand.randrange(MAX_FIELDS)
            if r() < c.zero_tag:
                zero_tag[i] = self.rand.randrange(len(IOT_TAGS))
            if r() < c.entry_out_of_order:
                late.add(i)
        return {"out_of_order": out_of_order, "insert_previous": insert_previous,
                "insert_entry": insert_entry, "missing": missing, "late": late,
                "zero_field": zero_field, "zero_tag": zero_tag}  # fmt: skip

    def _batch(self, bc: dict) -> list[tuple[int, int, int]]:
        batch, offset = [], 0
        for i in range(self.c.batch_size):
            if self.consumed >= self.points:
                break
            entry = None
            while entry is None:
                k = i + offset
                if k in bc["insert_entry"] and self.held_entries:
                    point = self.held_entries.pop(0)
                else:
                    point = self._next_point()
                    if point is None:
                        break
                if k in bc["missing"]:
                    offset += 1
                    continue
                if k in bc["late"]:
                    self.held_entries.append(point)
                    offset += 1
                    continue
                entry = point
            if entry is None:
                break
            batch.append((entry, bc["zero_field"].get(i, -1), bc["zero_tag"].get(i, -1)))
        return batch

    def _flush(self) -> None:
        for _ in range(self.c.batch_size):  # a missing batch: its base points are dropped
            if self._next_point() is None:
                break

    def entries(self) -> Iterator[tuple[int, int, int]]:
        while self.consumed < self.points:
            bc = self._config()
            if bc is None:
                self._flush()
            elif bc["insert_previous"]:
                yield from self.held_batches.pop(0)
            elif bc["out_of_order"]:
                batch = self._batch(bc)
                if batch:
                    self.held_batches.append(batch)
            else:
                yield from self._batch(bc)
        for batch in self.held_batches:  # the end: held batches first, then held entries
            yield from batch
        self.held_batches = []
        yield from ((p, -1, -1) for p in self.held_entries)
        self.held_entries = []

    def oldest_held(self) -> int | None:
        """The lowest point index still held back (values up to it must be kept)."""
        held = [p for b in self.held_batches for p, _f, _t in b] + self.held_entries
        return min(held) if held else None


# --------------------------------------------------------------------------- the tables


def _validity(null: np.ndarray) -> pa.Buffer | None:
    if not null.any():
        return None
    return pa.py_buffer(np.packbits(~null, bitorder="little"))


def _array(values: np.ndarray, null: np.ndarray, arrow_type: pa.DataType) -> pa.Array:
    values = np.ascontiguousarray(values)
    return pa.Array.from_buffers(
        arrow_type, len(values), [_validity(null), pa.py_buffer(values)], int(null.sum())
    )


def _dictionary(indices: np.ndarray, null: np.ndarray, values: pa.Array) -> pa.Array:
    return pa.DictionaryArray.from_arrays(
        _array(indices.astype(np.int32), null, pa.int32()), values, safe=False
    )


def _strings(values) -> pa.Array:
    from ingestbench.tsbs.writers import string_array

    return string_array(list(values))


class _Tables:
    """Builds the two tables of a chunk from the emitted entries and the kept epoch values."""

    def __init__(self, trucks: Trucks, params: DatasetParams):
        self.trucks, self.scale = trucks, params.scale
        self.start_ns, self.interval_ns = params.start_ns, params.interval_ns
        models = list(MODELS.values())
        self.dictionaries = {
            "name": _strings(f"truck_{i}" for i in range(params.scale)),
            "fleet": _strings(FLEETS),
            "driver": _strings(DRIVERS),
            "model": _strings(MODELS),
            "device_version": _strings(DEVICE_VERSIONS),
            "load_capacity": _strings(m[0] for m in models),
            "fuel_capacity": _strings(m[1] for m in models),
            "nominal_fuel_consumption": _strings(m[2] for m in models),
        }
        self.schemas = {spec.table: arrow_schema_for(spec) for spec in (READINGS, DIAGNOSTICS)}

    def tag_indices(self, truck: np.ndarray) -> dict[str, np.ndarray]:
        t = self.trucks
        model = t.model[truck]
        return {"name": truck, "fleet": t.fleet[truck], "driver": t.driver[truck],
                "model": model, "device_version": t.device[truck], "load_capacity": model,
                "fuel_capacity": model, "nominal_fuel_consumption": model}  # fmt: skip

    def build(self, entries: np.ndarray, values: dict[int, tuple]) -> dict[str, pa.Table]:
        """`entries`: (n, 3) point, zeroed field, zeroed tag; `values`: epoch -> its values."""
        out = {}
        per_epoch = 2 * self.scale
        for m, spec in enumerate((READINGS, DIAGNOSTICS)):
            rows = entries[(entries[:, 0] % per_epoch) // self.scale == m]
            point, zf, zt = rows[:, 0], rows[:, 1], rows[:, 2]
            epoch, truck = point // per_epoch, point % self.scale
            n, n_fields = len(point), len(spec.fields)
            fields = np.empty((n_fields, n))
            for e in np.unique(epoch):
                at = np.flatnonzero(epoch == e)
                fields[:, at] = values[int(e)][m][:, truck[at]]
            arrays = []
            for k, (tag, indices) in enumerate(self.tag_indices(truck).items()):
                arrays.append(_dictionary(indices, zt == k, self.dictionaries[tag]))
            blank = np.where(zf >= 0, zf % n_fields, -1)
            for k, kind in enumerate(spec.kinds):
                column = fields[k].astype(np.int64) if kind == "long" else fields[k]
                arrays.append(_array(column, blank == k, _ARROW_FIELD[kind]))
            ts = (self.start_ns + epoch * self.interval_ns).astype(np.int64)
            arrays.append(_array(ts, np.zeros(n, dtype=bool), TS_TYPE))
            out[spec.table] = pa.Table.from_arrays(arrays, schema=self.schemas[spec.table])
        return out


def iter_trucks(
    params: DatasetParams,
    chunk_points: int = GENERATOR_CHUNK_ROWS,
    progress: Callable[[int], None] | None = None,
) -> Iterator[dict[str, pa.Table]]:
    """{"readings": table, "diagnostics": table} chunks of about `chunk_points` entries each,
    in TSBS's emission order (module docstring); the same rows for any `chunk_points`."""
    scale, per_epoch = params.scale, 2 * params.scale
    trucks = Trucks(scale, params.seed)
    layer = BatchLayer(per_epoch * params.epochs, params.seed)
    tables = _Tables(trucks, params)
    values: dict[int, tuple] = {0: trucks.values()}
    made = 1  # epochs whose values exist
    if progress:
        progress(1)
    pending: list[tuple[int, int, int]] = []
    for entry in layer.entries():
        pending.append(entry)
        needed = (layer.consumed - 1) // per_epoch  # the newest epoch a held entry may be of
        while made <= min(needed, params.epochs - 1):
            trucks.tick()
            values[made] = trucks.values()
            made += 1
            if progress:
                progress(1)
        if len(pending) >= chunk_points:
            yield tables.build(np.array(pending, dtype=np.int64), values)
            pending = []
            oldest = layer.oldest_held()
            keep = min(oldest, layer.consumed) // per_epoch if oldest is not None else needed
            for e in [e for e in values if e < keep]:
                del values[e]
    while made < params.epochs:  # trailing epochs dropped whole: still part of the walk
        trucks.tick()
        made += 1
        if progress:
            progress(1)
    if pending:
        yield tables.build(np.array(pending, dtype=np.int64), values)
