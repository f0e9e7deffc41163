"""Make the scripts import `ingestbench` from this checkout's src/, installed or not.

Snakemake puts this scripts/ directory on sys.path, so importing this module puts ../src first:
the code a rule runs is the code its params' digest was taken of (ingestbench.workflow.rule_inputs),
also under `--sdm conda`, whose environment has the pinned dependencies but not this package.
"""

import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parent.parent / "src")
if SRC not in sys.path:
    sys.path.insert(0, SRC)
