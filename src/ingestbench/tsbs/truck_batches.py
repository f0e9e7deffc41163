"""TSBS's batch layer of the iot use case (its iot Simulator and batch_config.go, and
``pkg/data/usecases/common``): which base points are dropped, held back and sent late, and which
tags and fields are blanked; a numba kernel on point indices.

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

The random draws are in ingestbench.tsbs.trucks (generator [2]).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ingestbench.tsbs.columns import DIAGNOSTICS, IOT_TAGS, READINGS


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

#: The count a zeroed field's index is drawn over: the most fields of a table (readings' 7).
MAX_FIELDS = max(len(READINGS.fields), len(DIAGNOSTICS.fields))


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


class BatchLayer:
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
