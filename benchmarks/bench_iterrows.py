"""`dataframe()` over TCP against QuestDB's published baseline loop (iterrows), interleaved.

The interleaved benchmark (bench_interleaved.py) with the loop first (the ratios divide by it)
and 3 repeats as its defaults.
"""

from bench_interleaved import main

VARIANTS = ["pandas-iterrows-parquet-tcp", "pandas-dataframe-parquet-tcp"]

if __name__ == "__main__":
    main(variants=VARIANTS, repeats=3)
