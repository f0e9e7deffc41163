"""Run one benchmark and keep what it found: `findings/<date>-<name>/` with its output and the
machine, commit, date and versions it ran with (`make bench-<name>` runs every benchmark this way).

The folder holds `output.txt` (what the benchmark printed), `meta.json` (machine, git commit and
whether the tree was dirty, UTC time, command line, package versions) and any file the benchmark
writes itself: benchmarks put their CSV/JSON under $FINDINGS_DIR when it is set. The folder is
assembled under a temporary name and renamed into place only when the benchmark succeeds, so a
failed or interrupted run leaves no findings that look complete. Commit a folder when a page of
docs/ cites it.

findings/ keeps one current folder per command (findings/README.md): the run says where its
folder goes and which earlier folder of the same command it replaces, and how to retire that one.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ingestbench import CHECKOUT

#: Where findings go; FINDINGS_ROOT moves them (the tests do, to leave the checkout alone).
FINDINGS = Path(os.environ.get("FINDINGS_ROOT", CHECKOUT / "findings"))
#: What a reader of a finding needs to know it by; the rest is in requirements.lock at `commit`.
KEY_PACKAGES = ("questdb", "pandas", "polars", "pyarrow", "duckdb", "numpy", "snakemake")


def target_dir(name: str, day: dt.date, root: Path = FINDINGS) -> Path:
    """findings/<date>-<name>, or -2, -3 ... when that day already has one."""
    base = root / f"{day.isoformat()}-{name}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


def findings_file(name: str, fallback: Path | None = None) -> Path | None:
    """Where a benchmark writes its file `name`: into the findings folder when run through this
    script ($FINDINGS_DIR), else `fallback`. Light on purpose: timed child processes import it."""
    folder = os.environ.get("FINDINGS_DIR")
    return Path(folder) / name if folder else fallback


def replaced_folder(
    command: list[str], root: Path = FINDINGS, new: Path | None = None
) -> Path | None:
    """The newest folder under `root` (other than `new`) that the same command wrote: the one a
    new run of it replaces."""
    same = []
    for path in root.glob("*/meta.json"):
        if path.parent != new and json.loads(path.read_text()).get("command") == command:
            same.append(path.parent)
    return max(same, key=lambda p: json.loads((p / "meta.json").read_text()).get("started_utc", ""),
               default=None)  # fmt: skip


def retire_advice(new: Path, old: Path | None) -> str:
    """What to do with the folder a new run replaces (findings/README.md's rule)."""
    if old is None:
        return (
            f"{_shown(new)} is the first of its command: cite it from the page of docs/ it informs."
        )
    return (
        f"{_shown(new)} replaces {_shown(old)} (the same command): point the docs that cite "
        f"{old.name} at {new.name}, then `git rm -r {_shown(old)}`; if a doc keeps quoting "
        f"{old.name} as a contrast, list it in findings/README.md with {new.name} instead."
    )


def _shown(path: Path) -> str:
    return str(path.relative_to(CHECKOUT) if path.is_relative_to(CHECKOUT) else path)


def meta(name: str, argv: list[str], started: dt.datetime, ended: dt.datetime) -> dict:
    from ingestbench.ingest.environment import (
        git_info,
        host_info,
        installed_version,
        machine_info,
        python_info,
    )
    from ingestbench.ingest.pins import locked_versions

    locked = locked_versions()
    return {
        "benchmark": name,
        "command": argv,
        "started_utc": started.isoformat(timespec="seconds").replace("+00:00", "Z"),
        "ended_utc": ended.isoformat(timespec="seconds").replace("+00:00", "Z"),
        **git_info(CHECKOUT),
        "machine": machine_info(),
        "host": host_info(),
        "python": python_info()["version"],
        "packages": {p: installed_version(p) or locked.get(p) for p in KEY_PACKAGES},
    }


def main(argv: list[str]) -> int:
    if not argv:
        names = sorted(
            p.stem.removeprefix("bench_") for p in Path(__file__).parent.glob("bench_*.py")
        )
        print(f"usage: findings.py NAME [ARGS...]; NAME is one of: {', '.join(names)}")
        return 2
    name, args = argv[0].replace("-", "_"), argv[1:]
    script = Path(__file__).parent / f"bench_{name}.py"
    if not script.is_file():
        print(f"no benchmark {script.name} in {script.parent}; `make help` lists them.")
        return 2
    started = dt.datetime.now(dt.UTC)
    final = target_dir(argv[0], started.date())
    shown = ["make", f"bench-{argv[0]}", *([f"ARGS={' '.join(args)}"] if args else [])]
    print(f"bench-{argv[0]}: its findings go to {_shown(final)} when it succeeds.", flush=True)
    work = final.with_name(f".{final.name}.tmp")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    cmd = [sys.executable, str(script), *args]
    try:
        with open(work / "output.txt", "w") as out:
            env = {**os.environ, "FINDINGS_DIR": str(work)}
            proc = subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
            )
            for line in proc.stdout:  # the terminal and the file see the same lines
                sys.stdout.write(line)
                out.write(line)
            code = proc.wait()
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    if code != 0:
        shutil.rmtree(work, ignore_errors=True)
        print(f"bench-{argv[0]} failed (exit {code}); no findings written.")
        return code
    document = meta(argv[0], shown, started, dt.datetime.now(dt.UTC))
    (work / "meta.json").write_text(json.dumps(document, indent=2) + "\n")
    work.rename(final)
    print(f"findings: {_shown(final)}")
    print(retire_advice(final, replaced_folder(shown, final.parent, final)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
