"""The server axis end to end (`make run CONFIG=configs/versions.yaml`, or settings.yaml), timed.

Runs the config in this checkout (its results folder must be empty or absent, so that every job
runs), then writes what it found beside the findings' meta.json: summary.csv, summary.md and
environment.json (each server's version, Java and properties as read back), and README.md with
the command, the wall time, the machine's load average (1, 5 and 15 min) before and after, the
servers side by side (ratios against the newest version's defaults, with the spread) and every
path a server could not run, with the reason. Run it from a fresh clone:

    make bench-servers                                   # configs/versions.yaml
    make bench-servers ARGS="--config configs/settings.yaml"

`--results DIR` writes the findings of a run that finished already (its wall time then comes
from the newest Snakemake log of this checkout, and its load average was not recorded).
`--earlier DIR ...` (findings folders or results folders of the same config) adds each cell beyond
the noise in any run with its ratio in every run, and whether it held in all of them: the repeats
of one job share the machine's state of those seconds, so a cell apart in one run alone is no
finding.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import shutil
import sys
from pathlib import Path

from _config_run import TimedRun, timed_run
from findings import findings_file

from ingestbench import CHECKOUT
from ingestbench.config import load_config
from ingestbench.results.summary import read_summary
from ingestbench.results.summary.rows import STATUS, UNSUPPORTED
from ingestbench.results.summary.servers import agreement, comparison, held_verdict, side_by_side

CONFIG = "configs/versions.yaml"


def finished_run_seconds() -> float:
    """The wall time Snakemake's newest log in this checkout states ("Elapsed time: H:MM:SS")."""
    logs = sorted((CHECKOUT / ".snakemake" / "log").glob("*.snakemake.log"))
    found = re.search(r"Elapsed time: (\d+):(\d+):([\d.]+)", logs[-1].read_text()) if logs else None
    if found is None:
        raise SystemExit("no Snakemake log of this checkout states its elapsed time; rerun it.")
    h, m, sec = found.groups()
    return int(h) * 3600 + int(m) * 60 + float(sec)


def held_against(df, earlier: list[Path]) -> str:
    """The section on the earlier runs: each cell beyond the noise in any run, run by run."""
    if not earlier:
        return ""
    frames = [read_summary(d / "summary.csv", unsupported=True) for d in earlier] + [df]
    runs = [comparison(f) for f in frames]
    names = [f"`{d}`" for d in earlier] + ["this run"]
    lines = ["", "## Against the earlier runs", "",
             "Each cell beyond the noise (its repeats' range apart from the baseline's) in any "
             "run, its ratio in each; it held where it lay apart the same way in every run.", "",
             "| path | server | " + " | ".join(names) + " | held |",
             "|---|---|" + "---:|" * len(names) + "---|"]  # fmt: skip
    mark = {"above": " ↑", "below": " ↓", None: ""}
    for c in agreement(runs):
        cells = [f"{r:.2f}×{mark[d]}" if r is not None else "–"
                 for r, d in zip(c["ratios"], c["apart"], strict=True)]  # fmt: skip
        lines.append(f"| `{c['variant']}` | {c['server']} | " + " | ".join(cells)
                     + f" | {'yes' if c['held'] else 'no'} |")  # fmt: skip
    return "\n".join([*lines, "", held_verdict(runs)]) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--config", default=CONFIG, help=f"the config to run (default: {CONFIG})")
    p.add_argument("--results", type=Path, help="a finished run of the config: no run, findings")
    p.add_argument(
        "--earlier",
        type=Path,
        nargs="*",
        default=[],
        help="earlier runs of the config (folders with summary.csv) to hold it against",
    )
    a = p.parse_args()
    results = a.results or CHECKOUT / load_config(CHECKOUT / a.config)["results_dir"]
    if a.results:
        finished = dt.datetime.fromtimestamp((results / "summary.csv").stat().st_mtime, dt.UTC)
        run = TimedRun(finished, finished_run_seconds(), "not recorded", "not recorded")
    else:
        run = timed_run(a.config, results)
        if isinstance(run, int):
            return run
    out = findings_file("README.md", results / "findings-README.md")
    for name in ("summary.csv", "summary.md", "environment.json"):
        shutil.copyfile(results / name, out.with_name(name))
    df = read_summary(results / "summary.csv", unsupported=True)
    jobs, servers = len(df), df["server"].nunique()
    lacking = df[df[STATUS] == UNSUPPORTED] if STATUS in df else df.iloc[0:0]
    lacks = "\n".join(f"- `{r['variant']}` on {r['server']}: {r['reason']}"
                      for _, r in lacking.iterrows()) or "- none"  # fmt: skip
    out.write_text(
        f"# The server axis (`{a.config}`)\n\n"
        f"Command: `make run CONFIG={a.config}` in a fresh clone, "
        f"{'finished' if a.results else 'started'} {run.started:%Y-%m-%d %H:%M} UTC; it took "
        f"{run.seconds / 60:.1f} min ({jobs} jobs on "
        f"{servers} servers, every supported one validated row for row). Machine, commit and "
        f"versions: meta.json; each server's version, Java and properties as read back: "
        f"environment.json. The machine is shared (2 cores, other agents' jobs beside this "
        f"one): its load average (1, 5, 15 min) before: {run.before}; after: {run.after}.\n\n"
        f"{side_by_side(df) or 'One server: nothing to set side by side.'}\n"
        f"## What a server could not run\n\n{lacks}\n" + held_against(df, a.earlier)
    )
    print(out.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
