"""The ways to ingest: each method runs one repeat's timed phases against a real server.

Adding a method: one subclass of `Method` (base.py) in the module of its kind, and its record
in ingestbench.catalogue, whose `implementation` names the class; `METHODS` below resolves it.
A method of the paced or delivery experiments also has its stream or loader in that module
(the interfaces are in experiments.py), which the record names as `paced` or `deliver`.

Within ingest, may import: frames, timing, workers.
"""

from __future__ import annotations

import importlib

from ingestbench import catalogue

# The modules of the catalogue's classes, imported by name so that a rule's code digest sees them.
from ingestbench.ingest.methods import (  # noqa: F401
    frames,
    ilp_file,
    loops,
    parallel,
    pgwire,
    server_side,
    vectorized,
)
from ingestbench.ingest.methods.base import (
    Job,
    Method,
    SendError,
    TablePart,
    Unsupported,
    client_errors,
    cpu_job,
    dataframe_into,
    read_whole,
)
from ingestbench.ingest.timing import Clock


def _implementation(method: catalogue.Method) -> type[Method]:
    module, _, name = method.implementation.partition(".")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


#: Each method's class, as the catalogue names it.
METHODS: dict[str, type[Method]] = {m.name: _implementation(m) for m in catalogue.CATALOGUE}

__all__ = [
    "METHODS",
    "Clock",
    "Job",
    "Method",
    "SendError",
    "TablePart",
    "Unsupported",
    "client_errors",
    "cpu_job",
    "dataframe_into",
    "read_whole",
]
