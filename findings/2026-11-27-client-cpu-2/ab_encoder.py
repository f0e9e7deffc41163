"""Same-process A/B: the encoder before (827cbed) and after, on TSBS cpu chunks (1M rows of
each field type, pandas and polars) and on bench_strings' string-heavy table (1M rows).

The old encoder, its fields and its kernel are copied out of git into a package of their own:

    mkdir -p /tmp/old/oldenc && touch /tmp/old/oldenc/__init__.py
    for m in encoder ilp_fields ilp_kernel; do
      git show 827cbed:src/ingestbench/ingest/frames/$m.py \\
        | sed 's/ingestbench.ingest.frames.ilp_/oldenc.ilp_/' > /tmp/old/oldenc/$m.py
    done
    OLD=/tmp/old .venv/bin/python findings/2026-11-27-client-cpu-2/ab_encoder.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from ingestbench.ingest.frames.encoder import IlpEncoder as New
from ingestbench.ingest.frames.encoder import as_record_batch
from ingestbench.ingest.frames.readers import iter_frames
from ingestbench.ingest.methods.vectorized import pieces
from ingestbench.tsbs import DatasetParams, generate
from ingestbench.tsbs.columns import FIELDS, TAGS, TIMESTAMP
from ingestbench.variants import READ_CHUNK_ROWS

sys.path.insert(0, os.environ.get("OLD", "/tmp/old"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_strings import strings_table  # noqa: E402
from oldenc.encoder import IlpEncoder as Old  # noqa: E402

STRINGS = (["region", "device"], ["level", "user", "path", "bytes", "status", "latency", "cached"])


def encode(cls, batches: list, keep: bool, layout=(TAGS, FIELDS, TIMESTAMP)) -> list:
    encoder, out = cls("cpu", *layout), []
    for batch in batches:
        for piece in pieces(batch, "tcp"):
            data = encoder.encode(piece)
            out.append(data.to_pybytes() if keep else data.size)
    return out


def compare(label: str, batches: list, layout=(TAGS, FIELDS, TIMESTAMP)) -> None:
    assert encode(Old, batches, True, layout) == encode(New, batches, True, layout), "differ"
    best = {"before": 9.0, "after": 9.0}
    for _ in range(7):
        for name, cls in (("before", Old), ("after", New)):
            t0 = time.process_time()
            encode(cls, batches, False, layout)
            best[name] = min(best[name], time.process_time() - t0)
    rows = sum(b.num_rows for b in batches) / 1e6
    before, after = best["before"] / rows, best["after"] / rows
    print(
        f"{label:<15} encode CPU-s/1M rows, best of 7: before {before:.3f}  after {after:.3f}  "
        f"ratio {after / before:.2f}  (same bytes)"
    )


def main() -> None:
    for field_type in ("double", "long"):
        tmp = tempfile.mkdtemp()
        params = DatasetParams(scale=4000, epochs=250, seed=42, field_type=field_type)
        generate(params, tmp, formats=("parquet",), progress=False)
        path = Path(tmp) / f"{params.name}.parquet"
        for library in ("pandas", "polars"):
            frames = iter_frames(path, library, "parquet", READ_CHUNK_ROWS, params.rows)
            compare(f"{field_type} {library}", [as_record_batch(f) for f in frames])
    table = strings_table(1_000_000)
    compare("strings", table.to_batches(READ_CHUNK_ROWS), (*STRINGS, "ts"))


if __name__ == "__main__":
    main()
