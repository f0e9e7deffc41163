"""The ILP encoder against an earlier commit's on the same chunks: CPU per 1M rows, same bytes.

On TSBS cpu chunks of each field type (pandas and polars frames) and on bench_strings'
string-heavy table, both encoders encode the same record batches into the pieces the
`vectorized` path sends over TCP; their bytes must be equal, then each encodes them `--rounds`
times in turn and its best round counts. The earlier encoder (encoder.py and the ilp_*.py modules
it imports, at `--before`) is taken out of git into a temporary package of its own, so both run
side by side without a second checkout.

    .venv/bin/python benchmarks/bench_encoder_ab.py --before 827cbed   # or: make bench-encoder-ab
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from _bench import REPO, bench_parser
from bench_strings import SYMBOLS, strings_table

from ingestbench.ingest.frames.encoder import IlpEncoder, as_record_batch
from ingestbench.ingest.frames.readers import iter_frames
from ingestbench.ingest.methods.vectorized import pieces
from ingestbench.tsbs import DatasetParams, generate
from ingestbench.tsbs.columns import FIELDS, TAGS, TIMESTAMP
from ingestbench.variants import READ_CHUNK_ROWS

FRAMES = "src/ingestbench/ingest/frames"
PACKAGE = "encoder_before"  # the earlier encoder's modules, importable beside today's
#: The strings table's columns: its symbols, the rest as fields, and its timestamp.
STRINGS_AT = "ts"


def earlier_encoder(rev: str, into: Path) -> type:
    """The IlpEncoder class of commit `rev`, its ilp_* modules imported from the same commit."""
    names = subprocess.run(["git", "-C", str(REPO), "ls-tree", "--name-only", f"{rev}:{FRAMES}"],
                           check=True, capture_output=True, text=True).stdout.split()  # fmt: skip
    package = into / PACKAGE
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name in (n for n in names if n == "encoder.py" or re.fullmatch(r"ilp_\w+\.py", n)):
        text = subprocess.run(["git", "-C", str(REPO), "show", f"{rev}:{FRAMES}/{name}"],
                              check=True, capture_output=True, text=True).stdout  # fmt: skip
        (package / name).write_text(
            text.replace("ingestbench.ingest.frames.ilp_", f"{PACKAGE}.ilp_")
        )
    sys.path.insert(0, str(into))
    return importlib.import_module(f"{PACKAGE}.encoder").IlpEncoder


def encode(cls: type, batches: list, layout: Sequence, keep: bool) -> list:
    encoder, out = cls("cpu", *layout), []
    for batch in batches:
        for piece in pieces(batch, "tcp"):
            data = encoder.encode(piece)
            out.append(data.to_pybytes() if keep else data.size)
    return out


def compare(label: str, before: type, batches: list, layout: Sequence, rounds: int) -> None:
    if encode(before, batches, layout, True) != encode(IlpEncoder, batches, layout, True):
        sys.exit(f"{label}: the two encoders wrote different bytes; compare them before timing.")
    best = {"before": float("inf"), "after": float("inf")}
    for _ in range(rounds):  # in turn: drift on the machine falls on both alike
        for name, cls in (("before", before), ("after", IlpEncoder)):
            t0 = time.process_time()
            encode(cls, batches, layout, False)
            best[name] = min(best[name], time.process_time() - t0)
    per_1m = 1e6 / sum(b.num_rows for b in batches)
    b, a = best["before"] * per_1m, best["after"] * per_1m
    print(f"{label:<15} encode CPU-s/1M rows, best of {rounds}: before {b:.3f}  after {a:.3f}  "
          f"ratio {a / b:.2f}  (same bytes)")  # fmt: skip


def main() -> None:
    p = bench_parser(__doc__)
    p.add_argument("--before", default="827cbed", help="the earlier commit (default: 827cbed)")
    p.add_argument("--strings-rows", type=int, default=1_000_000, help="(default: 1M)")
    p.add_argument("--rounds", type=int, default=7, help="(default: 7)")
    p.add_argument("--field-types", nargs="+", choices=("double", "long"),
                   default=["double", "long"], help="TSBS's (default: both)")  # fmt: skip
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="ingestbench-ab-") as tmp:
        before = earlier_encoder(a.before, Path(tmp))
        print(f"the encoder of {a.before} (before) against this checkout's (after)\n")
        for field_type in a.field_types:
            params = DatasetParams(scale=a.scale, epochs=a.epochs, seed=42, field_type=field_type)
            data = Path(tmp) / field_type
            generate(params, data, formats=("parquet",), progress=False)
            path = data / f"{params.name}.parquet"
            for library in ("pandas", "polars"):
                frames = iter_frames(path, library, "parquet", READ_CHUNK_ROWS, params.rows)
                batches = [as_record_batch(f) for f in frames]
                compare(f"{field_type} {library}", before, batches, (TAGS, FIELDS, TIMESTAMP),
                        a.rounds)  # fmt: skip
        table = strings_table(a.strings_rows)
        fields = [c for c in table.column_names if c not in (*SYMBOLS, STRINGS_AT)]
        compare("strings", before, table.to_batches(READ_CHUNK_ROWS), (SYMBOLS, fields, STRINGS_AT),
                a.rounds)  # fmt: skip


if __name__ == "__main__":
    main()
