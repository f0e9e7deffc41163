"""Your own data: a Parquet or CSV file (or a directory of Parquet files) of the user's, described
by one type mapping, hashed into its manifest, loaded by every method that applies and validated
row for row like TSBS data (docs/own-data.md).

Its kind (what the stages ask of an own dataset) is ingestbench.datasets.own; nothing here knows
the stages.

May import: errors, storage.files, schema (an entry's defaults), catalogue (which methods are the
server's imports), tables, tsbs (the manifest's hash and generator record), variants,
results.profile (the profile's shape), columnar.arrow (the readers' Arrow helpers) and
columnar.duckdb_sql (the file's counts).
"""
