"""The kinds a table's column can be, and the QuestDB type of each: TSBS's fields are "double" or
"long", own data's columns any of them (light: the standard library only, so the DDL imports it
without pyarrow)."""

#: kind -> QuestDB type. A kind is what the readers, the DDL and the validation agree on.
QUESTDB_TYPES = {
    "symbol": "SYMBOL",
    "varchar": "VARCHAR",
    "boolean": "BOOLEAN",
    "int": "INT",
    "long": "LONG",
    "float": "FLOAT",
    "double": "DOUBLE",
    "timestamp": "TIMESTAMP",
    "date": "DATE",
    "decimal": "DECIMAL(p,s)",  # a kind decimal(p,s) keeps the file's precision and scale
}
NUMERIC_KINDS = ("int", "long", "float", "double")
STRING_KINDS = ("symbol", "varchar")


def questdb_type(kind: str) -> str:
    """The QuestDB type of a kind; ``decimal(10,2)`` is ``DECIMAL(10,2)``."""
    return kind.upper() if kind.startswith("decimal(") else QUESTDB_TYPES[kind]


def decimal_kinds(kinds) -> list[str]:
    return [k for k in kinds if k.startswith("decimal(")]
