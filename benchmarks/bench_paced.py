"""Paced ingestion end to end (`make run CONFIG=configs/paced.yaml`), timed: each path's latency.

Runs the experiment's config in this checkout (its results folder must be empty or absent, so
that every job runs; it will not start at `--max-load` or above), or with `--results DIR` takes a
finished run, then writes what it found beside the findings' meta.json: README.md (the command,
machine, commit, date, the run's wall time, the machine's load before and after, each job's wall
time, the summary's paced section and every step's main figures), paced.csv and the chart.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import sys
from pathlib import Path

import pandas as pd
from _config_run import TimedRun, load_average, timed_run
from findings import findings_file

from ingestbench import CHECKOUT
from ingestbench.config import load_config
from ingestbench.paced.summary import latency_text, markdown
from ingestbench.paced.table import read_paced_table
from ingestbench.storage.files import load_json, write_text_atomic


def job_seconds(results: Path) -> list[tuple[str, float]]:
    """Each paced job's wall time, from Snakemake's benchmark files."""
    out = []
    for tsv in sorted((results / "benchmarks" / "paced").rglob("*.tsv")):
        with open(tsv) as f:
            row = next(csv.DictReader(f, delimiter="\t"))
        out.append((tsv.stem, float(row["s"])))
    return out


def steps_table(results: Path) -> list[str]:
    df = read_paced_table(results / "paced.csv")
    df = df[df["kind"] != "warmup"]
    lines = ["| variant | repeat | offered rows/s | sent rows/s | visible rows/s | measured s | "
             "p50 | p99 | p99.9 | max | resolution | service p99 | status |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]  # fmt: skip
    for _, r in df.iterrows():
        offered = "unpaced" if r["kind"] == "unpaced" else f"{r['offered_rows_per_s']:,.0f}"
        repeat = "–" if pd.isna(r["repeat"]) else int(r["repeat"])
        if isinstance(r["skipped"], str):
            lines.append(f"| {r['variant']} | {repeat} | {offered} | {r['status']}: "
                         f"{r['skipped']} | | | | | | | | | |")  # fmt: skip
            continue
        res = r["resolution_s"]
        lat = [latency_text(r[f"latency_{k}_s"], res) for k in ("p50", "p99", "p999", "max")]
        lines.append(f"| {r['variant']} | {repeat} | {offered} | "
                     f"{r['sent_rows_per_s']:,.0f} | {r['visible_rows_per_s']:,.0f} | "
                     f"{r['measured_s']:.1f} | {' | '.join(lat)} | {res:.2f} s | "
                     f"{r['service_p99_s'] * 1000:.1f} ms | {r['status']} |")  # fmt: skip
    return lines


def write_findings(results: Path, out: Path, command: str, run: TimedRun | None) -> None:
    env = load_json(results / "environment.json", "environment file")
    machine, workflow = env.get("machine", {}), env.get("workflow", {})
    out.mkdir(parents=True, exist_ok=True)
    jobs = job_seconds(results)
    total = sum(s for _, s in jobs)
    lines = [
        "# Paced ingestion: latency at a set rate, and the highest rate each path sustains",
        "",
        f"- Command: `{command}` (from a fresh clone)",
        f"- Machine: {machine.get('cpu_model')}, {machine.get('cores_logical')} cores, "
        f"{machine.get('ram_bytes', 0) / 2**30:.0f} GiB RAM, {machine.get('os')}",
        f"- Commit: {workflow.get('git_commit') or workflow.get('commit')}"
        f"{' (dirty)' if workflow.get('git_dirty') else ''}",
        f"- Date: {env.get('timestamp_utc')} (UTC); "
        f"QuestDB {env.get('questdb', {}).get('version')}",
        *(
            [f"- Wall time of the whole run: {run.seconds / 60:.1f} min, started "
             f"{run.started:%Y-%m-%d %H:%M} UTC",
             f"- Load average (1, 5, 15 min) before: {run.before}; after: {run.after}. The "
             "machine is shared with other agents' work: a figure taken under load says so here."]
            if run else ["- A finished run's folder (`--results`): its wall time and load "
                         "were not taken by this benchmark."]
        ),
        f"- Paced jobs: {len(jobs)}, {total / 60:.1f} min of job wall time in all "
        f"({', '.join(f'{n} {s:.0f} s' for n, s in jobs)})",
        "",
        markdown(read_paced_table(results / "paced.csv")).lstrip("\n").replace(
            "## Paced ingestion", "## Summary (summary.md's paced section)", 1),
        "## Every step (paced.csv; the warm-up left out)",
        "",
        *steps_table(results),
        "",
    ]  # fmt: skip
    write_text_atomic(out / "README.md", "\n".join(lines))
    shutil.copy(results / "paced.csv", out / "paced.csv")
    for ext in ("png", "svg"):
        chart = results / "plots" / f"paced.{ext}"
        if chart.is_file():
            shutil.copy(chart, out / chart.name)


CONFIG = "configs/paced.yaml"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--config", default=CONFIG, help=f"the config to run (default: {CONFIG})")
    p.add_argument("--results", type=Path, help="a finished run's folder: run nothing")
    p.add_argument(
        "--max-load", type=float, default=3.0,
        help="refuse to start at this 1-minute load average or above (default: 3)",
    )  # fmt: skip
    a = p.parse_args()
    command = f"make run CONFIG={a.config}"
    results = a.results or CHECKOUT / load_config(CHECKOUT / a.config)["results_dir"]
    run = None
    if a.results is None:
        if os.getloadavg()[0] >= a.max_load:
            print(f"the load average is {load_average()}: wait until its first figure is below "
                  f"{a.max_load:g}, or pass --max-load.")  # fmt: skip
            return 3
        run = timed_run(a.config, results)
        if isinstance(run, int):
            return run
    out = findings_file("README.md", results / "findings" / "README.md")
    write_findings(results, out.parent, command, run)
    print(out.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
