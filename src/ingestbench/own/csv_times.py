"""The QuestDB pattern of each time column of a user's CSV, found in the file's first rows (the
block pyarrow infers the column types from), for the server's own imports: `/imp` takes one
pattern per column, `COPY` one `FORMAT` for the designated timestamp.

pandas, polars, pyarrow and DuckDB write ISO 8601 by default: `T` or a space between date and
time, a fraction of 0 to 9 digits, a zone as `Z`, `+00`, `+0000`, `+00:00` or none. QuestDB's
`N+` reads a fraction of 1 to 9 digits (kept to microseconds, as the clients keep them) and `Z`
reads every one of those zones, so one pattern reads a column whatever its fraction's length;
but a fraction is then required, so a column whose rows have one and rows without one (DuckDB
drops a zero fraction: `10:00:00` beside `10:00:00.5`) has no pattern. That is a decision here,
recorded with the reason, and the methods it concerns are unsupported for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

#: An ISO 8601 time as the writers write it: date, separator, hour[:minute[:second]], fraction,
#: zone. Each group present or not is one part of the pattern.
ISO = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})(?P<sep>[T ])(?P<hour>\d{2})(?P<minute>:\d{2})?"
    r"(?P<second>:\d{2})?(?P<fraction>\.\d{1,9})?(?P<zone>Z|[+-]\d{2}(?::?\d{2})?)?"
)
#: How many distinct values of a column the check keeps as examples (one per shape suffices).
EXAMPLES = 4


@dataclass(frozen=True)
class TimePattern:
    """A column's pattern for QuestDB, or why it has none (then `pattern` is None)."""

    column: str
    pattern: str | None
    example: str  # a value of the column as the file writes it
    problem: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        return {"pattern": self.pattern, "example": self.example, "problem": self.problem}


def shape(value: str) -> tuple | None:
    """Which parts of an ISO 8601 time a value writes (the separator itself), None if it is not
    one."""
    m = ISO.fullmatch(value)
    if m is None:
        return None
    return (m["sep"], bool(m["minute"]), bool(m["second"]), bool(m["fraction"]), bool(m["zone"]))


def pattern_of(value_shape: tuple) -> str:
    """QuestDB's pattern for every value of one shape."""
    sep, minute, second, fraction, zone = value_shape
    return (f"yyyy-MM-dd{sep}HH{':mm' if minute else ''}{':ss' if second else ''}"
            f"{'.N+' if fraction else ''}{'Z' if zone else ''}")  # fmt: skip


def detect(column: str, values: Iterable[str | None]) -> TimePattern:
    """The pattern that reads every value, or the problem that no single one does."""
    seen: dict[tuple | None, str] = {}
    for value in values:
        if value is None or value == "":
            continue
        seen.setdefault(shape(value), value)
        if len(seen) >= EXAMPLES:
            break
    if not seen:
        return TimePattern(column, None, "", f"column {column!r} has no value in its first rows")
    if None in seen:
        odd = seen[None]
        return TimePattern(
            column, None, odd,
            f"column {column!r} holds {odd!r}, no ISO 8601 time whose QuestDB pattern is known "
            f"here (set datasets[].csv.timestamp_format to its strptime format)",
        )  # fmt: skip
    shapes = list(seen)
    if len(shapes) == 1:
        return TimePattern(column, pattern_of(shapes[0]), seen[shapes[0]])
    first, other = seen[shapes[0]], seen[shapes[1]]
    if {s[:3] + s[4:] for s in shapes} == {shapes[0][:3] + shapes[0][4:]}:
        return TimePattern(
            column, None, first,
            f"column {column!r} has times with a fraction and times without one ({first!r}, "
            f"{other!r}), and QuestDB's pattern reads a fraction of any length (.N+) but not an "
            f"optional one",
        )  # fmt: skip
    return TimePattern(
        column, None, first,
        f"column {column!r} writes its times in more than one shape ({first!r}, {other!r}), and "
        f"QuestDB reads a column with one pattern",
    )  # fmt: skip


#: Bytes of the file's start whose rows are checked: the block pyarrow infers the types from.
CHECK_BYTES = 16 << 20


def detect_file(
    path: Path, delimiter: str, null_values: tuple[str, ...], columns: list[str]
) -> dict[str, TimePattern]:
    """The pattern of each of `columns` from the file's first rows, read as text."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    convert = pacsv.ConvertOptions(
        null_values=list(null_values), strings_can_be_null=True, include_columns=columns,
        column_types={c: pa.string() for c in columns},
    )  # fmt: skip
    reader = pacsv.open_csv(path, read_options=pacsv.ReadOptions(block_size=CHECK_BYTES),
                            parse_options=pacsv.ParseOptions(delimiter=delimiter),
                            convert_options=convert)  # fmt: skip
    try:
        batch = reader.read_next_batch()
    except StopIteration:
        batch = None
    finally:
        reader.close()
    return {c: detect(c, batch.column(c).to_pylist() if batch is not None else []) for c in columns}


#: QuestDB pattern letters (those this workflow passes) -> what they read, as a regex.
_LETTERS = (("yyyy", r"\d{4}"), ("MM", r"\d{2}"), ("dd", r"\d{2}"), ("HH", r"\d{2}"),
            ("mm", r"\d{2}"), ("ss", r"\d{2}"), ("SSSUUU", r"\d{6}"), ("SSS", r"\d{3}"),
            ("N+", r"\d{1,9}"), ("U+", r"\d{1,6}"),
            ("Z", r"(?:Z|[+-]\d{2}(?::?\d{2})?)"))  # fmt: skip


def pattern_regex(pattern: str) -> str:
    """A regex of the values a QuestDB pattern of those letters reads (other letters as
    literals), to find a row the server rejected."""
    out, rest = [], pattern
    while rest:
        for letters, regex in _LETTERS:
            if rest.startswith(letters):
                out.append(regex)
                rest = rest[len(letters) :]
                break
        else:
            out.append(re.escape(rest[0]))
            rest = rest[1:]
    return "".join(out)
