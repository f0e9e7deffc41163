"""Where the client's CPU goes per 1M rows: reading the chunks, and the ILP client serializing.

The workflow's own streamed path, in one process and without a server: the dataset's Parquet is
read chunk by chunk (`iter_frames`, the default `chunk_rows`) and converted into the frame
the client takes, then each chunk is serialized into one reused buffer by the questdb client's
`dataframe()` as the workflow calls it (the configured ILP protocol version). Serializing is
also timed for the 10 tag columns alone and the 10 fields alone (each with the timestamp), so
the share of symbols and of doubles shows. The `vectorized` method's steps follow: the chunks as
Arrow record batches, and its column-by-column encoder (ingestbench.ingest.encoder, in the pieces
it sends over TCP), which writes the same bytes. CPU is this process's user + system time, the
best of --repeats; sending (the kernel's TCP stack) is not included: the `ilp_file` variant's
client CPU is that floor. Both field types run (TSBS's own integers with `--field-types long`),
each on its own generated dataset.

    .venv/bin/python benchmarks/bench_client_cpu.py          # or: make bench-client-cpu
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from _bench import REPO, TABLE, bench_parser

from ingestbench.config import load_config
from ingestbench.ingest.methods.base import cpu_seconds
from ingestbench.ingest.readers import import_libraries, iter_frames, to_pandas
from ingestbench.tsbs import DatasetParams, generate
from ingestbench.tsbs.columns import FIELDS, TAGS, TIMESTAMP
from ingestbench.variants import READ_CHUNK_ROWS


def read_chunks(path: Path, library: str, chunk_rows: int, rows: int) -> tuple[list, float]:
    """(the chunks as the client takes them, CPU seconds to read and convert them)."""
    c0 = cpu_seconds()
    chunks = [to_pandas(f) for f in iter_frames(path, library, "parquet", chunk_rows, rows)]
    return chunks, cpu_seconds() - c0


def serialize(chunks: list, columns: list[str], version: int) -> tuple[float, int]:
    """(CPU seconds, bytes) of serializing `columns` of every chunk into one reused buffer."""
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
    from ingestbench.ingest.encoder import IlpEncoder, as_record_batch
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
