"""What a table of any dataset is, in the words every kind and stage shares.

- `spec`: `TableSpec`, one table (its name, symbols, fields with their kinds, the designated
  timestamp and the partition unit); TSBS's tables (ingestbench.tsbs.columns) and own data's
  (ingestbench.own.spec) are made of it.
- `column_kinds`: the kinds a column can be (what the readers, the DDL and the validation agree
  on) and the QuestDB type of each.

Light on purpose (the standard library only), so anything may import it.

May import: nothing.
"""
