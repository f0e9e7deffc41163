"""The method catalogue drives the rest: no other module keeps a list of method names, and a
method added to the catalogue alone reaches the schema, the matrix, the registry of classes,
the generated docs and configs."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import yaml

from ingestbench import CHECKOUT, catalogue
from ingestbench.dev.workflow_copy import copy_workflow

PACKAGE = CHECKOUT / "src" / "ingestbench"


def _method_literals(path: Path) -> list[tuple[int, list[str]]]:
    """(line, names) of every tuple, list, set or dict literal in `path` that spells three or
    more method names."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            items = node.elts
        elif isinstance(node, ast.Dict):
            items = [k for k in node.keys if k is not None]
        else:
            continue
        names = [
            i.value for i in items if isinstance(i, ast.Constant) and i.value in catalogue.METHODS
        ]
        if len(names) >= 3:
            found.append((node.lineno, names))
    return found


def test_the_scan_finds_a_hand_kept_list(tmp_path):
    """The scan below can fail: a module with such a list is found."""
    module = tmp_path / "m.py"
    module.write_text('SLOW = ("rows", "iterrows", "to_sql")\nOK = {"rows": 1}\n')
    assert _method_literals(module) == [(1, ["rows", "iterrows", "to_sql"])]


def test_no_module_but_the_catalogue_keeps_a_list_of_method_names():
    found = {
        str(path.relative_to(PACKAGE)): hits
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "catalogue.py" and (hits := _method_literals(path))
    }
    assert not found, f"method names kept by hand (derive them from ingestbench.catalogue): {found}"


def test_every_record_is_whole():
    for method in catalogue.CATALOGUE:
        assert method.doc and method.phases and method.implementation and method.two_tables
        assert method.libraries and method.formats and method.transports, method.name
        assert not (method.flush_modes and method.unpaced_reason), method.name
        assert set(method.flush_modes) <= set(catalogue.FLUSH_MODES)
        assert set(method.formats) <= set(catalogue.FORMATS)


NEW_METHOD = """
CATALOGUE = (*CATALOGUE, Method(
    "rows_again",
    "client",
    "a made-up method: the row loop once more",
    "read, send, visible",
    chunked=True,
    capped=True,
    implementation="loops.Rows",
    two_tables="its own way with two tables",
    sweep=(("transport", ("tcp",)),),
    unpaced_reason="made up",
))
METHODS = {m.name: m for m in CATALOGUE}
METHOD_NAMES = tuple(METHODS)
"""


def test_a_method_added_to_the_catalogue_alone_reaches_everything(tmp_path):
    """One record appended to a copy's catalogue, then the copy's `make readme`: the rest is
    derived from it."""
    copy = copy_workflow(tmp_path)
    module = copy / "src" / "ingestbench" / "catalogue.py"
    text = module.read_text()
    at = text.index("\ndef names(")
    module.write_text(text[:at] + NEW_METHOD + text[at:])
    env = {**os.environ, "PYTHONPATH": str(copy / "src")}

    def python(*args: str) -> str:
        done = subprocess.run([sys.executable, *args], cwd=copy, env=env, capture_output=True,
                              text=True)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    python("-m", "ingestbench.dev.readme")
    assert (
        "| `rows_again` | a made-up method: the row loop once more |"
        in (copy / "docs" / "methods.md").read_text()
    )
    assert (
        "| `rows_again` | its own way with two tables |" in (copy / "docs" / "iot.md").read_text()
    )
    assert "``rows_again``" in (copy / "report" / "workflow.rst").read_text()
    full = yaml.safe_load((copy / "configs" / "full.yaml").read_text())
    assert {"library": ["pandas", "polars"], "method": "rows_again",
            "format": ["parquet", "csv"], "transport": "tcp"} in full["variants"]  # fmt: skip
    listed = python("-m", "ingestbench.cli", "variants", "--config", "configs/full.yaml")
    assert "pandas-rows_again-csv-tcp" in listed and "polars-rows_again-parquet-tcp" in listed
    assert "rows_again-parquet-http" not in listed
    out = python("-c", (
        "from ingestbench.schema import load_schema;"
        "from ingestbench.ingest.methods import METHODS;"
        "from ingestbench.ingest.warmup import warmup_method;"
        "from ingestbench.variants import parse_variant_name, CAPPED_METHODS;"
        "v = parse_variant_name('polars-rows_again-csv-tcp-c500');"
        "print('rows_again' in load_schema()['$defs']['method']['enum'],"
        " METHODS['rows_again'].__name__, warmup_method(v), 'rows_again' in CAPPED_METHODS)"
    ))  # fmt: skip
    assert out.split() == ["True", "Rows", "dataframe", "True"]
