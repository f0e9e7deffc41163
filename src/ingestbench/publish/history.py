"""Each variant's rate across the archived runs of one machine and config, in commit order.

Runs are grouped by machine (ingestbench.publish.archive.machine_id) and config hash, ordered by
their commit's place in this checkout's history (commits it does not know go last, by date), and
each step from one run to the next gets compare's verdict: a step is flagged only when the
min–max ranges of the two runs' repeats do not overlap, the same rule as `ingestbench compare`.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from typing import Any

from ingestbench import CHECKOUT
from ingestbench.results.compare import FASTER, SLOWER, verdict


def commit_order() -> dict[str, int]:
    """Full commit hash -> its position in HEAD's history (oldest 0); empty outside git."""
    try:
        out = subprocess.run(
            ["git", "rev-list", "--topo-order", "--reverse", "HEAD"],
            cwd=CHECKOUT, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return {}
    return {commit: i for i, commit in enumerate(out.split())}


def ordered(docs: list[dict[str, Any]], order: dict[str, int]) -> list[dict[str, Any]]:
    unknown = len(order)
    return sorted(docs, key=lambda d: (order.get(d["workflow"]["git_commit"], unknown),
                                       d["date_utc"]))  # fmt: skip


def group_key(doc: dict[str, Any]) -> tuple[str, str]:
    """Which runs one history follows: the machine and the config (its hash, else the label)."""
    return doc["machine"]["id"], doc["workflow"]["config_hash"] or doc["label"]


@dataclass(frozen=True)
class Point:
    run: str  # the document's id
    commit: str
    median: float
    low: float
    high: float
    step: str  # against the previous point: faster, slower, within noise, or "" for the first


@dataclass(frozen=True)
class Series:
    machine: str
    config_hash: str
    label: str
    dataset: str
    variant: str
    points: list[Point]

    @property
    def flagged(self) -> list[Point]:
        return [p for p in self.points if p.step in (FASTER, SLOWER)]


def series(docs: list[dict[str, Any]], order: dict[str, int] | None = None) -> list[Series]:
    """One series per machine, config, dataset and variant with at least two runs."""
    order = commit_order() if order is None else order
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for doc in docs:
        groups.setdefault(group_key(doc), []).append(doc)
    out = []
    for (machine, config), runs in sorted(groups.items()):
        runs = ordered(runs, order)
        by_variant: dict[tuple[str, str], list[Point]] = {}
        for doc in runs:
            for v in doc["variants"]:
                rate = v["rows_per_s"]
                if rate["median"] is None:
                    continue
                # one series per server in a run of several (its `name` says which)
                points = by_variant.setdefault((v["dataset"], v.get("name", v["variant"])), [])
                low, high = rate["min"] or rate["median"], rate["max"] or rate["median"]
                step = verdict((points[-1].low, points[-1].high), (low, high)) if points else ""
                commit = doc["workflow"]["git_commit"][:7]
                points.append(Point(doc["id"], commit, rate["median"], low, high, step))
        label = runs[-1]["label"]
        out += [
            Series(machine, config, label, ds, variant, points)
            for (ds, variant), points in sorted(by_variant.items())
            if len(points) > 1
        ]
    return out


def report(all_series: list[Series]) -> str:
    """A text report: per machine and config, each variant's rates in commit order, steps marked
    ▲ (faster beyond noise) and ▼ (slower beyond noise) with the ratio to the run before."""
    if not all_series:
        return (
            "No machine and config has two archived runs yet; archive another run of the same "
            "config on the same machine (make archive) to see a history.\n"
        )
    lines: list[str] = []
    current = None
    for s in all_series:
        if (s.machine, s.config_hash) != current:
            current = (s.machine, s.config_hash)
            commits = " → ".join(p.commit for p in s.points)
            lines += ["", f"{s.machine}, config {s.config_hash} ({s.label}): {commits}"]
        cells = []
        for i, p in enumerate(s.points):
            mark = ""
            if p.step in (FASTER, SLOWER):
                arrow = "▲" if p.step == FASTER else "▼"
                mark = f" {arrow}{p.median / s.points[i - 1].median:.2f}x"
            cells.append(f"{p.median:,.0f}{mark}")
        lines.append(f"  {s.dataset}/{s.variant}: " + " → ".join(cells))
    flagged = sum(len(s.flagged) for s in all_series)
    lines += ["", f"{flagged} step(s) beyond the noise (▲ faster, ▼ slower: the min–max ranges "
              "of the two runs' repeats do not overlap)."]  # fmt: skip
    return "\n".join(lines).lstrip("\n") + "\n"
