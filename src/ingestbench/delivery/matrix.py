"""The delivery matrix: each case's verdict, the worst per path × fault, and the recommendation.

From worst to best: `lost n acknowledged` (the server acknowledged rows it does not have) and
`altered n` (rows no source row is: silent corruption) < `lost n unknown` (the connection broke
before an answer, or ILP/TCP, which answers nothing) < `lost n reported` (the error reached the
caller) < `duplicates n` < `exact`. A lost verdict says `(silent)` where no error reached the
caller at all. A case that failed outright is `no result`, below them all, so it cannot hide; a
case whose fault overlapped no request is `not measured`, never `exact`, and counts only where a
cell has nothing else. A cell is `exact` only from as many distinct fault positions that
overlapped a request as its run wanted (`points_wanted`, the config's `delivery.points`): one
case shows a loss or a duplicate, but too few positions cannot show that none happens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ingestbench.delivery.paths import CONTROLS, FAULTS, by_name

#: The cell of a path that cannot run on the dataset's table (its reason: `unsupported`).
UNSUPPORTED = "unsupported"
NO_RESULT, LOST_ACKNOWLEDGED, ALTERED, LOST_UNKNOWN, REPORTED, DUPLICATES, EXACT = range(7)
NOT_MEASURED = 99  # no verdict: ranks above exact so that any measured case outranks it
_LABEL = {LOST_ACKNOWLEDGED: "lost {n} acknowledged", ALTERED: "altered {n}",
          LOST_UNKNOWN: "lost {n} unknown", REPORTED: "lost {n} reported",
          DUPLICATES: "duplicates {n}", EXACT: "exact", NO_RESULT: "no result",
          NOT_MEASURED: "not measured"}  # fmt: skip
#: The worst ranks: the server kept less than it said, or something else than it was sent.
SILENT_CORRUPTION = (LOST_ACKNOWLEDGED, ALTERED)
#: A fault position: the slot of this many seconds a fault time falls in (two times in one slot
#: are one position).
POSITION_S = 0.01
LEAD = "Fastest path that never lost a row unreported nor altered one, where a fault was measured:"


@dataclass(frozen=True)
class Verdict:
    rank: int
    n: int = 0
    silent: bool = False  # rows lost and no error reached the caller

    @property
    def text(self) -> str:
        text = _LABEL[self.rank].format(n=f"{self.n:,}")
        return text + " (silent)" if self.silent else text


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
    if row["fault"] not in CONTROLS and not _true(row.get("overlapped")):
        return Verdict(NOT_MEASURED)
    silent = _int(row.get("errors_seen")) == 0 and not _true(row.get("reported"))
    for rank, key in ((LOST_ACKNOWLEDGED, "lost_acknowledged"), (ALTERED, "altered"),
                      (LOST_UNKNOWN, "lost_unknown"), (REPORTED, "lost_reported")):  # fmt: skip
        if n := _int(row.get(key)):
            return Verdict(rank, n, silent and rank != ALTERED)
    if dup := _int(row["duplicated"]):
        return Verdict(DUPLICATES, dup)
    return Verdict(EXACT)


def worst(verdicts: list[Verdict]) -> Verdict:
    rank = min(v.rank for v in verdicts)
    same = [v for v in verdicts if v.rank == rank]
    return Verdict(rank, max(v.n for v in same), any(v.silent for v in same))


#: A cell's class, for its colour on the page and in the chart: its worst verdict's kind.
CLASS = {LOST_ACKNOWLEDGED: "lost", ALTERED: "lost", LOST_UNKNOWN: "lost", REPORTED: "lost",
         NO_RESULT: "lost", DUPLICATES: "duplicates", EXACT: "exact",
         NOT_MEASURED: "not measured"}  # fmt: skip


def cells(rows: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """path -> fault -> the cell: its text (the worst measured case, `n/a (why)` or
    `unsupported`, and how many of its points overlapped a request; a cell of only points that
    overlapped none is `not measured`), its class (CLASS, or `none` where nothing ran), and its
    cases' verdicts with their fault times (seconds into the load) for a reader to check."""
    by_cell: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for row in rows:
        by_cell.setdefault(row["path"], {}).setdefault(row["fault"], []).append(row)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for path, by_fault in by_cell.items():
        out[path] = {}
        for fault, cases in by_fault.items():
            judged = [(c, v) for c in cases if (v := verdict(c)) is not None]
            if not judged:
                why = cases[0].get("not_applicable")
                text = UNSUPPORTED if _blank(why) else f"n/a ({why})"
                out[path][fault] = {"text": text, "class": "none", "cases": []}
                continue
            verdicts = [v for _, v in judged]
            worst_one = worst(verdicts)
            reached = positions(judged)
            wanted = max([_int(c.get("points_wanted")) for c in cases] + [1])
            if fault not in CONTROLS and worst_one.rank == EXACT and reached < wanted:
                worst_one = Verdict(NOT_MEASURED)  # too few positions to say nothing happens
            text = worst_one.text
            if fault not in CONTROLS and (reached < len(verdicts) or reached < wanted):
                short = f", {wanted} wanted" if reached < wanted else ""
                text += f" ({reached} of {len(verdicts)} points overlapped a request{short})"
            seen = [{"at_s": None if _blank(c.get("fault_at_s")) else float(c["fault_at_s"]),
                     "verdict": v.text} for c, v in judged]  # fmt: skip
            out[path][fault] = {"text": text, "class": CLASS[worst_one.rank], "cases": seen}
    return out


def position(at_s: float) -> int:
    """The position of a fault time (seconds into the load): its POSITION_S slot."""
    return math.floor(at_s / POSITION_S + 1e-9)  # (0.07 / 0.01 is 6.999...)


def positions(judged: list[tuple[dict[str, Any], Verdict]]) -> int:
    """The distinct positions of the cases that overlapped a request (a case without its time
    counts as one of its own)."""
    return len({("case", i) if _blank(c.get("fault_at_s")) else position(float(c["fault_at_s"]))
                for i, (c, v) in enumerate(judged) if v.rank != NOT_MEASURED})  # fmt: skip


def matrix(rows: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """path -> fault -> the cell's text (`cells`)."""
    return {path: {fault: cell["text"] for fault, cell in by_fault.items()}
            for path, by_fault in cells(rows).items()}  # fmt: skip


def outcomes(rows: list[dict[str, Any]]) -> str:
    """Which paths lost rows under which faults (`silently` where no error reached the caller),
    and which came out exact under every fault that applies to them, each measured."""
    lost, exact = [], []
    for path, by_fault in cells(rows).items():
        faults = {f: cell for f, cell in by_fault.items() if f not in CONTROLS}
        losing = [f + (" silently" if "(silent)" in cell["text"] else "")
                  for f, cell in faults.items() if cell["class"] == "lost"]  # fmt: skip
        if losing:
            lost.append(f"`{path}` ({', '.join(losing)})")
        elif any(c["class"] == "exact" for c in faults.values()) and all(
            c["class"] in ("exact", "none") for c in faults.values()
        ):
            exact.append(f"`{path}`")
    said = f"Rows lost under a fault: {'; '.join(lost)}." if lost else "No path lost a row."
    if exact:
        said += f" Exact under every fault, each measured: {', '.join(exact)}."
    return said


def unsupported(rows: list[dict[str, Any]]) -> dict[str, str]:
    """path -> why it cannot run on the dataset's table, for the paths that did not run."""
    return {r["path"]: r["unsupported"] for r in rows if not _blank(r.get("unsupported"))}


def throughput(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Rows per second of each path's fault-free control load."""
    return {r["path"]: _int(r["source_rows"]) / float(r["load_s"]) for r in rows
            if r["fault"] == "none" and not _blank(r.get("load_s"))
            and float(r["load_s"]) > 0}  # fmt: skip


def _rule(path: str) -> str:
    try:
        return by_name(path).resend
    except KeyError:  # not a path of the catalogue's (a hand-made row)
        return "retries, then the failed batch sent again from the code's copy"


def recommendation(rows: list[dict[str, Any]]) -> str:
    """One line: the fastest path that never lost rows acknowledged or unknown, nor altered any,
    in a measured case (cells not measured say nothing either way), and what it needs."""
    ranks: dict[str, list[int]] = {}
    dup_faults: dict[str, list[str]] = {}
    for row in rows:
        if (v := verdict(row)) is not None and v.rank != NOT_MEASURED:
            ranks.setdefault(row["path"], []).append(v.rank)
            if v.rank == DUPLICATES:
                dup_faults.setdefault(row["path"], []).append(row["fault"])
    speed = throughput(rows)
    safe = [p for p, r in ranks.items() if min(r) > LOST_UNKNOWN and p in speed]
    if not safe:
        return ("No path delivered without losing acknowledged or unknown rows (or a case "
                "without a result) under every fault measured.")  # fmt: skip
    best = max(safe, key=speed.__getitem__)
    unmeasured = [f for f, cell in cells(rows)[best].items() if cell["class"] == "not measured"]
    caveat = (f" It was not measured under {', '.join(unmeasured)} (too few fault points "
              f"overlapped a request)." if unmeasured else "")  # fmt: skip
    needs = [f"its resend rule ({_rule(best)})"]
    if best.endswith("-dedup"):
        needs.append("a table with DEDUP UPSERT KEYS on the timestamp and the tags")
    elif dup_faults.get(best):
        faults = ", ".join(sorted(set(dup_faults[best]), key=FAULTS.index))
        dedup_refused = [w for p, w in unsupported(rows).items() if p.endswith("-dedup")]
        if dedup_refused:  # DEDUP is not for this table (own data): say so, not that it helps
            why = dedup_refused[0]
            return (
                f"{LEAD} `{best}` ({speed[best]:,.0f} rows/s fault-free); it needs {needs[0]}, "
                f"and it duplicated rows under "
                f"{faults}, which DEDUP cannot undo here ({why}).{caveat}"
            )
        needs.append(f"DEDUP UPSERT KEYS for exactly-once (it duplicated rows under {faults})")
    return (
        f"{LEAD} `{best}` ({speed[best]:,.0f} rows/s fault-free); it needs "
        f"{' and '.join(needs)}.{caveat}"
    )
