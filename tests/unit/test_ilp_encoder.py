"""The vectorized ILP encoder writes, byte for byte, what the questdb client's `dataframe()`
writes for the same frame (escapes, integers, time units included), and refuses what its fixed
layout cannot carry in one sentence."""

from __future__ import annotations

import warnings
from datetime import date

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from ingestbench.columnar.arrow import to_pandas
from ingestbench.ingest.frames.encoder import EncodeError, IlpEncoder, as_record_batch
from ingestbench.ingest.frames.ilp_kernel import COPY_SLACK, _put
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


def test_a_one_row_chunk_encodes_with_and_without_symbols():
    for symbols in ([], ["host name"], ["host name", "plain"]):
        frame = odd_frame().iloc[:1][[*symbols, "n", TIMESTAMP]]
        assert encoded(frame, symbols, ["n"]) == client_bytes(frame, symbols)


def test_a_null_boolean_is_refused_as_the_client_refuses_it():
    frame = odd_frame()[["n", TIMESTAMP]].assign(flag=pd.array([True, None, False, True]))
    with pytest.raises(EncodeError, match="column 'flag' has 1 null.*BOOLEAN has no null"):
        encoded(frame, [], ["n", "flag"])
    with pytest.raises(Exception, match="Cannot insert null values into a boolean column"):
        client_bytes(frame, [])


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


def test_a_field_ilp_cannot_carry_is_refused():
    frame = odd_frame().assign(nested=[[1], [2], [3], [4]])
    with pytest.raises(EncodeError, match="column 'nested' is list<item: int64>; "):
        encoded(frame, ["host name"], ["nested"])


TEXT = ['a"b\\c\nd\re,f=g h', None, "", "é ✓ 日本", "plain", "x y", 'q"', "k=v,w"]


def every_dtype_frame() -> pd.DataFrame:
    """A column of every dtype `dataframe()` takes, nulls where the dtype has them."""
    n = len(TEXT)
    ns = [None if i == 1 else 1_700_000_000_123_456_789 + i * 86_400_000_000_001 for i in range(n)]
    times = pd.Series(pd.array([pd.NaT if v is None else pd.Timestamp(v, unit="ns") for v in ns]))
    return pd.DataFrame(
        {
            "sym": pd.Series(TEXT[::-1], dtype=object),  # plain strings as a symbol
            "cat": pd.Categorical(TEXT),
            "obj": pd.Series(TEXT, dtype=object),
            "objnan": pd.Series([np.nan if v is None else v for v in TEXT], dtype=object),
            "str": pd.Series(TEXT, dtype="str"),
            "pyarrow": pd.Series(TEXT, dtype="string[pyarrow]"),
            "catfield": pd.Categorical(TEXT),  # a category that is no symbol: a string field
            "flag": [True, False, True, True, False, False, True, False],
            "n": pd.array([1, None, -3, 2**62, 0, 5, None, 7], dtype="Int64"),
            "small": pd.array([1, None, -3, 2**31 - 1, 0, 5, None, 7], dtype="Int32"),
            "x": [1.5, np.nan, -0.0, 1e300, 5e-324, 0.1, np.inf, -0.5],
            "t_ns": times.astype("datetime64[ns]"),
            "t_us": times.astype("datetime64[us]"),
            "t_ms": times.astype("datetime64[ms]"),
            "t_s": times.astype("datetime64[s]"),
            "t_paris": times.dt.tz_localize("UTC").dt.tz_convert("Europe/Paris"),
            "t_tokyo_us": times.astype("datetime64[us]").dt.tz_localize("Asia/Tokyo"),
            "early": pd.Series(pd.to_datetime([-(10**15), 0, 1, 2, 3, 4, 5, 6], unit="us")),
            TIMESTAMP: pd.to_datetime(np.arange(n) * 10**9 + 10**18, utc=True),
        }
    )


@pytest.mark.parametrize("at_unit", ["ns", "us"])  # the client takes no other at
def test_every_dtype_dataframe_takes_encodes_as_the_client_does(at_unit):
    frame = every_dtype_frame()
    frame[TIMESTAMP] = frame[TIMESTAMP].astype(f"datetime64[{at_unit}, UTC]")
    symbols = ["sym", "cat"]
    fields = [c for c in frame.columns if c not in (*symbols, TIMESTAMP)]
    assert encoded(frame, symbols, fields) == client_bytes(frame, symbols)


def test_polars_strings_booleans_and_times_encode_like_their_pandas_view():
    frame = pl.DataFrame(
        {
            "sym": pl.Series(TEXT, dtype=pl.String),
            "cat": pl.Series(TEXT, dtype=pl.Categorical),
            "s": pl.Series(TEXT, dtype=pl.String),
            "b": [True, False, True, True, False, False, True, False],
            "i": pl.Series([1, None, -3, 2**62, 0, 5, None, 7], dtype=pl.Int64),
            "f": pl.Series([1.5, float("nan"), -0.0, 1e300, 5e-324, 0.1, 2.0, -0.5]),
            "t_ns": (pl.Series(range(8)) * 10**15 + 123).cast(pl.Datetime("ns", "UTC")),
            "t_us": (pl.Series(range(8)) * 10**12).cast(pl.Datetime("us", "Asia/Tokyo")),
            "t_ms": (pl.Series([1, None, 3, 4, 5, 6, 7, 8]) * 10**9).cast(pl.Datetime("ms")),
            TIMESTAMP: (pl.Series(range(8)) * 10**9 + 10**18).cast(pl.Datetime("ns")),
        }
    )
    fields = ["s", "b", "i", "f", "t_ns", "t_us", "t_ms"]
    mine = encoded(frame, ["sym", "cat"], fields)
    assert mine == client_bytes(to_pandas(frame), ["sym", "cat"])


def test_dates_are_sent_as_times_at_midnight_utc():
    """The client takes no date column; the encoder sends one as the workflow's readers turn
    it, a time at midnight UTC, and as the designated timestamp too."""
    days = [date(2024, 1, 2), None, date(1969, 12, 31), date(2262, 4, 11)]
    frame = pd.DataFrame(
        {"d": pd.Series(days, dtype=object), "v": [1.0, 2.0, 3.0, 4.0],
         TIMESTAMP: pd.Series([date(2024, 1, d) for d in (1, 2, 3, 4)], dtype=object)}
    )  # fmt: skip
    as_times = frame.assign(
        d=pd.to_datetime(frame["d"]).astype("datetime64[us]"),
        **{TIMESTAMP: pd.to_datetime(frame[TIMESTAMP]).astype("datetime64[us]")},
    )
    expected = client_bytes(as_times, [])
    assert encoded(frame, [], ["d", "v"]) == expected
    for library_frame in (pl.from_pandas(frame), pa.table({
        "d": pa.array(days, pa.date32()), "v": frame["v"],
        TIMESTAMP: pa.array(list(frame[TIMESTAMP]), pa.date32())})):  # fmt: skip
        assert encoded(library_frame, [], ["d", "v"]) == expected
    assert b"d=-86400000000t" in expected


def test_the_kernel_copies_every_length_exactly_and_writes_nothing_before_it():
    """`_put` copies a short range as 32 bytes (or as overlapping words where the source ends
    sooner): each length from 0 to 40, at odd offsets and up to the source's last byte, writes
    exactly its range, nothing before it and nothing past COPY_SLACK bytes after its start."""
    source = np.arange(1, 101, dtype=np.uint8)
    for start in (5, 60, 90):
        for n in range(min(41, source.size - start + 1)):
            out = np.zeros(3 + max(n, COPY_SLACK) + 8, np.uint8)
            _put(out, 3, source, start, n)
            assert np.array_equal(out[3 : 3 + n], source[start : start + n]), (start, n)
            assert not out[:3].any() and not out[3 + max(n, COPY_SLACK) :].any(), (start, n)


def test_strings_are_escaped_by_what_each_piece_holds_like_the_client():
    """A string column whose piece holds no byte to escape is copied value by value, one whose
    piece holds one anywhere is escaped: each piece (a slice of its batch) is judged by its own
    bytes, short values and values longer than a block alike, and one encoder serves them all."""
    long = "é ✓ x" * 600  # 4,200 bytes: longer than has_escapes' blocks
    frame = pd.DataFrame(
        {
            "clean": ["a b", "", long, "k=v,w", "x", None, "last"],
            "late": ["a", "b", "c", "d", "e", "f", long + '"'],  # an escape in the last block
            "early": ['q"', "b", long, "d", None, "f", "g"],
            "n": np.arange(7),
            TIMESTAMP: pd.to_datetime(np.arange(7) + 10**18, utc=True),
        }
    )
    encoder = IlpEncoder("cpu", [], ["clean", "late", "early", "n"], TIMESTAMP)
    batch = as_record_batch(frame)
    for start, stop in ((0, 7), (1, 7), (0, 6), (2, 4), (6, 7)):
        mine = encoder.encode(batch.slice(start, stop - start)).to_pybytes()
        assert mine == client_bytes(frame.iloc[start:stop], [])


def test_tags_that_barely_repeat_are_written_row_by_row_as_the_client_does():
    """A high-cardinality symbol (more values than half the chunk's rows) skips the prefixes
    of tag sets; chunks of either kind, one encoder for all, stay exact."""
    rng = np.random.default_rng(11)
    encoder = IlpEncoder("cpu", ["low", "high", "mid"], ["v"], TIMESTAMP)
    low = pd.CategoricalDtype(["a", "b c", "d,e"])
    for high_values in (50_000, 40, 50_000, 3):
        n = 400
        high = rng.integers(0, high_values, n).astype(str).astype(object)
        high[::7] = None
        frame = pd.DataFrame(
            {
                "low": pd.Series(rng.choice(["a", "b c", "d,e"], n), dtype=low),
                "high": pd.Series(high, dtype=object),
                "mid": pd.Categorical(rng.integers(0, 5, n).astype(str)),
                "v": rng.random(n),
                TIMESTAMP: pd.to_datetime(np.arange(n) + 10**18, utc=True),
            }
        )
        mine = encoder.encode(as_record_batch(frame)).to_pybytes()
        assert mine == client_bytes(frame, ["low", "high", "mid"])


@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_symbols_given_as_strings_are_written_row_by_row_as_the_client_does(library):
    """A symbol the reader hands on as strings (its values barely repeat), with every byte a
    symbol escapes and nulls, beside a dictionary symbol, in the pieces the method sends."""
    rng = np.random.default_rng(5)
    n = 1_000
    values = np.array(["a b", "c,d", "e=f", "g\\h", "plain", "ünï"], dtype=object)
    device = values[rng.integers(0, len(values), n)] + np.arange(n).astype(str).astype(object)
    device[::9] = None
    frame = pd.DataFrame({
        "region": pd.Categorical(rng.choice(["x", "y z"], n)),
        "device": pd.Series(device, dtype="str"),
        "v": rng.random(n),
        TIMESTAMP: pd.to_datetime(np.arange(n) + 10**18, utc=True),
    })  # fmt: skip
    source = pl.from_pandas(frame) if library == "polars" else frame
    batch = as_record_batch(source)
    assert not pa.types.is_dictionary(batch.schema.field("device").type)
    encoder = IlpEncoder("cpu", ["region", "device"], ["v"], TIMESTAMP)
    for start in range(0, n, 300):  # one encoder for every piece, as a worker has
        mine = encoder.encode(batch.slice(start, 300)).to_pybytes()
        assert mine == client_bytes(frame.iloc[start : start + 300], ["region", "device"])


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
    values = [-(2**63) + 1, 2**63 - 1, 0, -1, -10, 9, 10, 99, 100, 1234567890123,
              10**8 - 1, 10**8, 10**16, 10**16 + 10**8 - 1, 10**16 + 10**8, -(10**15)]  # fmt: skip
    # times written in groups of 8 digits, the leading ones kept while they stay the same
    times = [0, 1, 9, 10, 11, 10**18, 7, 8, 10**9, 99,
             10**8 - 1, 10**18 + 5, 10**8, 10**18 + 6, 10**18 + 10**8, 10**18]  # fmt: skip
    frame = pd.DataFrame(
        {
            "tag": pd.Categorical(["a"] * len(values)),
            "n": np.array(values, dtype="int64"),
            TIMESTAMP: pd.to_datetime(np.array(times), utc=True),
        }
    )
    assert encoded(frame, ["tag"], ["n"]) == client_bytes(frame, ["tag"])
    frame[TIMESTAMP] = pd.to_datetime(np.arange(-8, 8), utc=True)
    with pytest.raises(EncodeError, match="holds a time before 1970, which ILP cannot carry"):
        encoded(frame, ["tag"], ["n"])
