"""Integers as ILP text, compiled with numba: the one variable-width part of a TSBS line that
Arrow cannot write in a single pass.

For a run of consecutive integer fields, each row gets one segment, `,name=123i,other=-4i` (the
name literals prepared once per field), written digit by digit in place with no intermediate
string per value; ingestbench.ingest.encoder joins it with the rows' prefixes and fixed-width
parts. `nogil=True` lets the method's worker threads encode at the same time; `cache=True` keeps
the compiled code beside this module, so only the first run on a machine compiles (about a
second, in the untimed warm-up).
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Bytes a decimal int64 can take: a sign and 19 digits.
INT_WIDTH = 20


@njit(cache=True, nogil=True)
def _write_int(out, pos, value):
    """`value` as decimal digits then 'i' at out[pos:]; returns the position after it."""
    if value < 0:
        out[pos] = 45  # '-'
        pos += 1
        magnitude = np.uint64(-(value + 1)) + np.uint64(1)  # int64's minimum too
    else:
        magnitude = np.uint64(value)
    if magnitude < 10:  # the common cases first: TSBS's values are 0..100
        out[pos] = 48 + np.uint8(magnitude)
        end = pos + 1
    elif magnitude < 100:
        out[pos] = 48 + np.uint8(magnitude // np.uint64(10))
        out[pos + 1] = 48 + np.uint8(magnitude % np.uint64(10))
        end = pos + 2
    else:
        digits = 3
        bound = np.uint64(1000)
        while digits < 20 and magnitude >= bound:
            bound *= np.uint64(10)
            digits += 1
        end = pos + digits
        for k in range(digits):
            out[end - 1 - k] = 48 + np.uint8(magnitude % np.uint64(10))
            magnitude //= np.uint64(10)
    out[end] = 105  # 'i'
    return end + 1


@njit(cache=True, nogil=True)
def write_int_fields(literals, literal_ends, values):
    """Each row's `literal0 v0 i literal1 v1 i ...` as Arrow binary buffers: (offsets, data).

    literals: uint8[:], the fields' `,name=` back to back; literal_ends: int64[:], field f's
    literal is literals[literal_ends[f]:literal_ends[f + 1]]; values: int64[:, :] (rows, fields),
    a row's values side by side.
    """
    rows, fields = values.shape
    width = literal_ends[fields] + fields * (INT_WIDTH + 1)
    out = np.empty(rows * width, np.uint8)
    offsets = np.empty(rows + 1, np.int32)
    pos = 0
    for row in range(rows):
        offsets[row] = pos
        for f in range(fields):
            for b in range(literal_ends[f], literal_ends[f + 1]):
                out[pos] = literals[b]
                pos += 1
            pos = _write_int(out, pos, values[row, f])
    offsets[rows] = pos
    return offsets, out[:pos]


@njit(cache=True, nogil=True)
def write_nullable_fields(literals, literal_ends, is_int, ints, double_bytes, valid):
    """Each row's present fields, `name=123i` or `name==<type 16><8 bytes>`, joined by ',' and
    a null cell left out, as the client writes them: Arrow binary buffers (offsets, data), and
    the first row with no field at all (-1 when every row has one).

    literals / literal_ends: each field's `name=` (`name==\\x10` for a double), back to back;
    is_int: bool[fields]; ints: int64[:, :] (rows, fields) and double_bytes: uint8[:, :] (rows,
    8 * fields, a float64 array viewed as bytes), a field's values in the array of its kind;
    valid: bool[:, :] (rows, fields).
    """
    rows, fields = valid.shape
    width = literal_ends[fields] + fields * (INT_WIDTH + 2)
    out = np.empty(rows * width, np.uint8)
    offsets = np.empty(rows + 1, np.int32)
    empty_row = -1
    pos = 0
    for row in range(rows):
        offsets[row] = pos
        first = True
        for f in range(fields):
            if not valid[row, f]:
                continue
            if not first:
                out[pos] = 44  # ','
                pos += 1
            first = False
            for b in range(literal_ends[f], literal_ends[f + 1]):
                out[pos] = literals[b]
                pos += 1
            if is_int[f]:
                pos = _write_int(out, pos, ints[row, f])
            else:
                for b in range(8):
                    out[pos + b] = double_bytes[row, 8 * f + b]
                pos += 8
        if first and empty_row < 0:
            empty_row = row
    offsets[rows] = pos
    return offsets, out[:pos], empty_row
