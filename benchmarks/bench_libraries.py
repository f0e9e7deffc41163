"""pandas against polars `dataframe()`, Parquet and CSV over HTTP, interleaved on one server.

The interleaved benchmark (bench_interleaved.py) with these four variants and 7 repeats as its
defaults; name other variants to compare those instead.
"""

from bench_interleaved import main

VARIANTS = [
    "pandas-dataframe-parquet-http",
    "polars-dataframe-parquet-http",
    "pandas-dataframe-csv-http",
    "polars-dataframe-csv-http",
]

if __name__ == "__main__":
    main(variants=VARIANTS, repeats=7)
