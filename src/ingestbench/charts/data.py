"""The summary table shaped for the charts: which rows each chart shows, grouped and labelled.

No drawing here (and no matplotlib): ingestbench.charts.draw draws what these functions return, so a
chart's data can be tested, and reused, without a figure.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from ingestbench.variants import LIBRARIES, SENDER_POOL_METHODS


def short_cpu(model: str | None) -> str:
    """'Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz' -> 'Intel Xeon E5-2680 v4'."""
    if not model:
        return "unknown CPU"
    text = re.sub(r"\((R|TM|tm|r)\)", "", model)
    text = re.sub(r"@.*$", "", text)
    text = re.sub(r"\b(CPU|Processor|\d+-Core)\b", "", text)
    return re.sub(r"\s+", " ", text).strip() or model


def machine_label(env: dict[str, Any] | None) -> str:
    if not env:
        return "machine not recorded"
    m = env.get("machine", {})
    cores = m.get("cores_available") or m.get("cores_logical")
    return f"{cores} cores, {short_cpu(m.get('cpu_model'))}"


def rows_label(rows: Any) -> str:
    return f"{int(rows):,} rows" if pd.notna(rows) else "? rows"


def by_dataset(df: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(dataset, its rows) pairs, largest dataset first: one panel row each."""
    order = df.sort_values(["dataset_rows", "dataset"], ascending=[False, True])["dataset"]
    order = order.drop_duplicates()
    return [(name, df[df["dataset"] == name]) for name in order]


def marked_variants(df: pd.DataFrame) -> pd.Series:
    """Variant names, those of runs that shared the machine with other work marked."""
    if "contended" not in df:
        return df["variant"]
    contended = df["contended"].fillna(False).astype(bool)
    return df["variant"].where(~contended, df["variant"] + " (contended)")


def series_label(df: pd.DataFrame) -> pd.Series:
    """library · format · transport: one line per such combination in the line charts."""
    return df["library"] + " · " + df["format"] + " · " + df["transport"]


def speedup_data(df: pd.DataFrame) -> pd.DataFrame:
    """Variants that have a rows-loop baseline (the loop itself left out)."""
    return df[(df["method"] != "rows") & df["speedup_vs_rows"].notna()]


def scaling_data(df: pd.DataFrame) -> tuple[list[str], pd.DataFrame]:
    """(methods present, rows) of threads and processes, each with the dataframe variant of the
    same dataset, library, format and transport as its 1-worker point (unless it has its own)."""
    parallel = df[df["method"].isin(SENDER_POOL_METHODS)]
    methods = [m for m in SENDER_POOL_METHODS if m in set(parallel["method"])]
    if not methods:
        return [], parallel
    keys_of = ["dataset", "library", "format", "transport"]
    frames = []
    for method in methods:
        part = parallel[parallel["method"] == method].copy()
        keys = set(zip(*(part[k] for k in keys_of), strict=True))
        single = df[df["method"] == "dataframe"]
        single = single[[k in keys for k in zip(*(single[k] for k in keys_of), strict=True)]]
        single = single.assign(workers=1, method=method)
        if not (part["workers"] == 1).any():
            part = pd.concat([part, single])
        frames.append(part)
    data = pd.concat(frames)
    return methods, data.assign(series=series_label(data))


def read_times(df: pd.DataFrame) -> pd.DataFrame:
    """Median read phase per dataset, library and format, with the min and max over repeats.

    The dataframe variants when there are any for a library and format, else all client
    variants (the rows loop left out: it reads a capped prefix).
    """
    client = df[df["library"].isin(LIBRARIES) & (df["method"] != "rows")]
    parts = []
    for _, part in client.groupby(["dataset", "library", "format"]):
        pref = part[part["method"] == "dataframe"]
        parts.append(pref if not pref.empty else part)
    if not parts:
        return client.iloc[0:0]
    return (
        pd.concat(parts)
        .groupby(["dataset", "dataset_rows", "library", "format"], as_index=False)
        .agg(
            read=("read_s_median", "median"),
            lo=("read_s_min", "min"),
            hi=("read_s_max", "max"),
            convert=("convert_s_median", "median"),
        )
    )


def batch_data(df: pd.DataFrame) -> pd.DataFrame:
    batches = df[df["method"] == "batches"]
    return batches.assign(series=series_label(batches))


def cpu_data(df: pd.DataFrame) -> pd.DataFrame:
    """Runs with both CPU figures per 1M rows (an external server reports none of its own)."""
    data = df.copy()
    columns = []
    for side in ("client", "server"):
        column = f"{side}_cpu_s_per_1m_rows"
        if column not in data:  # a summary from before the column: the same ratio of medians
            data[column] = data[f"{side}_cpu_s_median"] / data["rows"] * 1e6
        columns.append(column)
    data = data.dropna(subset=columns)
    data["cpu_total"] = data[columns].sum(axis=1)
    return data
