"""How long the preflight takes: `ingestbench check` on the default config and on own files.

Each round runs `ingestbench check --config C` as a user does (a fresh interpreter: the package's
imports are part of what the user waits for) on config.yaml, and on a config whose dataset is an
own file of N trades (ingestbench.own.example), as Parquet and as CSV, written once into a
temporary folder outside the timing; the configs in turn, wall-clock medians over the rounds.

    .venv/bin/python benchmarks/bench_preflight.py   # or: make bench-preflight
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from _bench import REPO

from ingestbench.own.example import write_example

VARIANT = {"library": "pandas", "method": "dataframe", "transport": "http"}


def own_config(folder: Path, path: Path, fmt: str) -> Path:
    entry = {"label": "trades", "path": str(path), "timestamp": "ts"}
    if fmt == "csv":
        entry |= {"symbols": ["venue", "instrument", "side"],
                  "csv": {"delimiter": ";", "null_values": ["NA"]}}  # fmt: skip
    config = folder / f"own-{fmt}.yaml"
    config.write_text(yaml.safe_dump({"results_dir": "results/bench-preflight", "datasets": [entry],
                                      "variants": [{**VARIANT, "format": fmt}]}))  # fmt: skip
    return config


def seconds(config: Path) -> float:
    cmd = [sys.executable, "-m", "ingestbench.cli", "check", "--config", str(config)]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, cwd=REPO)
    return time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=5, help="runs of each config (default: 5)")
    p.add_argument("--rows", type=int, default=1_000_000, help="rows of the own file")
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="ingestbench-preflight-") as tmp:
        folder = Path(tmp)
        configs = {"config.yaml": REPO / "config.yaml"}
        for fmt in ("parquet", "csv"):
            data = folder / f"trades-{a.rows}.{fmt}"
            write_example(data, a.rows)
            mib = data.stat().st_size / 2**20
            configs[f"own {fmt}, {a.rows:,} rows ({mib:.1f} MiB)"] = own_config(folder, data, fmt)
        times: dict[str, list[float]] = {name: [] for name in configs}
        for _ in range(a.rounds):
            for name, config in configs.items():
                times[name].append(seconds(config))
    print(f"\n`ingestbench check`, wall seconds: medians of {a.rounds} interleaved rounds\n")
    print(f"{'config':<42}{'median':>8}{'min':>8}{'max':>8}")
    for name, runs in times.items():
        print(f"{name:<42}{statistics.median(runs):>8.2f}{min(runs):>8.2f}{max(runs):>8.2f}")


if __name__ == "__main__":
    main()
