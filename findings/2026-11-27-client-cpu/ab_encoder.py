"""Same-process A/B: the encoder before (df84674) and after, on TSBS cpu chunks (1M rows).

The old encoder and kernel are copied out of git into a package of their own first:

    mkdir -p /tmp/old/oldenc && touch /tmp/old/oldenc/__init__.py
    git show df84674:src/ingestbench/ingest/frames/encoder.py \\
        | sed 's/ingestbench.ingest.frames.ilp_kernel/oldenc.ilp_kernel/' \\
        > /tmp/old/oldenc/encoder.py
    git show df84674:src/ingestbench/ingest/frames/ilp_kernel.py > /tmp/old/oldenc/ilp_kernel.py
    OLD=/tmp/old .venv/bin/python findings/2026-11-27-client-cpu/ab_encoder.py
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
from oldenc.encoder import IlpEncoder as Old  # noqa: E402


def encode(cls, batches: list, keep: bool) -> list:
    encoder, out = cls("cpu", TAGS, FIELDS, TIMESTAMP), []
    for batch in batches:
        for piece in pieces(batch, "tcp"):
            data = encoder.encode(piece)
            out.append(data.to_pybytes() if keep else data.size)
    return out


def main() -> None:
    for field_type in ("double", "long"):
        tmp = tempfile.mkdtemp()
        params = DatasetParams(scale=4000, epochs=250, seed=42, field_type=field_type)
        generate(params, tmp, formats=("parquet",), progress=False)
        path = Path(tmp) / f"{params.name}.parquet"
        for library in ("pandas", "polars"):
            frames = iter_frames(path, library, "parquet", READ_CHUNK_ROWS, params.rows)
            batches = [as_record_batch(f) for f in frames]
            assert encode(Old, batches, True) == encode(New, batches, True), "bytes differ"
            best = {"before": 9.0, "after": 9.0}
            for _ in range(7):
                for name, cls in (("before", Old), ("after", New)):
                    t0 = time.process_time()
                    encode(cls, batches, False)
                    best[name] = min(best[name], time.process_time() - t0)
            before, after = best["before"], best["after"]
            print(
                f"{field_type:<7}{library:<8} encode CPU-s/1M rows, best of 7: before "
                f"{before:.3f}  after {after:.3f}  ratio {after / before:.2f}  (same bytes)"
            )


if __name__ == "__main__":
    main()
