"""Arrow tables into the dataframe libraries, as the ILP client takes them: chunks of a set size,
pandas or polars, integer columns with nulls kept integer. Shared by the readers of TSBS files
(ingestbench.ingest) and of the user's own (ingestbench.own).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

#: A symbol whose chunk holds more distinct values than this share of its rows barely repeats:
#: as a dictionary (a pandas category, a polars Categorical) it costs every library a lookup
#: per value and saves nothing, so the readers keep it as strings and the `vectorized` encoder
#: writes it row by row (63k distinct values in 100k rows: making its pandas categories alone
#: cost 0.16 CPU-s per 1M rows).
SPARSE_SHARE = 0.5


def as_symbol(column: Any) -> Any:
    """A symbol column (Arrow, of strings or a dictionary) as the readers hand it on: a
    dictionary where its values repeat, plain strings where they barely do (SPARSE_SHARE).
    Strings are encoded over all their chunks at once (one dictionary); chunks that came as
    dictionaries of their own are judged by the largest, which errs toward a dictionary."""
    import pyarrow as pa
    import pyarrow.compute as pc

    encoded = column if pa.types.is_dictionary(column.type) else pc.dictionary_encode(column)
    if isinstance(encoded, pa.ChunkedArray):
        distinct = max((len(chunk.dictionary) for chunk in encoded.chunks), default=0)
    else:
        distinct = len(encoded.dictionary)
    if distinct <= SPARSE_SHARE * len(column):
        return encoded
    return column if encoded is not column else column.cast(column.type.value_type)


def rechunk(batches: Iterable[Any], chunk_rows: int, rows: int) -> Iterator[Any]:
    """Arrow tables of exactly `chunk_rows` rows (the last may be shorter) from record batches of
    any size, stopping after `rows` rows."""
    import pyarrow as pa

    pending: list = []
    held, left = 0, rows
    for batch in batches:
        pending.append(batch)
        held += batch.num_rows
        while left > 0 and held >= min(chunk_rows, left):
            take = min(chunk_rows, left)
            table = pa.Table.from_batches(pending)
            yield table.slice(0, take)
            rest = table.slice(take)
            pending, held, left = rest.to_batches(), rest.num_rows, left - take
        if left <= 0:
            return
    if held:
        yield pa.Table.from_batches(pending).slice(0, min(held, left))


def from_arrow(table: Any, library: str) -> Any:
    if library == "polars":
        import polars as pl

        return pl.from_arrow(table, rechunk=False)
    return arrow_to_pandas(table)


def arrow_to_pandas(table: Any):
    """An Arrow table as pandas; an integer column with nulls as a nullable integer (plain
    to_pandas() makes it float64, and QuestDB would then take DOUBLE values for a LONG column).

    split_blocks: each column its own block, so the fields are not copied into one 2-D block
    (about a fifth of the conversion's CPU on TSBS chunks); pandas consolidates later if it must."""
    import pyarrow as pa

    pdf = table.to_pandas(split_blocks=True)
    for field in table.schema:
        if pa.types.is_integer(field.type) and table.column(field.name).null_count:
            pdf[field.name] = table.column(field.name).to_pandas(types_mapper=nullable_int_dtype)
    return pdf


def is_polars(frame: Any) -> bool:
    """Whether `frame` is a polars frame (or series): polars itself is not imported to ask."""
    return type(frame).__module__.startswith("polars")


def to_pandas(frame: Any):
    """The frame the ILP client takes: pandas as is; polars through Arrow (categories kept,
    integer columns with nulls as pandas' nullable integers)."""
    if not is_polars(frame):
        return frame
    # Not polars' own to_pandas(): it turns an integer column with nulls into float64 (QuestDB
    # would then make a DOUBLE column of it), and it copies the fields into one 2-D block,
    # which arrow_to_pandas does not (a fifth less CPU on TSBS chunks).
    return arrow_to_pandas(frame.to_arrow())


def nullable_int_dtype(arrow_type: Any) -> Any:
    """pandas' nullable integer dtype for an Arrow integer type (None for any other type)."""
    import pandas as pd
    import pyarrow as pa

    if not pa.types.is_integer(arrow_type):
        return None
    bits = arrow_type.bit_width
    return pd.api.types.pandas_dtype(
        f"{'Int' if pa.types.is_signed_integer(arrow_type) else 'UInt'}{bits}"
    )
