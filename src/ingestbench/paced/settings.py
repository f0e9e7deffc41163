"""The `paced` section as an object, and its semantic checks (what the schema cannot say)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ingestbench.catalogue import METHODS
from ingestbench.datasets import PacedDeliveryKind, of_entry
from ingestbench.paced.names import PacedPath, expand, path_problem

#: Fewer arrivals than this give no p99.9 (its tail would be one or two arrivals).
P999_ARRIVALS = 1000


@dataclass(frozen=True)
class PacedSettings:
    """What a paced job runs: its arrivals, steps, rates, flush values and bounds."""

    arrival_rows: int
    step_arrivals: int
    warmup_arrivals: int
    rates_of_max: tuple[float, ...]
    rates_rows_per_s: tuple[float, ...]
    auto_flush_rows: int
    auto_flush_interval_ms: int
    latency_bound_s: float
    sample_interval_s: float
    visible_timeout_s: float
    max_step_s: float

    @classmethod
    def from_config(cls, section: Mapping[str, Any]) -> PacedSettings:
        values = {k: section[k] for k in cls.__dataclass_fields__}
        values["rates_of_max"] = tuple(sorted(values["rates_of_max"]))
        values["rates_rows_per_s"] = tuple(sorted(values["rates_rows_per_s"]))
        return cls(**values)

    @property
    def step_rows(self) -> int:
        """Rows of the longest step (every step starts at the dataset's first row)."""
        return max(self.step_arrivals, self.warmup_arrivals) * self.arrival_rows

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def paced_paths(config: Mapping[str, Any]) -> list[PacedPath]:
    """Every path and flush mode of the config's `paced` section, in its order (none if off)."""
    section = config.get("paced")
    if not section:
        return []
    return [p for entry in section["paths"] for p in expand(entry) if path_problem(p) is None]


def check(config: Mapping[str, Any]) -> list[str]:
    """The `paced` section's problems, one sentence each naming the key, the value and the fix
    (the config is validated against the schema first: its defaults are filled in)."""
    section = config.get("paced")
    if not section:
        return []
    problems = []
    for i, entry in enumerate(section["paths"]):
        method = METHODS[entry["method"]]
        for mode in entry.get("flush_modes") or method.flush_modes or ("arrival",):
            path = PacedPath(entry["library"], entry["method"], entry["transport"], mode)
            problem = path_problem(path)
            if problem:
                problems.append(
                    f"paced.paths[{i}] ({path.name}) cannot run: {problem}; change or drop "
                    f"that entry (docs/methodology.md#paced-ingestion)."
                )
        if method.protocol_2 and config.get("ilp_protocol_version", 2) < 2:
            problems.append(
                f"paced.paths[{i}] uses {method.name}, which writes ILP protocol 2, and "
                f"ilp_protocol_version is {config['ilp_protocol_version']}; set it to 2 or drop "
                f"the path."
            )
    if not section["rates_of_max"] and not section["rates_rows_per_s"]:
        problems.append(
            "paced has no rate (rates_of_max and rates_rows_per_s are both empty); give at "
            "least one, such as rates_of_max: [0.5, 1.0]."
        )
    need = max(section["step_arrivals"], section["warmup_arrivals"]) * section["arrival_rows"]
    for d in config.get("datasets", []):
        kind: PacedDeliveryKind = of_entry(d)
        if why := kind.why_not_paced(d):
            problems.append(
                f"paced runs on generated TSBS cpu data in time order, and dataset "
                f"{d['label']!r} is {why}; give the paced config a plain TSBS cpu dataset of its "
                f"own."
            )
        elif (rows := kind.stated_rows(d)) is not None and rows < need:
            problems.append(
                f"dataset {d['label']!r} has {rows:,} rows and a paced step needs "
                f"{need:,} (paced.step_arrivals x paced.arrival_rows; rows never wrap, which "
                f"would repeat timestamps); {kind.more_rows(d, need)} or shorten the steps."
            )
    return problems


def rule_settings(config: Mapping[str, Any], variant: str | None) -> dict[str, Any]:
    """What the paced job of `variant` (a paced name) runs under, config-shaped: its params (a
    change reruns it) and, over the keys without effect, all it reads."""
    from ingestbench.workflow.result_keys import benchmark_config

    return {
        "paced": {k: v for k, v in config["paced"].items() if k != "paths"},
        "variant": variant,
        "ilp_protocol_version": config["ilp_protocol_version"],
        "table": config["table"],
        "questdb": benchmark_config(config)["questdb"],
    }


def listing(config: Mapping[str, Any]) -> list[str]:
    """What `ingestbench variants` says of paced ingestion: its jobs, one per dataset and path."""
    from ingestbench.datasets import dataset_entries

    names = [p.name for p in paced_paths(config)]
    jobs = [f"{ds}/{name}" for ds in dataset_entries(dict(config)) for name in names]
    return [f"{len(jobs)} jobs, one per dataset, path and flush mode:", *jobs]
