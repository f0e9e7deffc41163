"""ILP lines written in one pass, compiled with numba: the encoder's hot loop.

Everything per column or per distinct value is prepared in NumPy and Arrow beforehand
(ingestbench.ingest.frames.encoder): each distinct `table,tag=value,...` prefix (or, for tags
that barely repeat, each tag value's `,tag=value` segment), each field's `name=` literal, the
columns as plain arrays. Then `write_lines` writes every row into one buffer the encoder reuses:
the row's prefix and segments, its present fields (a double as `name==`, type 16 and its 8
little-endian bytes; an integer as `name=123i` and a time as `name=123t` or `123n`, digit by
digit; a boolean as `t` or `f`; a string quoted, in one copy when its column has no byte to
escape, else escaped byte by byte), the timestamp's digits (worked out once per run of equal
values, the leading ones once per 10**8 units) and its unit. One pass and no intermediate array
per column: on TSBS rows this costs less than the Arrow joins it replaced, and a reused buffer
no page faults. `nogil=True` lets the method's worker threads encode at the same time; `cache=True`
keeps the compiled code beside this module, so only the first run on a machine compiles (a few
seconds, in the untimed warm-up).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

#: Bytes a decimal int64 can take: a sign and 19 digits.
INT_WIDTH = 20
#: Bytes `write_lines` may write past its last line (a short copy writes 32 bytes whatever its
#: length): the buffer it writes into holds this much more than the lines.
COPY_SLACK = 32
#: The helpers write_lines calls per field are compiled into it (numba's inline="always"): a
#: call that is not costs more than most fields' work (the arrays' reference counts), and a
#: bigger helper can stop the compiler from inlining its callers (TSBS's integer fields ran
#: 1.7x slower when the digits' helper grew).
INLINE = "always"


#: Field kinds, as `write_lines` takes them (ingestbench.ingest.frames.ilp_fields decides them);
#: RAW_STRING is a STRING column whose bytes in this chunk hold none to escape (`has_escapes`).
DOUBLE, INTEGER, BOOLEAN, STRING, TIME_US, TIME_NS, RAW_STRING = range(7)
#: "00" to "99" back to back: two digits at a time.
_PAIRS = np.frombuffer("".join(f"{i:02d}" for i in range(100)).encode(), np.uint8).copy()
#: The bytes a quoted string escapes, by value: quote, backslash, newline, carriage return.
_QUOTED_ESCAPES = np.zeros(256, np.bool_)
_QUOTED_ESCAPES[[34, 92, 10, 13]] = True
#: The suffix after an integer's digits, by kind: 'i', 't' (microseconds), 'n' (nanoseconds).
_SUFFIX = np.array([0, 105, 0, 0, 116, 110, 0], np.uint8)


def row_bound(prefix_ends: np.ndarray, literal_ends: np.ndarray, tail: bytes) -> int:
    """The most bytes `write_lines` can write for one row, besides its strings' and tag
    segments' own bytes (`text_bound`)."""
    fields = len(literal_ends) - 1
    longest_prefix = int(np.diff(prefix_ends).max()) if len(prefix_ends) > 1 else 0
    # a field: ',' + literal + the longest of 8 bytes, an integer's digits and suffix, 2 quotes
    return (
        longest_prefix + 1 + int(literal_ends[-1]) + fields * (INT_WIDTH + 2) + INT_WIDTH
        + len(tail)
    )  # fmt: skip


def _memcpy(context, builder, signature, args, n) -> None:
    """dst[dst_pos:dst_pos + n] = src[src_pos:src_pos + n] as one LLVM memcpy of `n` (an intp
    value), without bounds checks: what both copy intrinsics emit."""
    dst_type, dst_pos_type, src_type, src_pos_type = signature.args[:4]
    target = context.make_array(dst_type)(context, builder, args[0])
    source = context.make_array(src_type)(context, builder, args[2])
    at = context.cast(builder, args[1], dst_pos_type, types.intp)
    start = context.cast(builder, args[3], src_pos_type, types.intp)
    cgutils.raw_memcpy(
        builder, builder.gep(target.data, [at]), builder.gep(source.data, [start]), n, 1
    )


@intrinsic
def _copy(typingctx, dst, dst_pos, src, src_pos, count):
    """dst[dst_pos:dst_pos + count] = src[src_pos:src_pos + count] for uint8 arrays, as one
    LLVM memcpy and without bounds checks (the callers size `dst` for the longest line). A
    NumPy slice assignment costs about 20 ns of set-up, more than copying a field's name."""

    def codegen(context, builder, signature, args):
        n = context.cast(builder, args[4], signature.args[4], types.intp)
        _memcpy(context, builder, signature, args, n)
        return context.get_dummy_value()

    return types.void(dst, dst_pos, src, src_pos, count), codegen


def _fixed_copy(width: int):
    """An intrinsic copying exactly `width` bytes, dst[dst_pos:] = src[src_pos:]: a memcpy of a
    constant size, which the compiler turns into one load and one store."""

    @intrinsic
    def copy(typingctx, dst, dst_pos, src, src_pos):
        def codegen(context, builder, signature, args):
            _memcpy(context, builder, signature, args, context.get_constant(types.intp, width))
            return context.get_dummy_value()

        return types.void(dst, dst_pos, src, src_pos), codegen

    return copy


_copy8, _copy4 = _fixed_copy(8), _fixed_copy(4)


@njit(cache=True, nogil=True, inline=INLINE)
def _put(out, pos, src, start, n):
    """out[pos:pos + n] = src[start:start + n] for the short pieces a line is made of (names,
    tags, strings, digits) without a call: a memcpy of a size known only at run time is a call
    into the C library, and a branch on the length mispredicts as lengths vary. Up to 32 bytes:
    32 bytes whatever n (four 8-byte words; the lines' buffer has COPY_SLACK bytes to spare),
    or, where the source ends sooner, 4- or 8-byte words that overlap, read and written within
    the two ranges (findings/2026-11-27-client-cpu-2: the same bytes, 6-16 % less CPU)."""
    if n <= 32 and start + 32 <= src.size:  # 32 bytes whatever n: no branch on the length
        _copy8(out, pos, src, start)
        _copy8(out, pos + 8, src, start + 8)
        _copy8(out, pos + 16, src, start + 16)
        _copy8(out, pos + 24, src, start + 24)
    elif n > 32:
        _copy(out, pos, src, start, n)
    elif n >= 8:
        _copy8(out, pos, src, start)
        if n > 16:
            _copy8(out, pos + 8, src, start + 8)
            if n > 24:
                _copy8(out, pos + 16, src, start + 16)
        _copy8(out, pos + n - 8, src, start + n - 8)
    elif n >= 4:
        _copy4(out, pos, src, start)
        _copy4(out, pos + n - 4, src, start + n - 4)
    else:
        for i in range(n):
            out[pos + i] = src[start + i]


@njit(cache=True, nogil=True, inline=INLINE)
def _write_int(out, pos, value, suffix):
    """`value` as decimal digits then `suffix` ('i', 't' or 'n') at out[pos:]; returns the
    position after it."""
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
        end = _write_digits(out, pos, magnitude)
    out[end] = suffix
    return end + 1


#: 10**8: an int64's digits are written in at most three groups of up to 8.
_GROUP = np.uint64(100_000_000)


@njit(cache=True, nogil=True, inline=INLINE)
def _write_digits(out, pos, magnitude):
    """A uint64's decimal digits at out[pos:]; returns the position after them. In groups of 8
    digits: only the leading group's are counted (by comparisons that do not wait on each
    other), the others are written as 8 with their leading zeros, two at a time."""
    if magnitude < _GROUP:
        return _write_small(out, pos, np.uint32(magnitude))
    high = magnitude // _GROUP
    if high < _GROUP:
        pos = _write_small(out, pos, np.uint32(high))
    else:
        top = high // _GROUP  # at most 1844
        pos = _write_small(out, pos, np.uint32(top))
        pos = _write_eight(out, pos, np.uint32(high - top * _GROUP))
    return _write_eight(out, pos, np.uint32(magnitude - high * _GROUP))


@njit(cache=True, nogil=True, inline=INLINE)
def _write_small(out, pos, value):
    """value (below 10**8) in as many digits as it takes; returns the position after them."""
    digits = (1 + (value >= 10) + (value >= 100) + (value >= 1000) + (value >= 10_000)
              + (value >= 100_000) + (value >= 1_000_000) + (value >= 10_000_000))  # fmt: skip
    at = pos + digits
    while value >= 100:
        rest = value // np.uint32(100)
        pair = 2 * (value - rest * np.uint32(100))
        at -= 2
        out[at] = _PAIRS[pair]
        out[at + 1] = _PAIRS[pair + 1]
        value = rest
    if value >= 10:
        out[at - 2] = _PAIRS[2 * value]
        out[at - 1] = _PAIRS[2 * value + 1]
    else:
        out[at - 1] = 48 + np.uint8(value)
    return pos + digits


@njit(cache=True, nogil=True, inline=INLINE)
def _write_eight(out, pos, value):
    """value (below 10**8) as exactly 8 digits, leading zeros included; returns pos + 8."""
    high = value // np.uint32(10_000)
    _write_four(out, pos, high)
    _write_four(out, pos + 4, value - high * np.uint32(10_000))
    return pos + 8


@njit(cache=True, nogil=True, inline=INLINE)
def _write_four(out, pos, value):
    """value (below 10**4) as exactly 4 digits."""
    high = value // np.uint32(100)
    low = value - high * np.uint32(100)
    out[pos] = _PAIRS[2 * high]
    out[pos + 1] = _PAIRS[2 * high + 1]
    out[pos + 2] = _PAIRS[2 * low]
    out[pos + 3] = _PAIRS[2 * low + 1]


@njit(cache=True, nogil=True)
def has_escapes(data, start, end):
    """Whether data[start:end] holds a byte a quoted string escapes. Compared 4 KiB at a time
    into one byte with no branch inside, so that the compiler does it many bytes per
    instruction (a bool per byte, or a smaller block, ran 3x slower)."""
    for block in range(start, end, 4096):
        found = np.uint8(0)
        for b in range(block, min(block + 4096, end)):
            c = data[b]
            found |= np.uint8(c == 34) | np.uint8(c == 92) | np.uint8(c == 10) | np.uint8(c == 13)
        if found:
            return True
    return False


@njit(cache=True, nogil=True)
def bytes_present(data, start, end):
    """Which byte values data[start:end] holds, as bool[256]: one pass, where NumPy's
    bincount first widens every byte to 8."""
    seen = np.zeros(256, np.bool_)
    for b in range(start, end):
        seen[data[b]] = True
    return seen


@njit(cache=True, nogil=True, inline=INLINE)
def _write_string(out, pos, data, start, end):
    """data[start:end] as a quoted ILP string at out[pos:], a quote, backslash, newline or
    carriage return preceded by a backslash as the client writes them; returns the position
    after the closing quote."""
    out[pos] = 34  # '"'
    pos += 1
    for b in range(start, end):
        c = data[b]
        if _QUOTED_ESCAPES[c]:
            out[pos] = 92
            pos += 1
        out[pos] = c
        pos += 1
    out[pos] = 34
    return pos + 1


@njit(cache=True, nogil=True)
def write_lines(
    out, prefixes, prefix_ends, prefix_of_row, segments, segment_ends, tag_codes, literals,
    literal_ends, kinds, doubles, ints, offsets, strings, valid, times, tail,
):  # fmt: skip
    """Every row's ILP line into `out` (at least rows * row_bound + text_bound bytes); returns
    (bytes written, the first row with no field at all, or -1).

    prefixes / prefix_ends: the distinct `table,tag=value...` prefixes back to back, prefix k
    is prefixes[prefix_ends[k]:prefix_ends[k + 1]], and prefix_of_row[row] is the row's k.
    segments / segment_ends / tag_codes: tags written row by row after the prefix, each a
    `,tag=value` segment (same layout); tag_codes[j, row] is the row's segment of tag j, -1
    for a null (0 x 0 when every tag is in the prefixes).
    literals / literal_ends: each field's `name=` (`name==\\x10` for a double) likewise.
    kinds: uint8[fields] of DOUBLE ... RAW_STRING. Per field, in tuples of one array type each
    (an empty array where the kind takes none): doubles, a float64 array's bytes (8 * rows);
    ints, int64[rows] (integers, booleans as 0 or 1, times); offsets and strings, int64[rows +
    1] and the UTF-8 bytes they point into.
    valid: uint8[rows, fields], or 0 x 0 when no cell is null (a null cell is left out).
    times: int64[rows], non-negative; tail: the unit and the newline, b"n\\n" or b"t\\n".
    """
    rows = prefix_of_row.size
    fields = literal_ends.size - 1
    row_tags = tag_codes.shape[0] if tag_codes.shape[1] > 0 else 0
    nullable = valid.shape[0] > 0
    last_time = np.int64(-1)
    last_high = np.uint64(0)  # the time's digits but the last 8, in digits[:high_width]
    digits = np.empty(INT_WIDTH + COPY_SLACK, np.uint8)  # room for a 32-byte copy
    width = high_width = 0
    empty_row = -1
    pos = 0
    for row in range(rows):
        k = prefix_of_row[row]
        start, end = prefix_ends[k], prefix_ends[k + 1]
        _put(out, pos, prefixes, start, end - start)
        pos += end - start
        for j in range(row_tags):
            k = tag_codes[j, row]
            if k >= 0:
                start, end = segment_ends[k], segment_ends[k + 1]
                _put(out, pos, segments, start, end - start)
                pos += end - start
        out[pos] = 32  # ' '
        pos += 1
        first = True
        for f in range(fields):
            if nullable and not valid[row, f]:
                continue
            if not first:
                out[pos] = 44  # ','
                pos += 1
            first = False
            start, end = literal_ends[f], literal_ends[f + 1]
            _put(out, pos, literals, start, end - start)
            pos += end - start
            kind = kinds[f]
            if kind == 0:
                _copy8(out, pos, doubles[f], 8 * row)
                pos += 8
            elif kind == 6:  # nothing to escape: one copy
                start, end = offsets[f][row], offsets[f][row + 1]
                out[pos] = 34
                _put(out, pos + 1, strings[f], start, end - start)
                pos += end - start + 2
                out[pos - 1] = 34
            elif kind == 3:
                pos = _write_string(out, pos, strings[f], offsets[f][row], offsets[f][row + 1])
            elif kind == 2:
                out[pos] = 116 if ints[f][row] else 102  # 't' or 'f'
                pos += 1
            else:
                pos = _write_int(out, pos, ints[f][row], _SUFFIX[kind])
        if first and empty_row < 0:
            empty_row = row
        out[pos] = 32  # ' '
        pos += 1
        value = times[row]
        if value != last_time:  # TSBS: one run of equal times per epoch
            last_time = value
            magnitude = np.uint64(value)
            high = magnitude // _GROUP
            if high == 0:
                width = _write_digits(digits, 0, magnitude)
                high_width = 0  # digits[:8] are this time's now
            else:  # all but the last 8 digits change once per 10**8 units (100 s in us)
                if high != last_high or high_width == 0:
                    last_high = high
                    high_width = _write_digits(digits, 0, high)
                width = _write_eight(digits, high_width, np.uint32(magnitude - high * _GROUP))
        _put(out, pos, digits, 0, width)
        pos += width
        _put(out, pos, tail, 0, tail.size)
        pos += tail.size
    return pos, empty_row
