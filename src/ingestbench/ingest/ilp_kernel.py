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
            value = values[row, f]
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
            pos = end + 1
    offsets[rows] = pos
    return offsets, out[:pos]
