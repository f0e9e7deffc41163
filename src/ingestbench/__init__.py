"""Benchmark the ways to get a dataframe into QuestDB, on the TSBS cpu dataset."""

__version__ = "0.1.0"
