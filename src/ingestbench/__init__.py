"""Benchmark the ways to get a dataframe into QuestDB, on TSBS cpu and iot datasets."""

from pathlib import Path

__version__ = "0.1.0"

#: The checkout this package runs from (it is installed editable): where the workflow's files,
#: schemas/ and requirements.lock are. The one place that knows the package sits in src/.
CHECKOUT = Path(__file__).resolve().parents[2]
