"""TSBS's datasets, seeded, streamed to Parquet, CSV and ILP text: the "cpu" use case (hosts, one
table; below) and the "iot" one (trucks, two tables with TSBS's nulls, dropped and late rows;
``trucks``), chosen by ``DatasetParams.use_case``.

The cpu semantics (taken from TSBS's Go source):

* Hosts ``host_0 .. host_{scale-1}``. Each host draws its nine other tags once and keeps them:
  region (uniform over 9), datacenter (uniform within the region; 23 in all), rack ``"0".."99"``,
  os, arch, team, service ``"0".."19"``, service_version ``"0"``/``"1"``, service_environment.
* Ten fields in TSBS order. Every host has its own independent clamped random walk per field:
  start uniform on [0, 100), then each epoch adds an N(0, 1) step and clamps to [0, 100].
* Epoch 0 holds the start values at ``start``; epoch e is written at ``start + e * interval``.
  Rows go epoch by epoch, hosts in order; all hosts of an epoch share its timestamp.
  ``field_type="long"`` writes ``int64(value)`` (truncation), as TSBS does; ``"double"`` keeps the
  full values, as QuestDB's pandas benchmark does.

Random draws (one ``np.random.default_rng(seed)``, in this order, so a seed fixes the data and the
chunk size does not): the tag indices, one vector over all hosts per tag in ``TAGS`` order
(region, then datacenter within the drawn region, rack, os, arch, team, service, service_version,
service_environment); the start values, ``rng.random((10, scale)) * 100``; then per epoch >= 1
one ``rng.standard_normal((10, scale))`` block of steps (field-major, hosts in order).

Out-of-order mode (``out_of_order_lag_s``): every row gets the sort key ``timestamp + d`` where
``d`` is a uniform integer number of nanoseconds in [0, lag) drawn in row order from a second
generator, ``np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])``; rows are written
in the order of a stable sort on that key (ties keep the in-order row order). The data is the same
multiset of rows as the in-order dataset with the same seed, and a row is never preceded by a row
whose timestamp is ``lag`` or more later than its own. The sort is done chunk by chunk with a
carry: after sorting the carry plus a new chunk, the rows whose key is below the next chunk's first
timestamp are final (no later row can sort before them) and are written; the rest are carried.
The result equals one global stable sort, and memory stays bounded by chunk + lag window.

Output of a cpu dataset: ``<name>.parquet`` (tags as ``dictionary<int32, string>``, so pandas reads
``category`` and polars ``Categorical``; fields ``double`` or ``int64``; ``timestamp[ns, tz=UTC]``;
one row group per chunk of about a million rows), ``<name>.csv`` (header, unquoted values,
timestamps like ``2016-01-01T00:00:00.000000Z``) and ``<name>.manifest.json``. Every file is
written to a temporary name beside its final one, and all are renamed into place only when all are
complete.

Modules: ``params`` (DatasetParams: checked, named, from the config), ``hosts`` (the cpu
simulation: tags, walks, chunks, the out-of-order shuffle), ``trucks`` (the iot simulation as
Arrow tables, from ``truck_fleet``, the trucks and their walks, and ``truck_batches``, TSBS's batch
layer), ``writers`` (one Writer per format, registered in ``formats``), ``ilp`` (the ILP text
writer), ``iot_files`` (an iot dataset's files), ``generator`` (the generate loop), ``manifest``,
and ``columns`` (the tables' column names, which everything else follows).

May import: errors, storage.files, schema (the datasets' defaults) and tables (the tables' spec).
"""

import importlib

from ingestbench.tsbs.columns import COLUMNS, FIELDS, TAGS, TIMESTAMP
from ingestbench.tsbs.hosts import REGIONS, ROW_GROUP_ROWS, TAG_VALUES
from ingestbench.tsbs.params import (
    DEFAULT_INTERVAL_S,
    DEFAULT_START,
    FIELD_TYPES,
    GENERATOR_VERSION,
    DatasetParams,
    GeneratorError,
    format_duration,
    format_timestamp,
    parse_duration,
)

# Loaded on first use (PEP 562): the Snakefile needs only DatasetParams, and every Snakemake start
# (two or three per SLURM job) would otherwise pay for importing pyarrow and polars.
_LAZY = {
    "generate": "generator",
    "MANIFEST_SCHEMA_VERSION": "manifest",
    **dict.fromkeys(("PARQUET_COMPRESSION", "Writer", "arrow_schema", "column_schema"), "writers"),
    **dict.fromkeys(("BOTH", "WRITERS"), "formats"),
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BOTH",
    "COLUMNS",
    "DEFAULT_INTERVAL_S",
    "DEFAULT_START",
    "FIELDS",
    "FIELD_TYPES",
    "GENERATOR_VERSION",
    "MANIFEST_SCHEMA_VERSION",
    "PARQUET_COMPRESSION",
    "REGIONS",
    "ROW_GROUP_ROWS",
    "TAGS",
    "TAG_VALUES",
    "TIMESTAMP",
    "WRITERS",
    "DatasetParams",
    "GeneratorError",
    "Writer",
    "arrow_schema",
    "column_schema",
    "format_duration",
    "format_timestamp",
    "generate",
    "parse_duration",
]
