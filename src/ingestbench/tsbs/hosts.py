"""The simulated hosts: tags drawn once per host, one clamped random walk per field and host, the
rows epoch by epoch in chunks, and the optional shuffle within a lag window (see the package
docstring for the order of the random draws)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ingestbench.tsbs.columns import FIELDS, TAGS
from ingestbench.tsbs.params import DatasetParams

#: Region -> its datacenters (TSBS's devops/common.go).
REGIONS: dict[str, tuple[str, ...]] = {
    "us-east-1": ("us-east-1a", "us-east-1b", "us-east-1c", "us-east-1e"),
    "us-west-1": ("us-west-1a", "us-west-1b"),
    "us-west-2": ("us-west-2a", "us-west-2b", "us-west-2c"),
    "eu-west-1": ("eu-west-1a", "eu-west-1b", "eu-west-1c"),
    "eu-central-1": ("eu-central-1a", "eu-central-1b"),
    "ap-southeast-1": ("ap-southeast-1a", "ap-southeast-1b"),
    "ap-southeast-2": ("ap-southeast-2a", "ap-southeast-2b"),
    "ap-northeast-1": ("ap-northeast-1a", "ap-northeast-1c"),
    "sa-east-1": ("sa-east-1a", "sa-east-1b", "sa-east-1c"),
}
#: The value set of every tag but hostname, in the order indices refer to.
TAG_VALUES: dict[str, tuple[str, ...]] = {
    "region": tuple(REGIONS),
    "datacenter": tuple(dc for dcs in REGIONS.values() for dc in dcs),
    "rack": tuple(str(i) for i in range(100)),
    "os": ("Ubuntu16.10", "Ubuntu16.04LTS", "Ubuntu15.10"),
    "arch": ("x64", "x86"),
    "team": ("SF", "NYC", "LON", "CHI"),
    "service": tuple(str(i) for i in range(20)),
    "service_version": ("0", "1"),
    "service_environment": ("production", "staging", "test"),
}
#: Rows the generator makes at a time, one Parquet row group each (whole epochs, at least one);
#: not the client readers' chunk (variants.READ_CHUNK_ROWS, the variant key chunk_rows).
ROW_GROUP_ROWS = 1_000_000


@dataclass
class Chunk:
    """Rows of one chunk, column-major. The arrays may be views into reused buffers."""

    tags: np.ndarray  # (10, n) int32 indices into each tag's dictionary
    fields: np.ndarray  # (10, n) float64 or int64
    ts: np.ndarray  # (n,) int64 nanoseconds since the epoch, UTC
    next_ts: int | None  # first timestamp of the next chunk (None: last chunk)

    @property
    def n(self) -> int:
        return self.ts.shape[0]


def _draw_tags(rng: np.random.Generator, scale: int) -> np.ndarray:
    """(9, scale) int32 indices for every tag but hostname, in TAGS order."""
    out = np.empty((len(TAGS) - 1, scale), dtype=np.int32)
    dc_counts = np.array([len(v) for v in REGIONS.values()])
    dc_offsets = np.concatenate([[0], np.cumsum(dc_counts)[:-1]])
    for i, tag in enumerate(TAGS[1:]):
        if tag == "datacenter":
            region = out[0]
            out[i] = dc_offsets[region] + rng.integers(0, dc_counts[region])
        else:
            out[i] = rng.integers(0, len(TAG_VALUES[tag]), size=scale)
    return out


def iter_rows(params: DatasetParams, row_group_rows: int, progress=None) -> Iterator[Chunk]:
    """In-order chunks of whole epochs. Yielded arrays are reused: consume before the next."""
    scale, epochs = params.scale, params.epochs
    rng = np.random.default_rng(params.seed)
    host_tags = _draw_tags(rng, scale)
    state = rng.random((len(FIELDS), scale)) * 100.0

    k_max = max(1, min(epochs, row_group_rows // scale))
    n_max = k_max * scale
    tags = np.empty((len(TAGS), n_max), dtype=np.int32)
    tags[0] = np.tile(np.arange(scale, dtype=np.int32), k_max)
    for i in range(1, len(TAGS)):
        tags[i] = np.tile(host_tags[i - 1], k_max)
    values = np.empty((len(FIELDS), k_max, scale), dtype=np.float64)
    as_long = params.field_type == "long"
    longs = np.empty((len(FIELDS), n_max), dtype=np.int64) if as_long else None
    step = np.empty((len(FIELDS), scale), dtype=np.float64)
    offsets = np.repeat(np.arange(k_max, dtype=np.int64) * params.interval_ns, scale)
    ts = np.empty(n_max, dtype=np.int64)

    prev = state
    for e0 in range(0, epochs, k_max):
        k = min(k_max, epochs - e0)
        n = k * scale
        for j in range(k):
            cur = values[:, j, :]
            if e0 + j == 0:
                cur[...] = state
            else:
                rng.standard_normal(out=step)
                np.add(prev, step, out=cur)
                np.clip(cur, 0.0, 100.0, out=cur)
            prev = cur
        np.copyto(state, prev)  # the buffer is overwritten by the next chunk
        prev = state
        fields = values[:, :k, :].reshape(len(FIELDS), n)
        if longs is not None:
            np.copyto(longs[:, :n], fields, casting="unsafe")  # truncation, like Go's int64()
            fields = longs[:, :n]
        np.add(offsets[:n], params.start_ns + e0 * params.interval_ns, out=ts[:n])
        e1 = e0 + k
        next_ts = params.start_ns + e1 * params.interval_ns if e1 < epochs else None
        yield Chunk(tags[:, :n], fields, ts[:n], next_ts)
        if progress is not None:
            progress(k)


def shuffle_within_lag(chunks: Iterator[Chunk], lag_ns: int, seed: int) -> Iterator[Chunk]:
    """Stable sort by ``timestamp + U{0..lag_ns-1}``, chunk-wise with a carry (module docstring)."""
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    carry: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
    for chunk in chunks:
        keys = chunk.ts + rng.integers(0, lag_ns, size=chunk.n, dtype=np.int64)
        tags, fields, ts = chunk.tags, chunk.fields, chunk.ts
        if carry is not None:
            tags = np.concatenate([carry[0], tags], axis=1)
            fields = np.concatenate([carry[1], fields], axis=1)
            ts = np.concatenate([carry[2], ts])
            keys = np.concatenate([carry[3], keys])
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        done = keys.size if chunk.next_ts is None else int(np.searchsorted(keys, chunk.next_ts))
        head, tail = order[:done], order[done:]
        carry = (tags[:, tail], fields[:, tail], ts[tail], keys[done:])
        if done:
            yield Chunk(tags[:, head], fields[:, head], ts[head], chunk.next_ts)
