"""Where the client's CPU goes per 1M rows: reading the chunks, and the ILP client serializing.

The workflow's own streamed path, in one process and without a server: the dataset's Parquet is
read chunk by chunk (`iter_frames`, the default `chunk_rows`) and converted into the frame
the client takes, then each chunk is serialized into one reused buffer by the questdb client's
`dataframe()` as the workflow calls it (the configured ILP protocol version). Serializing is
also timed for the 10 tag columns alone and the 10 fields alone (each with the timestamp), so
the share of symbols and of doubles shows. The `vectorized` method's steps follow: the chunks as
Arrow record batches, and its column-by-column encoder (ingestbench.ingest.frames.encoder, in
the pieces it sends over TCP), which writes the same bytes. CPU is this process's user + system
time, the best of --repeats; sending (the kernel's TCP stack) is not included: the `ilp_file`
variant's client CPU is that floor. Both field types run (TSBS's own integers with
`--field-types long`), each on its own generated dataset.

Then the same paths end to end, as the workflow runs them (from the Parquet file to every row
visible, against a fresh QuestDB, warmed up, interleaved round-robin with the `ilp_file` wire
ceiling of the same dataset): median rows/s, the ratio to the ceiling, and the client's and the
server's CPU-seconds per 1M rows (the client's processes only, as the run files record them).

    .venv/bin/python benchmarks/bench_client_cpu.py          # or: make bench-client-cpu
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

from _bench import (
    REPO,
    TABLE,
    bench_parser,
    dataset_and_server,
    interleaved,
    medians,
    write_findings_csv,
)

from ingestbench.columnar.arrow import to_pandas
from ingestbench.config import load_config
from ingestbench.ingest.frames.readers import import_libraries, iter_frames
from ingestbench.ingest.methods import cpu_job
from ingestbench.ingest.methods.base import cpu_seconds
from ingestbench.tsbs import DatasetParams, generate
from ingestbench.tsbs.columns import FIELDS, TAGS, TIMESTAMP
from ingestbench.variants import READ_CHUNK_ROWS, parse_variant_name

#: The client paths measured end to end, against the wire ceiling (first) of the same run.
END_TO_END = ("none-ilp_file-ilp-tcp-w2", "pandas-vectorized-parquet-tcp-w2",
              "polars-vectorized-parquet-tcp-w2", "pandas-dataframe-parquet-tcp",
              "polars-dataframe-parquet-tcp")  # fmt: skip


def read_chunks(path: Path, library: str, chunk_rows: int, rows: int) -> tuple[list, float]:
    """(the chunks as the client takes them, CPU seconds to read and convert them)."""
    c0 = cpu_seconds()
    chunks = [to_pandas(f) for f in iter_frames(path, library, "parquet", chunk_rows, rows)]
    return chunks, cpu_seconds() - c0


def serialize(chunks: list, columns: list[str], version: int) -> tuple[float, int]:
    """(CPU seconds, bytes) of serializing `columns` of every chunk into one reused buffer."""
    with warnings.catch_warnings():  # the ILP buffer lives on in questdb.ingress only
        warnings.simplefilter("ignore", DeprecationWarning)
        from questdb.ingress import Buffer

    buf, nbytes = Buffer(protocol_version=version), 0
    symbols = [c for c in columns if c in TAGS]
    c0 = cpu_seconds()
    for chunk in chunks:
        buf.clear()
        buf.dataframe(chunk[columns], table_name=TABLE, symbols=symbols, at=TIMESTAMP)
        nbytes += len(buf)
    return cpu_seconds() - c0, nbytes


def vectorized(path: Path, library: str, rows: int) -> tuple[float, float, int]:
    """(CPU seconds to read the chunks as Arrow batches, to encode them, bytes) of the vectorized
    method's steps (polars frames go to Arrow directly), the encoder reused as a worker does."""
    from ingestbench.ingest.frames.encoder import IlpEncoder, as_record_batch
    from ingestbench.ingest.methods.vectorized import pieces

    c0 = cpu_seconds()
    frames = iter_frames(path, library, "parquet", READ_CHUNK_ROWS, rows)
    batches = [as_record_batch(frame) for frame in frames]
    c1 = cpu_seconds()
    encoder, nbytes = IlpEncoder(TABLE, TAGS, FIELDS, TIMESTAMP), 0
    for batch in batches:
        nbytes += sum(encoder.encode(piece).size for piece in pieces(batch, "tcp"))
    return c1 - c0, cpu_seconds() - c1, nbytes


def main() -> None:
    p = bench_parser(__doc__)
    p.add_argument("--repeats", type=int, default=3, help="best of (default: 3)")
    p.add_argument("--e2e-repeats", type=int, default=3,
                   help="interleaved repeats end to end, medians (default: 3)")  # fmt: skip
    p.add_argument("--field-types", nargs="+", choices=("double", "long"),
                   default=["double", "long"], help="default: both")  # fmt: skip
    a = p.parse_args()
    config = load_config(REPO / "config.yaml")
    version, chunk_rows = config["ilp_protocol_version"], READ_CHUNK_ROWS
    import_libraries("polars")
    cases = {
        "serialize, all columns": [*TAGS, *FIELDS, TIMESTAMP],
        "serialize, 10 tags (symbols)": [*TAGS, TIMESTAMP],
        "serialize, 10 fields": [*FIELDS, TIMESTAMP],
    }
    for field_type in a.field_types:
        measure(a, field_type, version, chunk_rows, cases)
    rows = [r for field_type in a.field_types for r in end_to_end(a, field_type)]
    write_findings_csv("end_to_end.csv", rows)


def end_to_end(a, field_type: str) -> list[dict]:
    """The END_TO_END paths through the workflow's own run_repeat, interleaved: one row each."""
    with dataset_and_server(a.scale, a.epochs, ("parquet", "ilp"), field_type) as (
        params, paths, qdb, config,
    ):  # fmt: skip
        jobs = [cpu_job(qdb, TABLE, v, paths[v.format], params.rows, config["ilp_protocol_version"],
                    field_type=params.field_type)
                for v in map(parse_variant_name, END_TO_END)]  # fmt: skip
        results = interleaved(jobs, a.e2e_repeats, config["warmup_rows"])
    ceiling = medians(results[END_TO_END[0]], params.rows)[0]
    print(f"\n{field_type} fields end to end: {params.rows:,} rows, medians of "
          f"{a.e2e_repeats} interleaved repeats after a warm-up\n")  # fmt: skip
    print(f"{'variant':<36}{'rows/s':>10}{'× ceiling':>10}{'client CPU-s/1M':>16}"
          f"{'server CPU-s/1M':>16}")  # fmt: skip
    rows = []
    for name, runs in results.items():
        rate, client, server = medians(runs, params.rows)
        print(f"{name:<36}{rate:>10,.0f}{rate / ceiling:>10.2f}{client:>16.2f}{server:>16.2f}")
        rows.append({"field_type": field_type, "variant": name, "rows_per_s": round(rate),
                     "ceiling_ratio": round(rate / ceiling, 3),
                     "client_cpu_s_per_1m": round(client, 3),
                     "server_cpu_s_per_1m": round(server, 3)})  # fmt: skip
    return rows


def measure(a, field_type: str, version: int, chunk_rows: int, cases: dict) -> None:
    with tempfile.TemporaryDirectory(prefix="ingestbench-bench-") as tmp:
        params = DatasetParams(scale=a.scale, epochs=a.epochs, seed=42, field_type=field_type)
        generate(params, tmp, formats=("parquet",), progress=False)
        path, rows = Path(tmp) / f"{params.name}.parquet", params.rows
        per_1m = 1e6 / rows
        print(f"\n{field_type} fields: {rows:,} rows, chunks of {chunk_rows:,}, ILP protocol "
              f"{version}; CPU-s per 1M rows, best of {a.repeats}\n")  # fmt: skip
        print(f"{'library':<8}{'step':<34}{'CPU-s/1M':>9}{'B/row':>7}")
        for library in ("pandas", "polars"):
            best: dict[str, float] = {}
            sizes: dict[str, int] = {}
            for _ in range(a.repeats):
                chunks, cpu = read_chunks(path, library, chunk_rows, rows)
                best["read + convert"] = min(best.get("read + convert", cpu), cpu)
                for name, columns in cases.items():
                    cpu, sizes[name] = serialize(chunks, columns, version)
                    best[name] = min(best.get(name, cpu), cpu)
                to_arrow, encode, sizes["vectorized: encode, all columns"] = vectorized(
                    path, library, rows
                )
                for name, cpu in (("vectorized: read + → Arrow", to_arrow),
                                  ("vectorized: encode, all columns", encode)):  # fmt: skip
                    best[name] = min(best.get(name, cpu), cpu)
            for name, cpu in best.items():
                size = f"{sizes[name] / rows:.0f}" if name in sizes else ""
                print(f"{library:<8}{name:<34}{cpu * per_1m:>9.2f}{size:>7}")


if __name__ == "__main__":
    main()
