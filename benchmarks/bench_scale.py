"""Client memory, speed and CPU from 1M to 100M rows, and the memory of validating them.

For each size (rows, rounded up to whole epochs of --scale hosts) this benchmark generates the
TSBS cpu Parquet if it is not in --data-dir yet (the workflow's generator, after the disk check),
then runs each client variant once, one at a time and each in a fresh process, on one QuestDB
started as `config.yaml` (or --config) says and warmed up as the workflow does (`warmup_rows`,
once per variant), through the workflow's own code path (`ingestbench.ingest.runner.run_repeat`):
streamed as named, and whole-file (`-call`) up to --whole-file-max-rows, where it fits; with
--rounds N, N rounds of them, in reverse order every other round so that neither mode always
meets the server first. Per run it reports:

- peak client RSS: the client's own process tree, workers included, the server apart (the
  repeat's `client_rss_bytes`);
- end-to-end rows/s, the phase sums (read, convert, send, visible) and overlap (their sum over
  end to end; 1.0 when nothing overlaps);
- client and server CPU seconds per 1M rows, and `cpu_busy`: both over what the machine's cores
  could give in the end-to-end time (near 1.0, the cores were saturated: overlapping phases
  can only move CPU time around, not fill idle time).

For each variant run both ways it prints streamed over whole-file, round by round (the two ran
on the same server minutes apart), and the median over the rounds.

Then it exports the last table in pieces and validates it row for row in a child process (DuckDB
under `validation.memory_limit`, spilling to a temporary directory) and reports that peak RSS.

    .venv/bin/python benchmarks/bench_scale.py 1000000 10000000 100000000   # or: make bench-scale
"""

from __future__ import annotations

import argparse
import csv
import multiprocessing as mp
import os
import queue
import statistics
import tempfile
import traceback
from pathlib import Path

from _bench import REPO, TABLE, warm_up_each
from findings import findings_file

from ingestbench.columnar.duckdb_sql import duckdb_limits
from ingestbench.config import QuestDBSettings, load_config
from ingestbench.errors import UserError
from ingestbench.ingest.frames.readers import import_libraries
from ingestbench.ingest.methods import cpu_job
from ingestbench.ingest.runner import PeakRss, run_repeat
from ingestbench.results.records import SCHEMA_VERSION
from ingestbench.server.configured import questdb_server
from ingestbench.storage.disk import Need, check_needs, files_bytes
from ingestbench.storage.files import atomic_path
from ingestbench.tsbs import DatasetParams, generate
from ingestbench.validate import expected_aggregates, export_table, questdb_aggregates, validate_run
from ingestbench.variants import parse_variant_name

DEFAULT_VARIANTS = [
    "pandas-dataframe-parquet-tcp",
    "polars-dataframe-parquet-tcp",
    "pandas-dataframe-parquet-http",
    "pandas-threads-parquet-http-w2",
    "pandas-processes-parquet-http-w2",
]
COLUMNS = ["rows", "round", "variant", "mode", "client_rss_mib", "rows_per_s", "read_s",
           "convert_s", "send_s", "visible_s", "overlap", "client_cpu_s_per_1m",
           "server_cpu_s_per_1m", "cpu_busy", "passed"]  # fmt: skip
MIB = 1 << 20


def dataset(rows: int, scale: int, data_dir: Path) -> tuple[DatasetParams, Path]:
    """The size's Parquet in data_dir, generated (after the disk check) if it is not there."""
    params = DatasetParams.from_config({"label": "scale", "scale": scale, "rows": rows})
    path = data_dir / f"{params.name}.parquet"
    if not path.exists():
        check_needs([Need(data_dir, files_bytes(params.rows, ["parquet"]), "the dataset")])
        print(f"generating {params.rows:,} rows into {path}", flush=True)
        generate(params, data_dir, formats=("parquet",), progress=False)
    return params, path


def variant_or_none(name: str):
    """The parsed variant, or None when this checkout does not know its name (e.g. `-call`)."""
    try:
        return parse_variant_name(name)
    except ValueError:
        return None


def measure(qdb, path: Path, name: str, rows: int, version: int) -> dict | None:
    variant = variant_or_none(name)
    if variant is None:
        print(f"  {name}: not a variant this checkout knows; skipped", flush=True)
        return None
    import_libraries(variant.library)  # start-up cost, outside every figure
    job = cpu_job(qdb, TABLE, variant, path, rows, version, field_type="double")
    r = run_repeat(job, 1)
    p, server_cpu = r["phases"], r.get("server_cpu_s")  # None for an external server
    return {
        "rows": rows,
        "variant": name,
        "mode": "whole-file" if name.endswith("-call") else "streamed",
        "client_rss_mib": round(r["client_rss_bytes"] / MIB, 1),
        "rows_per_s": round(rows / r["end_to_end"]),
        **{f"{k}_s": round(p[k], 3) for k in ("read", "convert", "send", "visible")},
        "overlap": round(r["overlap"], 2),
        "client_cpu_s_per_1m": round(r["client_cpu_s"] * 1e6 / rows, 2),
        "server_cpu_s_per_1m": None if server_cpu is None else round(server_cpu * 1e6 / rows, 2),
        "cpu_busy": None
        if server_cpu is None
        else round((r["client_cpu_s"] + server_cpu) / (os.cpu_count() * r["end_to_end"]), 2),
        "passed": "",
    }


def warm_up_server(qdb, path: Path, names: list[str], rows: int, version: int,
                   warmup_rows: int) -> None:  # fmt: skip
    """The workflow's untimed warm-up once per variant, here in the benchmark's own process: the
    server's JIT is what needs it (each measured run's process is fresh anyway)."""
    variants = [v for v in map(variant_or_none, names) if v is not None]
    for library in {v.library for v in variants}:
        import_libraries(library)
    print(f"warming the server up: {min(warmup_rows, rows):,} rows with each of "
          f"{len(variants)} variants, untimed", flush=True)  # fmt: skip
    warm_up_each(
        [cpu_job(qdb, TABLE, v, path, rows, version, field_type="double") for v in variants],
        warmup_rows,
    )


def _measure_child(args: tuple, out) -> None:
    try:
        out.put(("ok", measure(*args)))
    except UserError as exc:
        out.put(("error", str(exc)))
    except BaseException:  # a bug: the parent prints it and stops instead of waiting forever
        out.put(("crash", traceback.format_exc()))


def measure_apart(qdb, path: Path, name: str, rows: int, version: int) -> dict | None:
    """measure() in a fresh process, so that a variant's RSS is its own and not what the
    allocator kept from the variants before it."""
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    child = ctx.Process(target=_measure_child, args=((qdb, path, name, rows, version), out))
    child.start()
    try:
        while True:  # take the item before join(): a child exits only once its item is taken
            try:
                status, result = out.get(timeout=1)
                break
            except queue.Empty:
                if not child.is_alive():
                    status, result = "crash", f"the run's process died (exit code {child.exitcode})"
                    break
    finally:
        child.join()
    if status == "error":
        raise UserError(result)
    if status == "crash":
        raise RuntimeError(f"{name}: {result}")
    return result


def _validate_child(source: str, export: str, actual: dict, variant: dict, rows: int,
                    memory_limit: str, spill_root: str, out) -> None:  # fmt: skip
    with duckdb_limits(memory_limit, Path(spill_root)) as limits:
        # The workflow's file shapes: each table keyed by its name in the dataset (cpu: one).
        expected = {"tables": {TABLE: expected_aggregates(Path(source), limits=limits)}}
        run = {"schema_version": SCHEMA_VERSION, "dataset": {"name": Path(source).stem,
               "rows": rows}, "variant": variant, "rows": rows, "repeats": [],
               "table_rows": {TABLE: rows}}  # fmt: skip
        result = validate_run(run, Path(source), expected, {"tables": {TABLE: actual}},
                              Path(export), limits=limits)  # fmt: skip
    out.put(result["passed"])


def measure_validation(
    qdb, path: Path, variant: dict, rows: int, validation: dict, tmp: Path
) -> dict:
    """Export the table (`variant` ingested it last) in pieces, then validate it in a child
    process: its peak RSS."""
    export = tmp / "export"  # a directory per table, as the workflow's exports
    export_table(qdb, TABLE, export / TABLE, piece_rows=validation["export_piece_rows"])
    actual = questdb_aggregates(qdb, TABLE)
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    child = ctx.Process(target=_validate_child, args=(str(path), str(export), actual, variant,
                        rows, validation["memory_limit"], str(tmp / "spill"), out))  # fmt: skip
    child.start()
    with PeakRss(root_pid=child.pid, interval_s=0.05) as rss:
        child.join()
    passed = out.get(timeout=10) if child.exitcode == 0 else False
    return {"rows": rows, "variant": "validation", "mode": f"duckdb {validation['memory_limit']}",
            "client_rss_mib": round(rss.client / MIB, 1), "passed": passed}  # fmt: skip


def streamed_over_whole_file(results: list[dict]) -> dict[tuple[int, str], list[float]]:
    """Per (rows, streamed variant): its rate over the whole-file rate, one ratio per round."""
    rates = {(r["rows"], r["round"], r["variant"]): r["rows_per_s"]
             for r in results if "round" in r}  # fmt: skip
    ratios: dict[tuple[int, str], list[float]] = {}
    for (rows, round_, name), rate in rates.items():
        whole = rates.get((rows, round_, f"{name}-call"))
        if whole:
            ratios.setdefault((rows, name), []).append(rate / whole)
    return ratios


def print_table(results: list[dict]) -> None:
    widths = {c: max(len(c), *(len(str(r.get(c, ""))) for r in results)) for c in COLUMNS}
    print("  ".join(c.ljust(widths[c]) for c in COLUMNS))
    for r in results:
        print("  ".join(str(r.get(c, "")).ljust(widths[c]) for c in COLUMNS))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[1_000_000, 10_000_000, 100_000_000])
    parser.add_argument("--scale", type=int, default=4000, help="hosts (default: 4000)")
    parser.add_argument("--variants", nargs="+", default=DEFAULT_VARIANTS)
    parser.add_argument("--whole-file-max-rows", type=int, default=10_000_000,
                        help="largest size also run whole-file (-call); default 10M")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=1,
                        help="rounds of every variant per size (default 1)")  # fmt: skip
    parser.add_argument("--config", type=Path, default=REPO / "config.yaml",
                        help="the workflow config whose server and settings to use")  # fmt: skip
    parser.add_argument("--data-dir", type=Path, default=REPO / "results" / "data")
    fallback = REPO / "results" / "bench" / "scale.csv"
    parser.add_argument("--out", type=Path, default=findings_file("scale.csv", fallback))
    args = parser.parse_args()

    config = load_config(args.config)
    version = config["ilp_protocol_version"]
    results: list[dict] = []
    args.out.parent.mkdir(parents=True, exist_ok=True)
    try:
        with questdb_server(QuestDBSettings.from_config(config)) as qdb:
            for size in args.sizes:
                params, path = dataset(size, args.scale, args.data_dir)
                names = list(args.variants)
                if params.rows <= args.whole_file_max_rows:
                    names += [f"{n}-call" for n in args.variants]
                if size == args.sizes[0]:  # one server for every size: warm it up once
                    warm_up_server(qdb, path, names, params.rows, version, config["warmup_rows"])
                last = None  # the variant whose table is validated: the last one measured
                for round_ in range(1, args.rounds + 1):
                    for name in names if round_ % 2 else names[::-1]:
                        print(f"{params.rows:,} rows: {name} (round {round_})", flush=True)
                        row = measure_apart(qdb, path, name, params.rows, version)
                        if row:
                            results.append({"round": round_, **row})
                            last = parse_variant_name(name).to_dict()
                if last is None:
                    continue
                with tempfile.TemporaryDirectory(dir=args.out.parent) as tmp:
                    print(f"{params.rows:,} rows: validation", flush=True)
                    results.append(measure_validation(qdb, path, last, params.rows,
                                                      config["validation"], Path(tmp)))  # fmt: skip
    except UserError as exc:
        raise SystemExit(f"ERROR: {exc}") from None
    print()
    print_table(results)
    for (rows, name), ratios in streamed_over_whole_file(results).items():
        rounds = ", ".join(f"{r:.2f}" for r in ratios)
        print(f"{rows:,} rows, {name}: streamed / whole-file = {statistics.median(ratios):.2f}x "
              f"median (rounds: {rounds})")  # fmt: skip
    with atomic_path(args.out) as tmp_out, open(tmp_out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, COLUMNS)
        writer.writeheader()
        writer.writerows(results)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
