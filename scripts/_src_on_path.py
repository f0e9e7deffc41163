"""Make `ingestbench` importable in a Snakemake script even when it is not installed.

Under `--sdm conda` the rule's environment has the pinned dependencies but not this package;
Snakemake puts this scripts/ directory on sys.path, so importing this module adds ../src.
"""

import importlib.util
import sys
from pathlib import Path

if importlib.util.find_spec("ingestbench") is None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
