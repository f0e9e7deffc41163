"""The kinds of own-data columns and the QuestDB type of each (light: the standard library
only, so the DDL imports it without pyarrow)."""

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
}
NUMERIC_KINDS = ("int", "long", "float", "double")
STRING_KINDS = ("symbol", "varchar")
