"""`vectorized` on a string-heavy table: client CPU against `dataframe()`, rows/s of every path.

A generated table that is not TSBS (--rows, 1M by default): five string columns of low and
high cardinality (two declared `symbols`: `region`, 8 values, and `device`, about 100k; three
VARCHAR: `level`, 4 values, `user`, 5,000 with spaces, `path`, about 100k with quotes and
commas), nullable integers (int64, int32), a float64 with nulls, a boolean, and a timestamp with
a few rows out of order (0.1 % moved back by up to a minute). Written as Parquet and loaded as
your own data is (ingestbench.own), so every path gets the chunks the workflow's reader makes.

1. The encoder alone, in this process, no server: CPU-s per 1M rows of the questdb client's
   `Buffer.dataframe()` on the same chunks (as pandas) and of the `vectorized` encoder in its
   TCP pieces: on the chunks as the reader hands them on (`device` barely repeats within a
   chunk, so it stays strings and is written row by row), with every symbol a dictionary (the
   reader's choice before: `device` row by row from its dictionary, or through tag-set
   prefixes as for TSBS, the prefix cache, which past its limit starts over), and with
   `device` as a VARCHAR instead of a symbol. Best of --repeats. Then the steps before it,
   which every path or library takes, on both kinds of chunk: reading the Parquet, the
   symbols (the reader's dictionaries), the frames of each library and back to Arrow.
2. End to end, as the workflow runs them, on both transports: every client path of the
   workflow but the row loops (`dataframe`, `batches`, `threads` w2, `processes` w2,
   `vectorized` w2; pandas, and polars' `dataframe` and `vectorized`), against one fresh
   QuestDB, each warmed up, --repeats interleaved rounds, each repeat checked against its
   source as the workflow checks it. Medians of rows/s and client CPU-s per 1M rows; the last
   column is the client CPU over that of `dataframe()` of the same library and transport.
   Last, each library's `vectorized` floor: its steps of part 1 before a byte is sent (read,
   symbols, frame, to Arrow, encoder) over the CPU its `dataframe()` spent end to end, a
   ratio `vectorized` cannot go below while both read the same frames.
3. The encoder's ceiling, end to end: each `vectorized` variant again with its encoder
   replayed, every piece's ILP taken from a first, untimed run of the real encoder (the
   same bytes, so the repeats are validated as any other). Everything else is as measured:
   the read, the frame, the conversion, the threads and the send. Its CPU against
   `dataframe()`'s is what `vectorized` would spend with an encoder that cost nothing at all.

    .venv/bin/python benchmarks/bench_strings.py   # or: make bench-strings
    .venv/bin/python benchmarks/bench_strings.py --only   # part 1 alone (a minute, no server)
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from _bench import checked, dataset_and_server, warm_up_each, write_findings_csv

from ingestbench.columnar import arrow as arrow_module
from ingestbench.columnar.arrow import rechunk, to_pandas
from ingestbench.ingest.frames import encoder as encoder_module
from ingestbench.ingest.frames.encoder import IlpEncoder, as_record_batch
from ingestbench.ingest.methods import Job
from ingestbench.ingest.methods import vectorized as vectorized_module
from ingestbench.ingest.methods.base import cpu_seconds
from ingestbench.ingest.methods.vectorized import pieces
from ingestbench.ingest.parts import job_parts
from ingestbench.ingest.runner import run_repeat
from ingestbench.own.dataset import OwnDataset
from ingestbench.own.manifest import write_own_manifest
from ingestbench.own.read import as_library, conform, iter_tables, raw_batches
from ingestbench.own.spec import OwnTableSpec
from ingestbench.variants import READ_CHUNK_ROWS, parse_variant_name

SYMBOLS = ["region", "device"]
#: The client paths end to end, per transport (the row loops would take minutes per repeat).
PATHS = ("pandas-dataframe-parquet-{t}", "polars-dataframe-parquet-{t}",
         "pandas-batches-parquet-{t}-b50000", "pandas-threads-parquet-{t}-w2",
         "pandas-processes-parquet-{t}-w2", "pandas-vectorized-parquet-{t}-w2",
         "polars-vectorized-parquet-{t}-w2")  # fmt: skip
START_US = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z


def strings_table(rows: int, seed: int = 5) -> pa.Table:
    rng = np.random.default_rng(seed)

    def pick(pool: list[str], n: int, zipf: bool = False) -> pa.Array:
        at = (rng.zipf(1.2, n) - 1) % len(pool) if zipf else rng.integers(0, len(pool), n)
        return pa.array(pool, pa.string()).take(pa.array(at))

    def nullable(values: np.ndarray, share: float, type_: pa.DataType) -> pa.Array:
        return pa.array(values, type_, mask=rng.random(rows) < share)

    ts = START_US + np.arange(rows, dtype=np.int64) * 1_000  # a row a millisecond
    late = rng.random(rows) < 0.001
    ts[late] -= rng.integers(1, 60_000_000, int(late.sum()))
    regions = ["eu-west-1", "eu-central-1", "us-east-1", "us-west-2", "ap-south-1",
               "ap-northeast-1", "sa-east-1", "af-south-1"]  # fmt: skip
    return pa.table({
        "ts": pa.array(ts, pa.timestamp("us", tz="UTC")),
        "region": pick(regions, rows),
        "device": pick([f"dev-{i:06d}" for i in range(100_000)], rows),
        "level": pick(["debug", "info", "warn", "error"], rows, zipf=True),
        "user": pick([f"user {i}" for i in range(5_000)], rows, zipf=True),
        "path": pick([f'/api/v1/items/{i}?q="{i % 97}",x' for i in range(100_000)], rows),
        "bytes": nullable(rng.integers(0, 10**9, rows), 0.05, pa.int64()),
        "status": nullable(rng.choice([200, 201, 304, 404, 500], rows).astype(np.int32), 0.1,
                           pa.int32()),
        "latency": nullable(rng.lognormal(3, 1, rows), 0.02, pa.float64()),
        "cached": pa.array(rng.random(rows) < 0.3),
    })  # fmt: skip


@contextlib.contextmanager
def dictionaries_kept() -> Iterator[None]:
    """The reader's choice before it kept the symbols that barely repeat as strings: every
    symbol a dictionary."""
    share, arrow_module.SPARSE_SHARE = arrow_module.SPARSE_SHARE, float("inf")
    try:
        yield
    finally:
        arrow_module.SPARSE_SHARE = share


def encoder_cpu(spec: OwnTableSpec, rows: int, repeats: int) -> list[tuple[str, float]]:
    """(case, CPU-s per 1M rows, best of `repeats`) of serializing the table's chunks: as the
    reader hands them on (`device` barely repeats: strings) and with every symbol a
    dictionary."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from questdb.ingress import Buffer
    tables = list(iter_tables(spec, READ_CHUNK_ROWS, rows))
    with dictionaries_kept():
        dictionaries = list(iter_tables(spec, READ_CHUNK_ROWS, rows))
    frames = {"as read": [to_pandas(as_library(t, "pandas")) for t in tables],
              "dict": [to_pandas(as_library(t, "pandas")) for t in dictionaries]}  # fmt: skip
    batches = {"as read": [as_record_batch(t) for t in tables],
               "dict": [as_record_batch(t) for t in dictionaries]}  # fmt: skip

    def client(kind: str) -> None:
        buf = Buffer(protocol_version=2)
        for frame in frames[kind]:
            buf.clear()
            buf.dataframe(frame, table_name=spec.table, symbols=list(spec.tags), at=spec.timestamp)

    def encode(kind: str, symbols: list[str], fields: list[str]) -> None:
        encoder = IlpEncoder(spec.table, symbols, fields, spec.timestamp)
        for batch in batches[kind]:
            for piece in pieces(batch, "tcp"):
                encoder.encode(piece)

    def prefixes_only() -> None:  # tags that barely repeat through tag-set prefixes as well
        share, encoder_module.SPARSE_SHARE = encoder_module.SPARSE_SHARE, float("inf")
        try:
            encode("dict", list(spec.tags), list(spec.fields))
        finally:
            encoder_module.SPARSE_SHARE = share

    tags, fields = list(spec.tags), list(spec.fields)
    cases = {
        "client Buffer.dataframe()": lambda: client("as read"),
        "client, device a category": lambda: client("dict"),
        "vectorized (device strings, row by row)": lambda: encode("as read", tags, fields),
        "vectorized (device a dictionary, row by row)": lambda: encode("dict", tags, fields),
        "vectorized (device via prefixes)": prefixes_only,
        "vectorized (device a VARCHAR)": lambda: encode("as read", ["region"], ["device", *fields]),
    }
    for run in cases.values():  # numba compiles (or loads) each layout once, untimed
        run()
    best: dict[str, float] = {}
    for _ in range(repeats):
        for name, run in cases.items():
            c0 = cpu_seconds()
            run()
            cpu = (cpu_seconds() - c0) * 1e6 / rows
            best[name] = min(best.get(name, cpu), cpu)
    return list(best.items())


#: The steps of part 1 that make up each library's `vectorized` floor: what it spends before a
#: byte is sent, `dataframe()` paying the same reading and frame.
FLOOR = {
    "pandas": ("read Parquet (pyarrow)", "symbols (reader)", "Arrow → pandas",
               "pandas → Arrow (vectorized)"),
    "polars": ("read Parquet (pyarrow)", "symbols (reader)", "Arrow → polars",
               "polars → Arrow (vectorized)"),
}  # fmt: skip
ENCODER = "vectorized (device strings, row by row)"


def reader_cpu(spec: OwnTableSpec, rows: int, repeats: int) -> dict[str, tuple[float, float]]:
    """{step: (CPU-s per 1M rows as the reader hands the chunks on, with every symbol a
    dictionary)}, best of `repeats`: the steps every path shares or takes before serializing,
    where the client's CPU goes besides the encoder."""
    steps: dict[str, list[float]] = {}

    def timed(name: str, step, items: list, column: int = 0) -> list:
        c0 = cpu_seconds()
        out = [step(item) for item in items]
        cpu = (cpu_seconds() - c0) * 1e6 / rows
        best = steps.setdefault(name, [float("inf")] * 2)
        best[column] = min(best[column], cpu)
        return out

    for _ in range(repeats):
        raw = timed("read Parquet (pyarrow)",
                    lambda _: list(rechunk(raw_batches(spec, READ_CHUNK_ROWS), READ_CHUNK_ROWS,
                                           rows)), [None])[0]  # fmt: skip
        steps["read Parquet (pyarrow)"][1] = steps["read Parquet (pyarrow)"][0]
        as_read = timed("symbols (reader)", lambda t: conform(t, spec), raw)
        with dictionaries_kept():
            dicts = timed("symbols (reader)", lambda t: conform(t, spec), raw, 1)
        for column, tables in enumerate((as_read, dicts)):
            pd_frames = timed("Arrow → pandas", lambda t: as_library(t, "pandas"), tables, column)
            pl_frames = timed("Arrow → polars", lambda t: as_library(t, "polars"), tables, column)
            timed("pandas → Arrow (vectorized)", as_record_batch, pd_frames, column)
            timed("polars → Arrow (vectorized)", as_record_batch, pl_frames, column)
            timed("polars → pandas (dataframe)", to_pandas, pl_frames, column)
    return {name: (best[0], best[1]) for name, best in steps.items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=1_000_000, help="(default: 1M)")
    p.add_argument("--repeats", type=int, default=3, help="(default: 3)")
    p.add_argument("--transports", nargs="+", default=["tcp", "http"])
    p.add_argument(
        "--only",
        nargs="*",
        help="variants to run end to end instead of every client path; none (a bare --only) "
        "runs part 1 alone, with no server",
    )
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="ingestbench-strings-") as tmp:
        path = Path(tmp) / "strings.parquet"
        pq.write_table(strings_table(a.rows), path, row_group_size=100_000)
        entry = {"label": "strings", "path": str(path), "timestamp": "ts", "symbols": SYMBOLS}
        manifest = write_own_manifest(OwnDataset.from_config(entry), Path(tmp) / "m.json")
        spec = OwnTableSpec.from_dict(manifest["table"])
        print(f"\n{a.rows:,} rows, {path.stat().st_size / 2**20:.0f} MiB Parquet; symbols "
              f"{', '.join(SYMBOLS)}; chunks of {READ_CHUNK_ROWS:,}\n")  # fmt: skip
        print("Encoder alone (no server), CPU-s per 1M rows, best of", a.repeats)
        encoders = dict(encoder_cpu(spec, a.rows, a.repeats))
        for name, cpu in encoders.items():
            print(f"  {name:<46}{cpu:>8.3f}")
        print(f"The steps before serializing (no server), CPU-s per 1M rows, best of {a.repeats}:"
              f" as the reader hands the chunks on (`device` barely repeats: strings), and with "
              f"every symbol a dictionary")  # fmt: skip
        steps = reader_cpu(spec, a.rows, a.repeats)
        print(f"  {'':<36}{'as read':>10}{'dictionaries':>14}")
        for name, (cpu, dictionary_cpu) in steps.items():
            print(f"  {name:<36}{cpu:>10.3f}{dictionary_cpu:>14.3f}")
        floors = {library: sum(steps[s][0] for s in FLOOR[library]) + encoders[ENCODER]
                  for library in FLOOR}  # fmt: skip
        names = [p.format(t=t) for t in a.transports for p in PATHS] if a.only is None else a.only
        if not names:
            return
        results = end_to_end(names, path, manifest, a.repeats, a.rows)
    report(results, a.rows, a.repeats, floors)


#: The name of a `vectorized` variant run with its encoder replayed (part 3).
REPLAYED = "{name} (encoder replayed)"


class Replayed:
    """Encoders that hand back each piece's ILP as the real one wrote it in a first run:
    while `recording`, each piece is encoded and kept (keyed by its rows and first and last
    times, unique on this table); after, each piece is a lookup. A piece not met before is
    encoded for real and counted in `misses`."""

    def __init__(self) -> None:
        self.kept: dict[tuple, pa.Buffer] = {}
        self.recording, self.misses = True, 0

    def factory(self, table: str, symbols, fields, at: str) -> _Replaying:
        return _Replaying(self, IlpEncoder(table, symbols, fields, at), at)


class _Replaying:
    """One worker's encoder under `Replayed`."""

    def __init__(self, replay: Replayed, real: IlpEncoder, at: str) -> None:
        self.replay, self.real, self.at = replay, real, at

    def encode(self, piece: pa.RecordBatch) -> pa.Buffer:
        times = piece.column(self.at)
        key = (piece.num_rows, times[0].value, times[len(times) - 1].value)
        data = self.replay.kept.get(key)
        if data is None:  # the real encoder reuses its buffer: keep a copy
            data = self.replay.kept[key] = pa.py_buffer(self.real.encode(piece).to_pybytes())
            self.replay.misses += not self.replay.recording
        return data


def end_to_end(names: list[str], path: Path, manifest: dict, repeats: int, rows: int) -> dict:
    with dataset_and_server(1, 1) as (_, _, qdb, config):
        jobs = []
        for name in names:
            variant = parse_variant_name(name)
            parts = job_parts(variant, manifest, path, "strings", None)
            jobs.append(Job(qdb, variant, path, parts, config["ilp_protocol_version"]))
        guards = checked(jobs[0], config)  # one source for every job: its checks made once
        warm_up_each(jobs, config["warmup_rows"])
        replayed = [job for job in jobs if job.variant.method == "vectorized"]
        replay = Replayed()
        with _encoder(replay.factory):
            for job in replayed:  # the real encoder's bytes, kept: an untimed, checked run
                run_repeat(job, 0, guards=guards)
        replay.recording = False
        results: dict[str, list] = {job.variant.name: [] for job in jobs}
        results |= {REPLAYED.format(name=job.variant.name): [] for job in replayed}
        for i in range(repeats):  # round-robin: drift on the machine hits every path alike
            for job in jobs:
                results[job.variant.name].append(run_repeat(job, i, guards=guards))
            with _encoder(replay.factory):
                for job in replayed:
                    name = REPLAYED.format(name=job.variant.name)
                    results[name].append(run_repeat(job, i, guards=guards))
        if replay.misses:
            print(f"(the replayed encoder met {replay.misses} piece(s) it had not kept)")
    return results


@contextlib.contextmanager
def _encoder(factory) -> Iterator[None]:
    """`vectorized`'s workers make their encoders with `factory` meanwhile."""
    saved, vectorized_module.IlpEncoder = vectorized_module.IlpEncoder, factory
    try:
        yield
    finally:
        vectorized_module.IlpEncoder = saved


def report(results: dict, rows: int, repeats: int, floors: dict[str, float]) -> None:
    per_1m = 1e6 / rows
    stats = {}
    for name, runs in results.items():
        stats[name] = (statistics.median(rows / r["end_to_end"] for r in runs),
                       statistics.median(r["client_cpu_s"] for r in runs) * per_1m,
                       min(rows / r["end_to_end"] for r in runs),
                       max(rows / r["end_to_end"] for r in runs))  # fmt: skip
    print(f"\nEnd to end: medians of {repeats} interleaved repeats, each checked against its "
          f"source\n")  # fmt: skip
    print(f"{'variant':<58}{'rows/s':>10}{'(min-max)':>20}{'client CPU-s/1M':>17}"
          f"{'CPU vs dataframe':>18}")  # fmt: skip
    out = []
    for name, (rate, cpu, lo, hi) in stats.items():
        v = parse_variant_name(name.split(" ")[0])
        base = stats.get(f"{v.library}-dataframe-parquet-{v.transport}")
        ratio = cpu / base[1] if base else float("nan")
        print(f"{name:<58}{rate:>10,.0f}{f'({lo:,.0f}-{hi:,.0f})':>20}{cpu:>17.3f}{ratio:>18.2f}")
        out.append({"variant": name, "rows_per_s": round(rate), "rows_per_s_min": round(lo),
                    "rows_per_s_max": round(hi), "client_cpu_s_per_1m": round(cpu, 3),
                    "cpu_vs_dataframe": round(ratio, 3)})  # fmt: skip
    # The ratio `vectorized` cannot go below while it reads the same frames as `dataframe()`:
    # its CPU before a byte is sent (part 1) over what `dataframe()` spent end to end.
    for library, floor in floors.items():
        shares = [f"{floor / stats[name][1]:.2f} of `{name}`"
                  for name in stats if name.startswith(f"{library}-dataframe-")]  # fmt: skip
        if shares:
            print(f"{library} `vectorized` floor (read + symbols + frame + → Arrow + encoder, no "
                  f"send): {floor:.3f} CPU-s per 1M rows = {', '.join(shares)}")  # fmt: skip
    write_findings_csv("end_to_end.csv", out)


if __name__ == "__main__":
    main()
