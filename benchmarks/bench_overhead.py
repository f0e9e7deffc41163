"""Where a workflow run's wall time goes: timed phases, warm-ups, the rest of each job, Snakemake.

The rest of each job: serialize passes, each ingest job's server start and stop, imports and
tables, and validation.

It reads a finished run, measures nothing itself: Snakemake's log (each job's start and finish,
to the second) and the run files (each repeat's phases, the warm-up's seconds). Jobs of other
rules may overlap the ingestions (validation runs beside the next ingestion on 2 cores), so the
rules' seconds add up to more than the wall time; the ingest jobs never overlap each other.

    .venv/bin/python benchmarks/bench_overhead.py     # the newest log in .snakemake/log, results/
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import re
from collections import defaultdict
from pathlib import Path

from findings import findings_file

REPO = Path(__file__).resolve().parents[1]
_STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ [\d:]{8} \d{4})\]$")
_START = re.compile(r"^(?:local)?rule (\w+):$")
_JOBID = re.compile(r"^\s+jobid: (\d+)$")
_DONE = re.compile(r"^Finished jobid: (\d+) \(Rule: (\w+)\)$")


def job_seconds(log: Path) -> tuple[dict[str, list[float]], float]:
    """({rule: [each job's seconds]}, the run's wall seconds) from a Snakemake log."""
    now = first = None
    started: dict[str, dt.datetime] = {}
    pending_rule = None
    per_rule: dict[str, list[float]] = defaultdict(list)
    for line in log.read_text().splitlines():
        if m := _STAMP.match(line):
            now = dt.datetime.strptime(m.group(1), "%a %b %d %H:%M:%S %Y")
            first = first or now
        elif m := _START.match(line):
            pending_rule = m.group(1)
        elif (m := _JOBID.match(line)) and pending_rule:
            started[m.group(1)] = now
            pending_rule = None
        elif (m := _DONE.match(line)) and m.group(1) in started:
            per_rule[m.group(2)].append((now - started.pop(m.group(1))).total_seconds())
    if first is None:
        raise SystemExit(f"{log} has no timestamps; pass the log of a finished Snakemake run")
    return per_rule, (now - first).total_seconds()


def ingest_parts(results: Path) -> dict[str, float]:
    """Seconds of the ingest jobs' timed repeats, serialize passes and warm-ups."""
    parts = defaultdict(float)
    for path in sorted((results / "runs").glob("*/*/*.json")):  # runs/<server>/<dataset>/
        run = json.loads(path.read_text())
        parts["timed repeats (end to end)"] += sum(r["end_to_end"] for r in run["repeats"])
        parts["serialize passes"] += sum(r["phases"].get("serialize") or 0 for r in run["repeats"])
        parts["warm-ups"] += (run.get("warmup") or {}).get("seconds") or 0
    return parts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    logs = sorted((REPO / ".snakemake" / "log").glob("*.snakemake.log"))
    parser.add_argument("--log", type=Path, default=logs[-1] if logs else None)
    parser.add_argument("--results", type=Path, default=REPO / "results")
    args = parser.parse_args()
    if args.log is None:
        parser.error("no Snakemake log in .snakemake/log; run the workflow or pass --log")
    per_rule, wall = job_seconds(args.log)
    parts = ingest_parts(args.results)
    ingest = sum(per_rule.get("ingest", []))
    rows = [("Snakemake wall time", wall, "")]
    rows += [(f"rule {rule} ({len(s)} jobs)", sum(s), "") for rule, s in
             sorted(per_rule.items(), key=lambda kv: -sum(kv[1]))]  # fmt: skip
    rows += [(f"  ingest: {name}", seconds, "") for name, seconds in parts.items()]
    rest = ingest - sum(parts.values())
    rows.append(("  ingest: the rest (server start/stop, imports, tables, waits)", rest, ""))
    print(f"{args.log.name}, {args.results}\n")
    print(f"{'part':<66}{'seconds':>9}{'share':>7}")
    for name, seconds, _ in rows:
        print(f"{name:<66}{seconds:>9.0f}{seconds / wall:>7.0%}")
    out = findings_file("overhead.csv")
    if out is not None:
        with open(out, "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["part", "seconds", "share_of_wall"])
            writer.writerows((n, round(s, 1), round(s / wall, 3)) for n, s, _ in rows)


if __name__ == "__main__":
    main()
