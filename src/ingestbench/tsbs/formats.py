"""The output formats of the generator: format name -> its writer, in the order files are written.

Apart from `writers` because the ILP writer subclasses `Writer` and lives in `ilp`; a registry
beside both keeps the two modules free of each other.
"""

from __future__ import annotations

from ingestbench.tsbs.ilp import IlpWriter
from ingestbench.tsbs.writers import CsvWriter, ParquetWriter, Writer

#: Format name -> its writer, in the order the files are written; the names are
#: ingestbench.variants.FORMATS (a test checks the two agree).
WRITERS: dict[str, type[Writer]] = {"parquet": ParquetWriter, "csv": CsvWriter, "ilp": IlpWriter}
#: What `--format both` means: the two dataframe formats (the ILP text is big, see
#: ingestbench.storage.disk.FILE_BYTES_PER_ROW).
BOTH: tuple[str, ...] = ("parquet", "csv")
