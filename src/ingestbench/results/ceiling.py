"""The wire ceiling: the best `ilp_file` rate of each dataset, from the summary table.

`ilp_file` sends pre-generated ILP text with no client work at all, so its best median rows/s
(end to end) is what the server takes here; every variant's `ceiling_fraction` is its median
rows/s over that rate. Runs that failed validation never set the ceiling.
"""

from __future__ import annotations

import math

import pandas as pd

CEILING_METHOD = "ilp_file"
LABEL = "wire ceiling"


def wire_ceilings(df: pd.DataFrame) -> dict[str, tuple[float, str]]:
    """{dataset: (best median rows/s of its ilp_file runs, that variant's name)}."""
    runs = df[df["method"] == CEILING_METHOD]
    if "validated" in runs:
        runs = runs[runs["validated"].fillna(True).astype(bool)]
    runs = runs.dropna(subset=["rows_per_s_median"])
    best = runs.sort_values("rows_per_s_median", ascending=False).drop_duplicates("dataset")
    rates = zip(best["dataset"], best["rows_per_s_median"], best["variant"], strict=True)
    return {dataset: (float(rate), variant) for dataset, rate, variant in rates}


def add_ceiling_fraction(df: pd.DataFrame) -> pd.DataFrame:
    """Column `ceiling_fraction`: rows/s median / the dataset's wire ceiling (NaN without one)."""
    ceilings = wire_ceilings(df)
    df["ceiling_fraction"] = [
        rate / ceilings[d][0] if d in ceilings and ceilings[d][0] > 0 else math.nan
        for d, rate in zip(df["dataset"], df["rows_per_s_median"], strict=True)
    ]
    return df
