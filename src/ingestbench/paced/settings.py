"""The `paced` section as an object, and its semantic checks (what the schema cannot say)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ingestbench.catalogue import METHODS
from ingestbench.datasets import PacedDeliveryKind, of_entry
from ingestbench.paced.names import PacedPath, expand, path_problem

#: Fewer measured arrivals than this give no p99.9 (its tail would be ten arrivals or fewer).
P999_ARRIVALS = 10_000
#: A step shorter than this many sampling intervals has too few samples for a slope.
MIN_SAMPLES_PER_STEP = 20


@dataclass(frozen=True)
class PacedSettings:
    """What a paced job runs: its arrivals, steps, rates, flush values and bounds."""

    arrival_rows: int
    step_s: float
    lead_in_s: float
    repeats: int
    timestamps: str  # due: stamped with the arrival's due time, rows cycled; file: as in the file
    warmup_arrivals: int
    rates_of_max: tuple[float, ...]
    rates_rows_per_s: tuple[float, ...]
    auto_flush_rows: int
    auto_flush_interval_ms: int
    latency_bound_s: float
    sample_interval_s: float
    visible_timeout_s: float

    @classmethod
    def from_config(cls, section: Mapping[str, Any]) -> PacedSettings:
        values = {k: section[k] for k in cls.__dataclass_fields__}
        values["rates_of_max"] = tuple(sorted(values["rates_of_max"]))
        values["rates_rows_per_s"] = tuple(sorted(values["rates_rows_per_s"]))
        return cls(**values)

    @property
    def cycled(self) -> bool:
        """Rows stamped with their due time can repeat; the file's own timestamps cannot."""
        return self.timestamps == "due"

    def tail_s(self, rows_per_s: float, flush: str) -> float:
        """The unmeasured tail after a step's window: one flush period at its rate, so the rows
        of the window's end go out by the path's own rule, not by a final flush."""
        arrival_s = self.arrival_rows / rows_per_s
        if flush == "rows":
            return max(arrival_s, self.auto_flush_rows / rows_per_s)
        if flush == "interval":
            return max(arrival_s, self.auto_flush_interval_ms / 1000)
        return arrival_s

    def step_rows_at(self, rows_per_s: float, flush: str) -> int:
        """Rows one step sends at a rate: lead-in, window and tail."""
        return int(rows_per_s * (self.lead_in_s + self.step_s + self.tail_s(rows_per_s, flush)))

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def paced_paths(config: Mapping[str, Any]) -> list[PacedPath]:
    """Every path and flush mode of the config's `paced` section, in its order (none if off)."""
    section = config.get("paced")
    if not section:
        return []
    producers = tuple(section.get("producers", (1,)))
    return [p for entry in section["paths"] for p in expand(entry, producers)
            if path_problem(p) is None]  # fmt: skip


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
    if max(section["producers"]) > 1 and section["timestamps"] == "file":
        problems.append(
            "paced.producers is above 1 and paced.timestamps is file; several producers need "
            "timestamps: due (a sample tells each producer's arrivals apart by their due time), "
            "so set that or keep producers: [1]."
        )
    problems += timing_problems(section)
    for d in config.get("datasets", []):
        kind: PacedDeliveryKind = of_entry(d)
        if why := kind.why_not_paced(d):
            problems.append(
                f"paced sends one table in time order, and dataset {d['label']!r} is {why}; "
                f"give the paced config a dataset of its own."
            )
            continue
        keys, most = kind.stated_keys(d), max(section["producers"])
        if keys is not None and keys < most:
            problems.append(
                f"paced.producers has {most}, and dataset {d['label']!r} has {keys} values of "
                f"its first SYMBOL column to share out among them (each producer sends rows of "
                f"its own); give it at least {most} (a TSBS dataset's scale is its hosts) or lower "
                f"paced.producers."
            )
        if section["timestamps"] == "file" and (need := file_rows_needed(section)):
            rows = kind.stated_rows(d)
            if rows is not None and rows < need:
                problems.append(
                    f"dataset {d['label']!r} has {rows:,} rows and paced.timestamps is file, "
                    f"which never repeats a row, while its steps send {need:,} (rates_rows_per_s "
                    f"x lead-in, step and tail); {kind.more_rows(d, need)}, or set "
                    f"paced.timestamps: due (rows cycled, stamped with their due time)."
                )
    return problems


def timing_problems(section: Mapping[str, Any]) -> list[str]:
    """Settings under which no step could be measured, one sentence each."""
    problems = []
    interval, bound, step = (section["sample_interval_s"], section["latency_bound_s"],
                             section["step_s"])  # fmt: skip
    if step < MIN_SAMPLES_PER_STEP * interval:
        problems.append(
            f"paced.step_s is {step:g} s, fewer than {MIN_SAMPLES_PER_STEP} samples of "
            f"paced.sample_interval_s ({interval:g} s); set step_s to at least "
            f"{MIN_SAMPLES_PER_STEP * interval:g} or sample more often."
        )
    if interval > bound:
        problems.append(
            f"paced.sample_interval_s is {interval:g} s, longer than paced.latency_bound_s "
            f"({bound:g} s), so no latency under the bound could be seen; set sample_interval_s "
            f"to at most {bound / 2:g}."
        )
    elif interval > bound / 2:
        problems.append(
            f"paced.latency_bound_s is {bound:g} s, below the sampler's resolution of about two "
            f"sampling intervals (paced.sample_interval_s {interval:g} s), so every step would "
            f"be not measured; raise latency_bound_s to at least {2 * interval:g}."
        )
    return problems


def file_rows_needed(section: Mapping[str, Any]) -> int:
    """Rows the fixed rates send in one repeat without cycling (the rates_of_max are known only
    once the unpaced step ran: the job refuses those it cannot feed)."""
    lead = section["lead_in_s"] + section["step_s"]
    return int(sum(r * (lead + 1.0) for r in section["rates_rows_per_s"]))


def rule_settings(config: Mapping[str, Any], variant: str | None) -> dict[str, Any]:
    """What the paced job of `variant` (a paced name) runs under, config-shaped: its params (a
    change reruns it) and, over the keys without effect, all it reads."""
    from ingestbench.workflow.result_keys import benchmark_config

    return {
        # paths and producers are the variant's name: another entry reruns no job
        "paced": {k: v for k, v in config["paced"].items() if k not in ("paths", "producers")},
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
    return [f"{len(jobs)} jobs, one per dataset, path, flush mode and count of producers:", *jobs]
