"""Your own data: a Parquet or CSV file (or a directory of Parquet files) of the user's, described
by one type mapping, hashed into its manifest, loaded by every method that applies and validated
row for row like TSBS data (docs/own-data.md).

May import: errors, files, tsbs, variants, results.records and results.profile (the profile's
shape), arrow (the readers' Arrow helpers), duckdb_sql (the file's counts).
"""
