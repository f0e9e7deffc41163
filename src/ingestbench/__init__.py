"""Benchmark the ways to get a dataframe into QuestDB, on TSBS's cpu and iot datasets.

Each part (a module here, or a package with its `__init__.py`) says in its docstring, in one line
`May import: ...`, which other parts it imports (tests/unit/test_layering.py holds the code to
it); every part may import this root (`CHECKOUT`, the version), which imports none of them.
"""

from pathlib import Path

__version__ = "0.1.0"

#: The checkout this package runs from (it is installed editable): where the workflow's files,
#: schemas/ and requirements.lock are. The one place that knows the package sits in src/.
CHECKOUT = Path(__file__).resolve().parents[2]
