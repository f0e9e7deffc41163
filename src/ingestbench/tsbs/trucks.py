"""The TSBS "iot" use case: simulated trucks, their readings and diagnostics, and TSBS's batch
layer that drops, delays and blanks entries, ported from TSBS's ``pkg/data/usecases/iot`` and
``pkg/data/usecases/common``, streamed as Arrow tables.

Semantics (taken from TSBS's Go source):

* Trucks ``truck_0 .. truck_{scale-1}``. Each draws once a model (F-150, G-2000, H-2), a fleet
  (4), a driver (6) and a device version (4); its load_capacity, fuel_capacity and
  nominal_fuel_consumption tags are its model's (`MODELS`), written as TSBS prints a float32 tag
  (``"2000"``, ``"15"``). The eight tags are in `IOT_TAGS` order, name first.
* Each truck has one distribution per field (readings.go, diagnostics.go); every value is cut to
  its precision as Go's ``float64(int(v * 10^p)) / 10^p`` does (truncation toward zero):

  =================  ===========================  ==============  ============  =========
  field              clamped random walk, step     bounds          start         precision
  =================  ===========================  ==============  ============  =========
  latitude           uniform on [-0.005, 0.005)   [-90, 90]       U[0, 90)      5
  longitude          uniform on [-0.005, 0.005)   [-180, 180]     U[0, 180)     5
  elevation          uniform on [-10, 10)         [0, 5000]       U[0, 500)     0
  velocity           uniform on [-10, 10)         [0, 100]        0             0
  heading            uniform on [-5, 5)           [0, 360]        U[0, 360)     0
  grade              uniform on [-5, 5)           [0, 100]        0             0
  fuel_consumption   uniform on [-5, 5)           [0, 50]         25            1
  fuel_state         uniform on [-0.001, 0)       [0, 1]          1             1
  status             normal N(0, 1)               [0, 5]          0             0 (int64)
  =================  ===========================  ==============  ============  =========

  fuel_state is refilled to 1 whenever its walk hits 0 (TSBS's customFuelDistribution).
  current_load is TSBS's lazy distribution: each epoch each truck's "motive" is uniform on
  [0, 1) and at 0.95 or above the load is redrawn uniform on [0, 5000), precision 0. In TSBS
  the redrawn uniform is one package-level ``loadUD`` shared by every truck, and every truck's
  current_load reads that shared value; so all trucks report the same current_load in an epoch:
  0 until the first redraw, then the value drawn by the last truck that redrew (kept while none
  does). This port keeps that: one value per epoch, redrawn when any truck's motive fires.
* The base stream (BaseSimulator.Next): per epoch, every truck's readings point, then every
  truck's diagnostics point, all at the epoch's timestamp ``start + epoch * interval``; epoch 0
  holds the start values, every later epoch advances every distribution once. Base point ``p``
  is of epoch ``p // (2 * scale)``, table ``(p // scale) % 2`` (0 readings, 1 diagnostics) and
  truck ``p % scale``; there are ``2 * scale * epochs`` of them.
* The batch layer (TSBS's iot Simulator and batch_config.go, chances in `IOT_CHANCES`), one
  *config* per batch of 10 entries. A config is missing (1 %): the next 10 base points are
  dropped. Otherwise it draws out-of-order (5 %), insert-previous (50 %, only while a held batch
  exists) and, for each position ``i`` of 0..9: insert-previous-entry (50 %, only while the held
  entries counted at the config's start are not used up), missing (10 %; a missing position
  draws nothing more), zero-field (10 %, then an index uniform over 7, the most fields of a
  table), zero-tag (1 %, then an index uniform over the 8 tags), out-of-order (30 %).
  Insert-previous: the oldest held batch is emitted as it is. Out-of-order: a batch is built and
  held instead of emitted. Else a batch is built and emitted. Building a batch fills positions
  ``i = 0..9``; with ``offset`` starting at 0, position ``i`` looks at flags ``k = i + offset``
  (none beyond 9): the entry is the oldest held entry if insert-previous-entry[k], else the next
  base point; if missing[k] it is dropped, if out-of-order[k] it is appended to the held
  entries, and in both cases ``offset`` grows and the next entry is tried for the same ``i``.
  The entry placed at ``i`` then loses field ``index % its field count`` (readings 7,
  diagnostics 3: fuel_state takes 3 of the 7 indices) if zero-field[i], and tag ``index`` if
  zero-tag[i] (the zero flags are keyed by the position, the others by ``k``, as in TSBS). A
  zeroed tag or field is an Arrow null; a zeroed ``name`` leaves the row without a truck name,
  as TSBS's serializers leave the tag out of the line.
* The end: once every base point is taken, no config is drawn; the held batches are emitted
  (oldest first), then the held entries (oldest first, in batches of 10, none zeroed), as
  TSBS's batchPending does.
* One deviation: TSBS's base simulator never refuses a point, so a batch being built when its
  limit is reached keeps taking points past it (from an extra epoch stamped at the end time,
  after a missing or out-of-order flag). Here the stream stops at the limit (the batch is cut
  short as TSBS's ``valid == false`` branch intends), so every timestamp is within the epochs.

Random draws (none depend on the chunk size): ``np.random.default_rng(seed)`` for the trucks:
model, fleet, driver, device version (``rng.integers(0, k, scale)`` each, in that order), then
the start values of latitude, longitude, elevation and heading (``rng.random(scale) * bound``
each). Three generators from ``np.random.SeedSequence(seed).spawn(3)``: [0] per epoch >= 1,
``9 * scale + 1`` uniforms: the steps of the seven readings walks (field-major, trucks in
order), the fuel_state steps, the load motives, then the one new load; [1] per epoch >= 1,
``scale`` standard normals, the status steps; [2] the batch layer: uniforms taken one at a time
in TSBS's order above (an index is ``int(u * count)``), drawn in blocks of 65,536.

Output: `iter_trucks` yields ``{"readings": table, "diagnostics": table}``, each with
`arrow_schema_for` its `TableSpec` (``columns.READINGS``, ``columns.DIAGNOSTICS``); concatenated
per table, the rows are in TSBS's emission order, so held-back rows come after rows of later
epochs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pyarrow as pa
from numba import njit

from ingestbench.tsbs.columns import DIAGNOSTICS, IOT_TAGS, READINGS, TableSpec
from ingestbench.tsbs.hosts import GENERATOR_CHUNK_ROWS
from ingestbench.tsbs.params import DatasetParams


@dataclass(frozen=True)
class Chances:
    """TSBS's iot batch_config.go (and simulator.go's batch size)."""

    batch_missing: float = 0.01
    batch_out_of_order: float = 0.05
    insert_previous_batch: float = 0.5
    entry_missing: float = 0.1
    entry_out_of_order: float = 0.3
    insert_previous_entry: float = 0.5
    zero_tag: float = 0.01
    zero_field: float = 0.1
    batch_size: int = 10


IOT_CHANCES = Chances()


class Model(NamedTuple):
    """A truck model's capacity tags, as TSBS prints its float32 values."""

    load_capacity: str
    fuel_capacity: str
    nominal_fuel_consumption: str


#: TSBS's truck models (truck.go), in the order a truck's model index refers to.
MODELS: dict[str, Model] = {
    "F-150": Model("2000", "200", "15"),
    "G-2000": Model("5000", "300", "19"),
    "H-2": Model("1500", "150", "12"),
}
FLEETS: tuple[str, ...] = ("East", "West", "North", "South")
DRIVERS: tuple[str, ...] = ("Derek", "Rodney", "Albert", "Andy", "Seth", "Trish")
DEVICE_VERSIONS: tuple[str, ...] = ("v1.0", "v1.5", "v2.0", "v2.3")
#: The count a zeroed field's index is drawn over: the most fields of a table (readings' 7).
MAX_FIELDS = max(len(READINGS.fields), len(DIAGNOSTICS.fields))
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


# ------------------------------------------------------------------------------ the walks

#: The readings walks (readings.go): step low, step high, min, max, 10^precision.
_STEP_LO = np.array([-0.005, -0.005, -10.0, -10.0, -5.0, -5.0, -5.0])
_STEP_HI = np.array([0.005, 0.005, 10.0, 10.0, 5.0, 5.0, 5.0])
_MIN = np.array([-90.0, -180.0, 0.0, 0.0, 0.0, 0.0, 0.0])
_MAX = np.array([90.0, 180.0, 5000.0, 100.0, 360.0, 100.0, 50.0])
_PRECISION = np.array([1e5, 1e5, 1.0, 1.0, 1.0, 1.0, 10.0])
#: Uniforms per truck and epoch: 7 readings steps, the fuel step, the load motive.
_UNIFORMS = 9
_LOAD_THRESHOLD = 1 - 0.05  # TSBS's 1 - loadChangeChance
_MAX_LOAD = 5000.0


@njit(cache=True, nogil=True)
def _walk(state, load, uniforms, normals, out_r, out_d):
    """Advance every walk one epoch per row of `normals`, writing each epoch's values at TSBS's
    precision. state: (9, n) latitude .. fuel_consumption, fuel_state, status; load: (1,) the
    shared current_load; uniforms: (k, 9n + 1); normals: (k, n); out_r: (7, k n), out_d:
    (3, k n), epoch-major columns."""
    k, n = normals.shape
    for e in range(k):
        base = e * n
        for f in range(7):
            lo, width = _STEP_LO[f], _STEP_HI[f] - _STEP_LO[f]
            low, high, scale = _MIN[f], _MAX[f], _PRECISION[f]
            for t in range(n):
                s = state[f, t] + (uniforms[e, f * n + t] * width + lo)
                if s > high:
                    s = high
                if s < low:
                    s = low
                state[f, t] = s
                out_r[f, base + t] = np.trunc(s * scale) / scale + 0.0  # +0.0: Go has no -0
        fired = False
        for t in range(n):
            s = state[7, t] + (uniforms[e, 7 * n + t] * 0.001 - 0.001)
            if s > 1.0:
                s = 1.0
            if s < 0.0:
                s = 0.0
            if s == 0.0:  # refuelled when empty
                s = 1.0
            state[7, t] = s
            out_d[0, base + t] = np.trunc(s * 10.0) / 10.0
            if uniforms[e, 8 * n + t] >= _LOAD_THRESHOLD:
                fired = True
            s = state[8, t] + normals[e, t]
            if s > 5.0:
                s = 5.0
            if s < 0.0:
                s = 0.0
            state[8, t] = s
            out_d[2, base + t] = np.trunc(s)
        if fired:
            load[0] = uniforms[e, 9 * n] * _MAX_LOAD
        current = np.trunc(load[0])
        for t in range(n):
            out_d[1, base + t] = current


class _Trucks:
    """Every truck's tags and walks; `values(stop)` makes the epochs up to stop - 1."""

    def __init__(self, scale: int, seed: int):
        rng = np.random.default_rng(seed)
        n = self.n = scale
        self.model = rng.integers(0, len(MODELS), n)
        fleet = rng.integers(0, len(FLEETS), n)
        driver = rng.integers(0, len(DRIVERS), n)
        device = rng.integers(0, len(DEVICE_VERSIONS), n)
        #: (8, n) int32 indices into each tag's dictionary, in IOT_TAGS order.
        self.tags = np.stack([np.arange(n), fleet, driver, self.model, device,
                              self.model, self.model, self.model]).astype(np.int32)  # fmt: skip
        self.state = np.zeros((9, n))
        self.state[0] = rng.random(n) * 90.0
        self.state[1] = rng.random(n) * 180.0
        self.state[2] = rng.random(n) * 500.0
        self.state[4] = rng.random(n) * 360.0
        self.state[6] = 25.0  # fuel_consumption: maxFuelConsumption / 2
        self.state[7] = 1.0  # fuel_state: full
        self.load = np.zeros(1)  # current_load: the shared loadUD's value, 0 until drawn
        uniforms, normals, _batches = np.random.SeedSequence(seed).spawn(3)
        self.uniforms = np.random.default_rng(uniforms)
        self.normals = np.random.default_rng(normals)
        self.made = 0  # epochs whose values have been made

    def values(self, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Epochs made..stop-1: readings (7, k n) and diagnostics (3, k n), epoch-major."""
        n, k = self.n, stop - self.made
        out_r, out_d = np.empty((7, k * n)), np.empty((3, k * n))
        first = 0
        if self.made == 0 and k > 0:  # epoch 0: the start values
            out_r[:, :n] = (
                np.trunc(self.state[:7] * _PRECISION[:, None]) / _PRECISION[:, None] + 0.0
            )
            out_d[:, :n] = np.array([[1.0], [0.0], [0.0]])  # full, no load, status 0
            first = 1
        if k > first:
            uniforms = self.uniforms.random((k - first, _UNIFORMS * n + 1))
            normals = self.normals.standard_normal((k - first, n))
            _walk(self.state, self.load, uniforms, normals, out_r[:, first * n :],
                  out_d[:, first * n :])  # fmt: skip
        self.made = stop
        return out_r, out_d


# ------------------------------------------------------------------------ the batch layer

# The kernel's state vector.
_CONSUMED, _TOTAL, _HB_HEAD, _HB_COUNT, _HE_HEAD, _HE_COUNT, _CURSOR = range(7)
# Why the kernel returned.
_STOP, _DONE, _OUT_FULL, _NEED_UNIFORMS, _HB_FULL, _HE_FULL = range(6)
_BLOCK = 1 << 16  # batch-layer uniforms drawn at a time


@njit(cache=True, nogil=True)
def _build(st, u, he, ins, miss, late, zf, zt, dest):
    """TSBS's generateBatch + getNextEntry on point indices: fill dest (10, 3) with (point,
    zeroed field index or -1, zeroed tag index or -1); returns the entries placed."""
    size = ins.shape[0]
    ce = he.shape[0]
    offset = 0
    placed = 0
    for i in range(size):
        if st[_CONSUMED] >= st[_TOTAL]:
            break
        got = -1
        while True:
            k = i + offset
            if k < size and ins[k]:
                point = he[st[_HE_HEAD]]
                st[_HE_HEAD] = (st[_HE_HEAD] + 1) % ce
                st[_HE_COUNT] -= 1
            elif st[_CONSUMED] < st[_TOTAL]:
                point = st[_CONSUMED]
                st[_CONSUMED] += 1
            else:
                break  # the base simulator is finished: the batch ends here
            if k < size and miss[k]:
                offset += 1
                continue
            if k < size and late[k]:
                he[(st[_HE_HEAD] + st[_HE_COUNT]) % ce] = point
                st[_HE_COUNT] += 1
                offset += 1
                continue
            got = point
            break
        if got < 0:
            break
        dest[i, 0] = got
        dest[i, 1] = zf[i]
        dest[i, 2] = zt[i]
        placed += 1
    return placed


@njit(cache=True, nogil=True)
def _emit_held_batch(st, hb, hb_len, cb, out, n):
    """Append the oldest held batch to `out` from row `n`, drop it from the ring; the new n."""
    head = st[_HB_HEAD]
    for j in range(hb_len[head]):
        out[n, 0], out[n, 1], out[n, 2] = hb[head, j, 0], hb[head, j, 1], hb[head, j, 2]
        n += 1
    st[_HB_HEAD] = (head + 1) % cb
    st[_HB_COUNT] -= 1
    return n


@njit(cache=True, nogil=True)
def _advance(st, chances, n_fields, n_tags, u, he, hb, hb_len, out, stop_at):
    """Run TSBS's iot Simulator on point indices until `stop_at` base points are taken (or the
    end, its held items flushed), appending (point, zeroed field, zeroed tag) rows to `out`.
    Returns (rows written, why it stopped); all state is in st, he, hb, hb_len."""
    b_missing, b_late, b_insert = chances[0], chances[1], chances[2]
    e_missing, e_late, e_insert = chances[3], chances[4], chances[5]
    zero_tag, zero_field = chances[6], chances[7]
    size = hb.shape[1]
    cb, ce, cap, nu = hb.shape[0], he.shape[0], out.shape[0], u.shape[0]
    ins = np.zeros(size, np.bool_)
    miss = np.zeros(size, np.bool_)
    late = np.zeros(size, np.bool_)
    zf = np.full(size, -1, np.int64)
    zt = np.full(size, -1, np.int64)
    per_config = 3 + 7 * size  # the most uniforms one config takes
    n = 0
    while True:
        if st[_CONSUMED] >= st[_TOTAL]:  # the end: held batches, then held entries
            while st[_HB_COUNT] > 0 and n + size <= cap:
                n = _emit_held_batch(st, hb, hb_len, cb, out, n)
            if st[_HB_COUNT] > 0:
                return n, _OUT_FULL
            while st[_HE_COUNT] > 0 and n < cap:
                out[n, 0], out[n, 1], out[n, 2] = he[st[_HE_HEAD]], -1, -1
                n += 1
                st[_HE_HEAD] = (st[_HE_HEAD] + 1) % ce
                st[_HE_COUNT] -= 1
            return n, (_OUT_FULL if st[_HE_COUNT] > 0 else _DONE)
        if st[_CONSUMED] >= stop_at:
            return n, _STOP
        if n + size > cap:
            return n, _OUT_FULL
        if st[_CURSOR] + per_config > nu:
            return n, _NEED_UNIFORMS
        if st[_HB_COUNT] >= cb:
            return n, _HB_FULL
        if st[_HE_COUNT] + size > ce:
            return n, _HE_FULL
        # newBatchConfig, its draws in TSBS's order
        c = st[_CURSOR]
        missing = u[c] < b_missing
        c += 1
        if missing:  # flushBatch: the next batch of base points is dropped
            st[_CURSOR] = c
            st[_CONSUMED] = min(st[_CONSUMED] + size, st[_TOTAL])
            continue
        out_of_order = u[c] < b_late
        c += 1
        insert_previous = False
        if st[_HB_COUNT] > 0:
            insert_previous = u[c] < b_insert
            c += 1
        held = st[_HE_COUNT]
        for i in range(size):
            ins[i] = miss[i] = late[i] = False
            zf[i] = zt[i] = -1
            if held > 0:
                if u[c] < e_insert:
                    ins[i] = True
                    held -= 1
                c += 1
            miss[i] = u[c] < e_missing
            c += 1
            if miss[i]:
                continue
            if u[c] < zero_field:
                zf[i] = min(int(u[c + 1] * n_fields), n_fields - 1)
                c += 1
            c += 1
            if u[c] < zero_tag:
                zt[i] = min(int(u[c + 1] * n_tags), n_tags - 1)
                c += 1
            c += 1
            late[i] = u[c] < e_late
            c += 1
        st[_CURSOR] = c
        if insert_previous:  # the oldest held batch, as it is
            n = _emit_held_batch(st, hb, hb_len, cb, out, n)
        elif out_of_order:  # built, then held
            slot = (st[_HB_HEAD] + st[_HB_COUNT]) % cb
            placed = _build(st, u, he, ins, miss, late, zf, zt, hb[slot])
            if placed > 0:
                hb_len[slot] = placed
                st[_HB_COUNT] += 1
        else:
            n += _build(st, u, he, ins, miss, late, zf, zt, out[n : n + size])


class _BatchLayer:
    """The kernel's state between chunks, and its buffers (grown when they fill)."""

    def __init__(self, total: int, seed: int, chances: Chances = IOT_CHANCES):
        self.rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(3)[2])
        self.size = chances.batch_size
        self.st = np.zeros(7, dtype=np.int64)
        self.st[_TOTAL] = total
        self.chances = np.array([
            chances.batch_missing, chances.batch_out_of_order, chances.insert_previous_batch,
            chances.entry_missing, chances.entry_out_of_order, chances.insert_previous_entry,
            chances.zero_tag, chances.zero_field,
        ])  # fmt: skip
        self.u = self.rng.random(_BLOCK)
        self.he = np.empty(1024, dtype=np.int64)
        self.hb = np.empty((64, self.size, 3), dtype=np.int64)
        self.hb_len = np.zeros(64, dtype=np.int64)

    @property
    def consumed(self) -> int:
        return int(self.st[_CONSUMED])

    def run(self, stop_at: int) -> np.ndarray:
        """Entries (m, 3) emitted until `stop_at` base points are taken (or all, and the end)."""
        st, pieces = self.st, []
        while True:
            held = int(st[_HE_COUNT]) + self.size * int(st[_HB_COUNT])
            cap = max(stop_at - int(st[_CONSUMED]), 0) + held + 4 * self.size
            out = np.empty((cap, 3), dtype=np.int64)
            n, why = _advance(st, self.chances, MAX_FIELDS, len(IOT_TAGS), self.u, self.he,
                              self.hb, self.hb_len, out, stop_at)  # fmt: skip
            pieces.append(out[:n])
            if why in (_STOP, _DONE):
                break
            if why == _NEED_UNIFORMS:
                self.u = np.concatenate([self.u[st[_CURSOR] :], self.rng.random(_BLOCK)])
                st[_CURSOR] = 0
            elif why == _HE_FULL:
                self.he = self._grow(self.he, _HE_HEAD, _HE_COUNT)
            elif why == _HB_FULL:
                self.hb_len = self._grow(self.hb_len, _HB_HEAD, _HB_COUNT, move_head=False)
                self.hb = self._grow(self.hb, _HB_HEAD, _HB_COUNT)
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)

    def _grow(self, ring: np.ndarray, head: int, count: int, move_head: bool = True):
        """The ring buffer twice as large, its items first in order (head reset to 0)."""
        order = (self.st[head] + np.arange(self.st[count])) % len(ring)
        grown = np.empty((2 * len(ring), *ring.shape[1:]), dtype=ring.dtype)
        grown[: len(order)] = ring[order]
        if move_head:
            self.st[head] = 0
        return grown

    def oldest_held(self) -> int | None:
        """The lowest point index still held back (an entry or in a batch), None if none."""
        st = self.st
        entries = self.he[(st[_HE_HEAD] + np.arange(st[_HE_COUNT])) % len(self.he)]
        slots = (st[_HB_HEAD] + np.arange(st[_HB_COUNT])) % len(self.hb)
        lows = [int(entries.min())] if entries.size else []
        lows += [int(self.hb[s, : self.hb_len[s], 0].min()) for s in slots]
        return min(lows) if lows else None


# --------------------------------------------------------------------------- the tables


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

    def __init__(self, trucks: _Trucks, params: DatasetParams):
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
    chunk_points: int = GENERATOR_CHUNK_ROWS,
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
    trucks = _Trucks(n, params.seed)
    layer = _BatchLayer(total, params.seed)
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
