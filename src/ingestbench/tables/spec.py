"""`TableSpec`: one table of a dataset, as the readers, the DDL, the methods and the validation
take it, whichever kind of dataset it comes from."""

from __future__ import annotations

from dataclasses import dataclass

#: The designated timestamp's name where a table names none (TSBS's tables all name it so).
TIMESTAMP = "timestamp"
#: The partition unit of a table that names none (QuestDB's own default for ILP's tables).
DEFAULT_PARTITION = "DAY"


@dataclass(frozen=True)
class TableSpec:
    """One table of a dataset: its default name, tags (SYMBOL), fields and their kinds, and the
    designated timestamp. TSBS's cpu use case has one, iot two; own data one."""

    table: str
    tags: tuple[str, ...]
    fields: tuple[str, ...]
    kinds: tuple[str, ...]  # per field, of tables.column_kinds: TSBS's "double" or "long"
    timestamp: str = TIMESTAMP
    nullable: bool = False  # tags and fields may be null (iot); the cpu table has no null
    partition_by: str = DEFAULT_PARTITION  # HOUR, DAY, WEEK, MONTH or YEAR (WAL needs one)

    @property
    def columns(self) -> tuple[str, ...]:
        return (*self.tags, *self.fields, self.timestamp)

    def kind(self, field: str) -> str:
        return self.kinds[self.fields.index(field)]
