"""The parameters of one TSBS dataset (`DatasetParams`), checked, named and parsed from the
config or the command line; their defaults are the schema's (ingestbench.schema)."""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ingestbench.errors import UserError
from ingestbench.schema import dataset_defaults, dataset_schema, first_error
from ingestbench.tsbs.columns import USE_CASES

log = logging.getLogger(__name__)

#: Bump when the same parameters would produce different rows (part of the manifest).
GENERATOR_VERSION = "1"
FIELD_TYPES = ("double", "long")

NS = 1_000_000_000


class GeneratorError(UserError, ValueError):
    """Bad generator input or an unwritable output; the message is one sentence: cause and fix."""


def unwritable(path: Any, exc: OSError) -> GeneratorError:
    """The sentence for an output the generator could not write."""
    reason = exc.strerror or (str(exc).splitlines() or [type(exc).__name__])[0]
    return GeneratorError(
        f"cannot write {path} ({reason}): choose a writable output directory "
        "with enough free space (--out)."
    )


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


#: A `datasets[]` entry's defaults, from the schema (use_case and dedup have none there: unset,
#: they are the dataclass's cpu and false, and a config that leaves them out hashes as before).
_DEFAULTS = dataset_defaults()
DEFAULT_START: str = _DEFAULTS["start"]
DEFAULT_INTERVAL_S = parse_duration(_DEFAULTS["interval"], "the schema's interval", "fix it")


def format_duration(ns: int) -> str:
    """Compact duration for names: 10s, 500ms, 250us, 7ns."""
    for unit, size in (("s", NS), ("ms", 1_000_000), ("us", 1_000)):
        if ns % size == 0:
            return f"{ns // size}{unit}"
    return f"{ns}ns"


def parse_start(value: Any) -> datetime:
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


def positive_int(value: Any, what: str, where: str) -> int:
    """`value` as an int, or the sentence that names `where` it is set."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise GeneratorError(
            f"{what} must be a positive integer (got {value!r}): set {where} to 1 or more."
        )
    return int(value)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MAX_NS = 2**63 - 1


@dataclass(frozen=True)
class DatasetParams:
    """Parameters of one TSBS dataset (cpu or iot); they alone (with the generator version) fix
    its rows.
    `dedup` is the one table option: the rows are the same, the table keeps no duplicate."""

    scale: int
    epochs: int
    seed: int = _DEFAULTS["seed"]
    start: str = DEFAULT_START
    interval_s: float = DEFAULT_INTERVAL_S
    field_type: str = _DEFAULTS["field_type"]
    out_of_order_lag_s: float | None = None  # the schema's out_of_order: null
    dedup: bool = False
    use_case: str = "cpu"  # or "iot": trucks, two tables, nulls and late rows of its own

    def __post_init__(self) -> None:
        if self.use_case not in USE_CASES:
            raise GeneratorError(
                f"unknown use case {self.use_case!r}: set datasets[].use_case (or --use-case) "
                f"to {' or '.join(map(repr, USE_CASES))}."
            )
        if USE_CASES[self.use_case].fixed_fields:
            clash = [k for k, on in (("field_type: long", self.field_type != "double"),
                                     ("out_of_order", self.out_of_order_lag_s is not None),
                                     ("dedup", self.dedup)) if on]  # fmt: skip
            if clash:
                raise GeneratorError(
                    f"an iot dataset takes no {clash[0]} (its fields have TSBS's types and its "
                    f"late rows come from TSBS's own chances): drop it from that dataset, or "
                    f"use it on a cpu dataset."
                )
        positive_int(self.scale, "scale", "datasets[].scale (or --scale)")
        positive_int(self.epochs, "epochs", "datasets[].epochs (or --epochs)")
        if (
            isinstance(self.seed, bool)
            or not isinstance(self.seed, int | np.integer)
            or self.seed < 0
        ):
            raise GeneratorError(
                f"seed must be a non-negative integer (got {self.seed!r}): "
                "set datasets[].seed (or --seed) to 0 or more."
            )
        if not isinstance(self.dedup, bool):
            raise GeneratorError(
                f"dedup must be true or false (got {self.dedup!r}): set datasets[].dedup."
            )
        if self.field_type not in FIELD_TYPES:
            raise GeneratorError(
                f"unknown field type {self.field_type!r}: set datasets[].field_type "
                "(or --field-type) to 'double' or 'long'."
            )
        start = parse_start(self.start)
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
        """The rows of a cpu dataset; of an iot one, the points simulated (both tables): TSBS
        then drops about a tenth, and the manifest records the rows written."""
        return self.scale * self.epochs * USE_CASES[self.use_case].points_per_host

    @property
    def interval_ns(self) -> int:
        try:
            return round(self.interval_s * NS)
        except (TypeError, ValueError, OverflowError):  # not a number, NaN, infinite
            return 0

    @property
    def start_ns(self) -> int:
        delta = parse_start(self.start) - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * NS + delta.microseconds * 1_000

    @property
    def lag_ns(self) -> int | None:
        lag = self.out_of_order_lag_s
        return None if lag is None else round(lag * NS)

    @property
    def name(self) -> str:
        """E.g. ``cpu-s4000-e250-seed42``, ``cpu-s4000-e250-seed42-long-ooo30s-dedup``."""
        parts = [f"{self.use_case}-s{self.scale}-e{self.epochs}-seed{self.seed}"]
        if self.field_type == "long":
            parts.append("long")
        if self.lag_ns is not None:
            parts.append(f"ooo{format_duration(self.lag_ns)}")
        if self.interval_ns != round(DEFAULT_INTERVAL_S * NS):
            parts.append(f"i{format_duration(self.interval_ns)}")
        start = parse_start(self.start)
        if start != parse_start(DEFAULT_START):
            stamp = start.strftime("%Y%m%dT%H%M%S")
            if start.microsecond:
                stamp += f"{start.microsecond:06d}"
            parts.append(f"t{stamp}Z")
        if self.dedup:
            parts.append("dedup")
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
            **({"dedup": True} if self.dedup else {}),  # absent: manifests before it stay valid
            **({"use_case": self.use_case} if USE_CASES[self.use_case].recorded else {}),
        }

    @classmethod
    def from_config(cls, d: dict) -> DatasetParams:
        """From a ``datasets[]`` entry of config.yaml (its ``label`` is ignored), checked against
        the schema, which fills in its defaults."""
        if not isinstance(d, dict):
            raise GeneratorError(
                f"a dataset entry must be a mapping (got {type(d).__name__}): "
                "write datasets[] entries as 'scale: ..., epochs: ...'."
            )
        entry = dict(d)
        error = first_error(entry, dataset_schema())
        if error is not None:
            where, message = error
            if ("epochs" in entry) == ("rows" in entry):  # the schema's oneOf, in words
                sets = "both epochs and rows" if "rows" in entry else "neither epochs nor rows"
                raise GeneratorError(
                    f"a dataset sets {sets}: set one of datasets[].epochs and datasets[].rows "
                    "(or --epochs, --rows)."
                )
            fix = f"set datasets[].{where} (or --{where.replace('.', '-').replace('_', '-')})"
            if where == "(top level)":
                fix = "fix the datasets[] entry"
            raise GeneratorError(
                f"invalid dataset at '{where}': {message}; {fix} as "
                "docs/configuration.md describes."
            )
        scale = entry["scale"]
        epochs = entry["epochs"] if "epochs" in entry else -(-entry["rows"] // scale)
        ooo = entry["out_of_order"]
        lag = None if ooo is None else parse_duration(ooo["lag"], "out_of_order.lag", "fix it")
        unset = {k: entry[k] for k in ("dedup", "use_case") if k in entry}
        return cls(
            scale=scale,
            epochs=epochs,
            seed=entry["seed"],
            start=entry["start"],
            interval_s=parse_duration(entry["interval"], "interval", "fix it"),
            field_type=entry["field_type"],
            out_of_order_lag_s=lag,
            **unset,
        )


def format_timestamp(ns: int) -> str:
    """``2016-01-01T00:00:00.000000Z`` (the CSV format) for nanoseconds since the epoch."""
    return str(np.datetime64(int(ns) // 1_000, "us")) + "Z"
