"""The delivery matrix: each case's verdict, the worst per path × fault, and the recommendation.

From worst to best: `lost n (silent)` (rows missing, and the load claimed success) < `lost n
(reported)` (rows missing, and the code gave up with the error) < `altered n` < `duplicates n`
< `exact`. A case that failed outright is `no result`, below them all, so it cannot hide.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ingestbench.delivery.paths import FAULTS

#: The cell of a path that cannot run on the dataset's table (its reason: `unsupported`).
UNSUPPORTED = "unsupported"
NO_RESULT, SILENT, REPORTED, ALTERED, DUPLICATES, EXACT = range(6)
_LABEL = {SILENT: "lost {n} (silent)", REPORTED: "lost {n} (reported)", ALTERED: "altered {n}",
          DUPLICATES: "duplicates {n}", EXACT: "exact", NO_RESULT: "no result"}  # fmt: skip


@dataclass(frozen=True)
class Verdict:
    rank: int
    n: int = 0

    @property
    def text(self) -> str:
        return _LABEL[self.rank].format(n=f"{self.n:,}")


def _int(value: Any) -> int:
    if value in (None, "") or (isinstance(value, float) and math.isnan(value)):
        return 0
    return int(float(value))


def _true(value: Any) -> bool:
    return value is True or str(value).lower() == "true"


def _blank(value: Any) -> bool:
    return value in (None, "") or (isinstance(value, float) and math.isnan(value))


def verdict(row: dict[str, Any]) -> Verdict | None:
    """One case's verdict (None: the fault does not apply to the path, or the path cannot run on
    the dataset's table)."""
    if not _blank(row.get("not_applicable")) or not _blank(row.get("unsupported")):
        return None
    if not _blank(row.get("case_error")) or _blank(row.get("source_rows")):
        return Verdict(NO_RESULT)
    lost, altered, dup = _int(row["lost"]), _int(row["altered"]), _int(row["duplicated"])
    if lost:
        return Verdict(SILENT if _true(row["claimed_success"]) else REPORTED, lost)
    if altered:
        return Verdict(ALTERED, altered)
    if dup:
        return Verdict(DUPLICATES, dup)
    return Verdict(EXACT)


def worst(verdicts: list[Verdict]) -> Verdict:
    rank = min(v.rank for v in verdicts)
    return Verdict(rank, max(v.n for v in verdicts if v.rank == rank))


def matrix(rows: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """path -> fault -> the cell's text: the worst case, `n/a (why)` or `unsupported` (the path
    did not run: `unsupported` says why), and how many of its points the fault never reached
    (the load ended first)."""
    cells: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for row in rows:
        cells.setdefault(row["path"], {}).setdefault(row["fault"], []).append(row)
    out: dict[str, dict[str, str]] = {}
    for path, by_fault in cells.items():
        out[path] = {}
        for fault, cases in by_fault.items():
            verdicts = [v for c in cases if (v := verdict(c)) is not None]
            if not verdicts:
                why = cases[0].get("not_applicable")
                out[path][fault] = UNSUPPORTED if _blank(why) else f"n/a ({why})"
                continue
            text = worst(verdicts).text
            missed = sum(1 for c in cases if fault != "none" and _blank(c.get("case_error"))
                         and _blank(c.get("fault_at_s")))  # fmt: skip
            if missed:
                text += f" ({missed} of {len(cases)} points not reached)"
            out[path][fault] = text
    return out


def unsupported(rows: list[dict[str, Any]]) -> dict[str, str]:
    """path -> why it cannot run on the dataset's table, for the paths that did not run."""
    return {r["path"]: r["unsupported"] for r in rows if not _blank(r.get("unsupported"))}


def throughput(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Rows per second of each path's fault-free control load."""
    return {r["path"]: _int(r["source_rows"]) / float(r["load_s"]) for r in rows
            if r["fault"] == "none" and not _blank(r.get("load_s"))
            and float(r["load_s"]) > 0}  # fmt: skip


def recommendation(rows: list[dict[str, Any]]) -> str:
    """One line: the fastest path that never lost rows silently, and what it needs."""
    ranks: dict[str, list[int]] = {}
    dup_faults: dict[str, list[str]] = {}
    for row in rows:
        if (v := verdict(row)) is not None:
            ranks.setdefault(row["path"], []).append(v.rank)
            if v.rank == DUPLICATES:
                dup_faults.setdefault(row["path"], []).append(row["fault"])
    speed = throughput(rows)
    safe = [p for p, r in ranks.items() if min(r) > SILENT and p in speed]
    if not safe:
        return ("No path delivered without a silent loss (or a case without a result) under "
                "every fault measured.")  # fmt: skip
    best = max(safe, key=speed.__getitem__)
    needs = ["its resend rule (retries, then the failed batch sent again from the code's copy)"]
    if best.endswith("-dedup"):
        needs.append("a table with DEDUP UPSERT KEYS on the timestamp and the tags")
    elif dup_faults.get(best):
        faults = ", ".join(sorted(set(dup_faults[best]), key=FAULTS.index))
        dedup_refused = [w for p, w in unsupported(rows).items() if p.endswith("-dedup")]
        if dedup_refused:  # DEDUP is not for this table (own data): say so, not that it helps
            why = dedup_refused[0]
            return (
                f"Fastest path that never lost rows silently: `{best}` ({speed[best]:,.0f} "
                f"rows/s fault-free); it needs {needs[0]}, and it duplicated rows under "
                f"{faults}, which DEDUP cannot undo here ({why})."
            )
        needs.append(f"DEDUP UPSERT KEYS for exactly-once (it duplicated rows under {faults})")
    return (
        f"Fastest path that never lost rows silently: `{best}` ({speed[best]:,.0f} rows/s "
        f"fault-free); it needs {' and '.join(needs)}."
    )
