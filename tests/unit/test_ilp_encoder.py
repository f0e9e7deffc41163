"""The vectorized ILP encoder writes, byte for byte, what the questdb client's `dataframe()`
writes for the same frame (escapes, integers, time units included), and refuses what its fixed
layout cannot carry in one sentence."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from ingestbench.arrow import to_pandas
from ingestbench.ingest.frames.encoder import EncodeError, IlpEncoder, as_record_batch
from ingestbench.ingest.frames.readers import iter_frames
from ingestbench.tsbs.columns import FIELDS, TAGS, TIMESTAMP

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from questdb.ingress import Buffer


def client_bytes(frame: pd.DataFrame, symbols, at=TIMESTAMP, table="cpu") -> bytes:
    buf = Buffer(protocol_version=2)
    buf.dataframe(frame, table_name=table, symbols=list(symbols), at=at)
    return bytes(buf)


def encoded(frame, symbols, fields, at=TIMESTAMP, table="cpu") -> bytes:
    encoder = IlpEncoder(table, symbols, fields, at)
    return encoder.encode(as_record_batch(frame)).to_pybytes()


@pytest.mark.parametrize("library", ["pandas", "polars"])
@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_tsbs_chunks_encode_as_the_client_does(tiny_dataset, library, fmt):
    encoder = IlpEncoder("cpu", TAGS, FIELDS, TIMESTAMP)
    chunks = list(iter_frames(tiny_dataset[fmt], library, fmt, 333, 2000))
    for chunk in chunks:  # one encoder for all: its reused buffers must not leak across chunks
        mine = encoder.encode(as_record_batch(chunk)).to_pybytes()
        assert mine == client_bytes(to_pandas(chunk), TAGS)
    assert sum(len(c) for c in chunks) == 2000


def odd_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "host name": pd.Categorical(["a\\b", "x\ny", 'q"r', "é€ ,="]),
            "plain": ["one", "two words", "one", "k=v"],  # strings, not categorical
            "f=x": [1.5, -0.0, np.nan, np.inf],
            "n": np.array([1, -2, 3, 2**62], dtype="int64"),
            "small": np.array([7, 8, 9, 10], dtype="int16"),
            "g": np.array([0.25, 1e30, -1e-30, 3.0], dtype="float32"),
            TIMESTAMP: pd.to_datetime(
                [1451606400000000000, 1451606400000000000, 1451606410000000000, 17], utc=True
            ),
        }
    )


def test_escapes_integers_and_timestamps_of_any_width_match_the_client():
    frame = odd_frame()  # the last timestamp has 2 digits: the text path, not the fixed one
    symbols, fields = ["host name", "plain"], ["f=x", "n", "small", "g"]
    assert encoded(frame, symbols, fields) == client_bytes(frame, symbols)


def test_microsecond_timestamps_are_sent_in_microseconds_like_the_client():
    symbols, fields = ["host name"], ["f=x", "n"]
    frame = odd_frame().iloc[:3][[*symbols, *fields, TIMESTAMP]]
    frame[TIMESTAMP] = frame[TIMESTAMP].astype("datetime64[us, UTC]")
    mine = encoded(frame, symbols, fields)
    assert mine == client_bytes(frame, symbols)
    assert mine.endswith(b" 1451606410000000t\n")


def test_polars_frames_encode_like_their_pandas_view():
    frame = pl.DataFrame(
        {
            "tag": pl.Series(["a", "b b", "a"], dtype=pl.Categorical),
            "v": [1.0, 2.0, 3.5],
            "i": [1, 2, 3],
            TIMESTAMP: (pl.Series([1, 2, 3]) * 10**15).cast(pl.Datetime("us", "UTC")),
        }
    )
    mine = encoded(frame, ["tag"], ["v", "i"])
    assert mine == client_bytes(frame.to_pandas(), ["tag"])


def test_an_empty_chunk_is_no_bytes():
    frame = odd_frame().iloc[:0]
    assert encoded(frame, ["plain"], ["n"]) == b""


def test_null_symbols_are_left_out_like_the_client():
    frame = odd_frame()[["plain", "n", TIMESTAMP]]
    frame.loc[1, "plain"] = None
    frame["plain"] = frame["plain"].astype("category")
    frame.insert(1, "other", pd.Categorical([None, None, "x", "y"]))
    assert encoded(frame, ["plain", "other"], ["n"]) == client_bytes(frame, ["plain", "other"])
    plain_strings = pa.Table.from_pandas(frame, preserve_index=False).set_column(
        1,
        "other",
        pa.array([None, None, "x", "y"], pa.string()),  # dictionary-encoded here
    )
    mine = IlpEncoder("cpu", ["plain", "other"], ["n"], TIMESTAMP).encode(
        as_record_batch(plain_strings)
    )
    assert mine.to_pybytes() == client_bytes(frame, ["plain", "other"])


def test_a_null_timestamp_is_refused_in_one_sentence():
    frame = odd_frame()
    frame[TIMESTAMP] = frame[TIMESTAMP].where(frame.index != 2)
    with pytest.raises(EncodeError, match=f"column '{TIMESTAMP}' has 1 null") as err:
        encoded(frame, ["plain"], ["n"])
    assert "\n" not in str(err.value)


def test_null_fields_are_left_out_of_their_lines_like_the_client():
    frame = pd.DataFrame(
        {
            "tag": pd.Categorical(["a", "b", "a", "c"]),
            "n": pd.array([1, None, -(2**63) + 1, 2**62], dtype="Int64"),
            "x": pd.array([None, 2.5, None, -0.0], dtype="Float64"),
            "y": [0.1, 1e300, float("nan"), 7.0],
            "m": pd.array([None, None, 5, 6], dtype="Int32"),
            TIMESTAMP: pd.to_datetime(np.arange(4) * 10**9 + 10**18, utc=True),
        }
    )
    fields = ["n", "x", "y", "m"]
    assert encoded(frame, ["tag"], fields) == client_bytes(frame, ["tag"])
    only_nulls = frame.assign(y=pd.array([None, 1.0, 2.0, 3.0], dtype="Float64"))
    with pytest.raises(EncodeError, match="row 0 of the chunk has a null in every field"):
        encoded(only_nulls.assign(n=pd.array([None] * 4, dtype="Int64")), ["tag"], ["n", "y"])


def test_a_field_that_is_not_a_number_is_refused():
    frame = odd_frame()
    with pytest.raises(EncodeError, match="column 'plain' is (large_)?string; "):
        encoded(frame, ["host name"], ["plain"])


def test_a_timestamp_that_is_not_one_is_refused():
    frame = odd_frame()
    with pytest.raises(EncodeError, match="column 'n' is int64, not a timestamp"):
        encoded(frame, ["plain"], ["f=x"], at="n")


def test_a_column_name_ilp_cannot_carry_is_refused():
    with pytest.raises(EncodeError, match="column name 'a,b'"):
        IlpEncoder("cpu", ["a,b"], ["v"], TIMESTAMP)
    with pytest.raises(EncodeError, match="at least one field"):
        IlpEncoder("cpu", ["tag"], [], TIMESTAMP)


def test_a_frame_without_symbols_encodes_like_the_client():
    frame = odd_frame()[["f=x", "n", TIMESTAMP]]
    assert encoded(frame, [], ["f=x", "n"]) == client_bytes(frame, [])


def test_many_tags_with_large_dictionaries_still_group_rows_exactly():
    """Combined codes beyond the key limit are renumbered, not wrapped around."""
    rng = np.random.default_rng(3)
    n = 5000
    tags = {f"t{i}": pd.Categorical(rng.integers(0, 3000, n).astype(str)) for i in range(8)}
    frame = pd.DataFrame(
        {**tags, "v": rng.random(n), TIMESTAMP: pd.to_datetime(np.arange(n) + 10**18, utc=True)}
    )
    assert encoded(frame, list(tags), ["v"]) == client_bytes(frame, list(tags))


def test_arrow_tables_and_batches_pass_through():
    batch = pa.RecordBatch.from_pandas(odd_frame(), preserve_index=False)
    assert as_record_batch(batch) is batch
    assert as_record_batch(pa.Table.from_batches([batch, batch])).num_rows == 8


def test_a_reused_encoder_follows_each_chunks_own_dictionary():
    """Code 0 means 'a' in one chunk and 'z z' in the next: the cached escapes must not mix."""
    encoder = IlpEncoder("cpu", ["tag"], ["v"], TIMESTAMP)
    for values in (["a", "b", "a"], ["z z", "a", "z z"], ["a", "b", "a"]):
        frame = pd.DataFrame(
            {
                "tag": pd.Categorical(values, categories=list(dict.fromkeys(values))),
                "v": [1.0, 2.0, 3.0],
                TIMESTAMP: pd.to_datetime([10**18, 10**18, 2 * 10**18], utc=True),
            }
        )
        mine = encoder.encode(as_record_batch(frame)).to_pybytes()
        assert mine == client_bytes(frame, ["tag"])


def test_tag_sets_kept_from_chunk_to_chunk_stay_exact():
    """Chunks sharing their dictionaries reuse the prefixes built so far: a chunk of known tag
    sets, one with new sets among known ones, one with several keys renumbered (many tags)."""
    host = pd.CategoricalDtype(["h0", "h 1", "h,2", "h3"])
    many = {f"t{i}": pd.CategoricalDtype([str(v) for v in range(3000)]) for i in range(6)}
    encoder = IlpEncoder("cpu", ["host", "rack"], ["v"], TIMESTAMP)
    wide = IlpEncoder("cpu", list(many), ["v"], TIMESTAMP)
    rng = np.random.default_rng(5)
    for hosts in (["h0", "h 1", "h0"], ["h,2", "h0", "h3"], ["h3", "h 1", "h,2"]):
        frame = pd.DataFrame(
            {
                "host": pd.Series(hosts, dtype=host),
                "rack": pd.Categorical(["r1", "r1", "r2"], categories=["r1", "r2"]),
                "v": [1.0, 2.0, 3.0],
                TIMESTAMP: pd.to_datetime([10**18, 10**18, 2 * 10**18], utc=True),
            }
        )
        assert encoder.encode(as_record_batch(frame)).to_pybytes() == client_bytes(
            frame, ["host", "rack"]
        )
        tags = {name: pd.Series(rng.integers(0, 3000, 50).astype(str), dtype=dtype)
                for name, dtype in many.items()}  # fmt: skip
        frame = pd.DataFrame(
            {**tags, "v": rng.random(50), TIMESTAMP: pd.to_datetime(np.arange(50) + 10**18)}
        )
        assert wide.encode(as_record_batch(frame)).to_pybytes() == client_bytes(frame, list(many))


def test_tsbs_long_fields_encode_as_the_client_does(tmp_path):
    from ingestbench.tsbs import DatasetParams, generate

    params = DatasetParams(scale=40, epochs=50, seed=3, field_type="long")
    generate(params, tmp_path, formats=("parquet",), progress=False)
    encoder = IlpEncoder("cpu", TAGS, FIELDS, TIMESTAMP)
    for library in ("pandas", "polars"):
        for chunk in iter_frames(
            tmp_path / f"{params.name}.parquet", library, "parquet", 700, 2000
        ):
            mine = encoder.encode(as_record_batch(chunk)).to_pybytes()
            assert mine == client_bytes(to_pandas(chunk), TAGS)
            assert b"i," in mine and b"==" not in mine  # integers as text, no binary double


def test_integers_at_the_edges_of_int64_and_timestamps_of_any_width_match_the_client():
    values = [-(2**63) + 1, 2**63 - 1, 0, -1, -10, 9, 10, 99, 100, 1234567890123]
    frame = pd.DataFrame(
        {
            "tag": pd.Categorical(["a"] * len(values)),
            "n": np.array(values, dtype="int64"),
            TIMESTAMP: pd.to_datetime(
                np.array([0, 1, 9, 10, 11, 10**18, 7, 8, 10**9, 99]), utc=True
            ),  # fmt: skip
        }
    )
    assert encoded(frame, ["tag"], ["n"]) == client_bytes(frame, ["tag"])
    frame[TIMESTAMP] = pd.to_datetime(np.arange(-5, 5), utc=True)
    with pytest.raises(EncodeError, match="holds a time before 1970, which ILP cannot carry"):
        encoded(frame, ["tag"], ["n"])
