"""The `delivery` section of the config, as a typed record, and its checks beyond the schema."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from ingestbench.datasets import PacedDeliveryKind, of_entry


@dataclass(frozen=True)
class DeliverySettings:
    paths: tuple[str, ...]
    faults: tuple[str, ...]
    points: int
    max_points: int
    seed: int
    batch_rows: int
    workers: int
    retry_timeout_ms: int
    request_timeout_ms: int
    pause_short_s: float
    pause_long_s: float
    resend_deadline_s: float
    resend_backoff_s: float
    statement_timeout_s: float
    settle_s: float

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> DeliverySettings:
        d = dict(config["delivery"])
        d.pop("dataset", None)
        return cls(**{**d, "paths": tuple(d["paths"]), "faults": tuple(d["faults"])})

    def fault_times(self, path: str, fault: str, window_s: float) -> list[float]:
        """`max_points` times drawn uniformly over the window (seconds into the load), the same
        for a seed, path and fault: the experiment takes them in order until `points` of them
        overlapped a request."""
        rng = random.Random(f"{self.seed}:{path}:{fault}")
        return [round(rng.uniform(0, window_s), 3) for _ in range(self.max_points)]


def dataset_entry(config: dict[str, Any]) -> dict[str, Any] | None:
    """The dataset entry the delivery loads send (delivery.dataset, or the first)."""
    label = config["delivery"].get("dataset")
    entries = config.get("datasets", [])
    if label is None:
        return entries[0] if entries else None
    return next((e for e in entries if e["label"] == label), None)


def check(config: dict[str, Any]) -> list[str]:
    """What is wrong with the `delivery` section beyond its schema: one sentence per problem,
    naming the key, its value and the fix (empty: nothing, or no section)."""
    if "delivery" not in config:
        return []
    d = config["delivery"]
    problems = []
    if config.get("questdb", {}).get("mode") == "external":
        problems.append(
            "questdb.mode is 'external', but the delivery experiment kills, restarts and pauses "
            "its server: set mode: embedded in the config that has the delivery section."
        )
    entry = dataset_entry(config)
    kind: PacedDeliveryKind | None = of_entry(entry) if entry else None
    if entry is None or kind is None:
        problems.append(
            f"delivery.dataset is {d.get('dataset')!r}, which names no dataset of `datasets`: "
            f"give the label of a generated TSBS cpu dataset or of an own dataset there."
        )
    elif what := kind.why_not_delivered(entry):
        problems.append(
            f"delivery.dataset names {entry['label']!r}, which is {what}: the delivery loads "
            f"fill one table without DEDUP (their `-dedup` paths add it, on TSBS data only); "
            f"name a generated TSBS cpu dataset or an own dataset (one with a `path`) without "
            f"dedup there, or add one (datasets: [{{label: delivery, scale: 100, epochs: 1000}}])."
        )
    request_s, retry_s = d["request_timeout_ms"] / 1000, d["retry_timeout_ms"] / 1000
    if not request_s < d["pause_short_s"] < retry_s:
        problems.append(
            f"delivery.pause_short_s is {d['pause_short_s']:g}, which is not between "
            f"request_timeout_ms ({d['request_timeout_ms']}) and retry_timeout_ms "
            f"({d['retry_timeout_ms']}) in seconds: a short pause must outlast one request and "
            f"not the retries; set it between them."
        )
    if d["pause_long_s"] <= request_s + retry_s:
        problems.append(
            f"delivery.pause_long_s is {d['pause_long_s']:g}, not longer than request_timeout_ms "
            f"+ retry_timeout_ms ({request_s + retry_s:g} s): the client would never give up; "
            f"raise it above that."
        )
    rows = kind.stated_rows(entry) if entry and kind else None
    if rows is not None and rows < 4 * d["batch_rows"]:
        problems.append(
            f"delivery.batch_rows is {d['batch_rows']}, more than a quarter of the dataset's "
            f"{rows} rows: a fault could not land between batches; lower it below {rows // 4}."
        )
    return problems


def rule_settings(config: dict[str, Any], job: str | None = None) -> dict[str, Any]:
    """What rule `delivery` (one job: `job` is None) runs under, config-shaped: its section and
    its server's (kept whole: the startup timeout is the job's too)."""
    return {"delivery": config["delivery"], "questdb": config["questdb"]}


def listing(config: dict[str, Any]) -> list[str]:
    """What `ingestbench variants` says of the delivery experiment: each path under its faults."""
    entry = dataset_entry(config)
    d = config["delivery"]
    label = entry["label"] if entry else d.get("dataset")
    return [f"on {label}, each path under {', '.join(d['faults'])}:", *d["paths"]]
