"""The method catalogue drives the rest: no other module keeps a list of method names, and a
method added to the catalogue alone reaches the schema, the matrix, the registry of classes,
the generated docs and configs."""

from __future__ import annotations

import ast
import re

import yaml

from ingestbench import CHECKOUT, catalogue
from ingestbench.dev.methods_doc import FULL_CONFIG
from ingestbench.dev.workflow_copy import copy_workflow
from ingestbench.ingest.methods.experiments import resolve
from ingestbench.own.support import CSV_IMPORT_REFUSALS, REFUSALS
from ingestbench.variants import delivery_path_names
from tests.helpers import python_in

PACKAGE = CHECKOUT / "src" / "ingestbench"


#: Method names that are also words the package uses otherwise (a row count, a flush mode, a
#: dataset's key): as a dict key, or compared with something that does not say `method`, they
#: are not taken as the method.
WORDS = {"rows"}
#: Where a method's name is legitimately written outside the catalogue, and why: (the file under
#: src/ingestbench, the name).
ALLOWED = {
    ("charts/data.py", "rows"): "the speedup chart's baseline is the rows loop",
    ("charts/data.py", "dataframe"): "one dataframe sender is the scaling chart's 1-worker point",
    ("charts/data.py", "batches"): "the batch-size chart draws the batches method's sweep",
    ("charts/draw.py", "dataframe"): "the batch-size chart's reference line: one whole frame",
    ("dev/readme.py", "to_sql"): "the README compares the SQL paths with pandas' to_sql",
}
COMPARISONS = (ast.Eq, ast.NotEq, ast.In, ast.NotIn)
LOOKUPS = {"globals", "locals", "vars"}


def _names(node: ast.AST) -> list[str]:
    """The method names a constant, or a tuple, list or set of constants, spells."""
    items = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    return [i.value for i in items if isinstance(i, ast.Constant) and i.value in catalogue.METHODS]


def _built_name(node: ast.AST) -> bool:
    """`globals()[f"load_{method}"]`, `getattr(module, f"load_{method}")`: code chosen by a name
    built from a method's."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.JoinedStr):
        call = node.value
        return isinstance(call, ast.Call) and getattr(call.func, "id", None) in LOOKUPS
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr":
        return len(node.args) > 1 and isinstance(node.args[1], ast.JoinedStr)
    return False


def method_names_in_python(text: str) -> list[tuple[int, str, list[str]]]:
    """(line, form, names) of every use of a method's name that chooses by it: a comparison
    (==, !=, in, not in, with one name or more), a match case, a dict key, a list of three or
    more, and a lookup of code by a name built from a method's."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Compare) and any(isinstance(o, COMPARISONS) for o in node.ops):
            sides = [node.left, *node.comparators]
            says_method = "method" in ast.unparse(node)
            names = [n for s in sides for n in _names(s) if n not in WORDS or says_method]
            form = "comparison"
        elif isinstance(node, ast.MatchValue):
            names, form = _names(node.value), "case"
        elif isinstance(node, ast.Dict):
            names = [n for k in node.keys if k is not None for n in _names(k) if n not in WORDS]
            form = "dict key"
        elif isinstance(node, ast.Tuple | ast.List | ast.Set):
            names, form = _names(node), "list"
            names = names if len(names) >= 3 else []
        elif _built_name(node):
            found.append((node.lineno, "lookup by a built name", []))
            continue
        else:
            continue
        if names:
            found.append((node.lineno, form, names))
    return found


def method_names_in_yaml(text: str, config: bool) -> list[tuple[str, str]]:
    """(where, name) of every method name or delivery path in a YAML document; in a config a
    user writes (`config`) the value of a `method` or `methods` key is a choice, not a list
    kept by hand, and so is a schema's `default` of one."""
    paths = set(delivery_path_names())
    found = []

    def walk(node, where: tuple[str, ...]) -> None:
        chosen = where[-1:] in (("method",), ("methods",)) and (config or "default" in where)
        if isinstance(node, dict):
            for key, value in node.items():
                if key in catalogue.METHODS and key not in WORDS:
                    found.append((".".join(where), key))
                walk(value, (*where, str(key)))
        elif isinstance(node, list):
            for value in node:
                walk(value, where)
        elif isinstance(node, str) and (node in catalogue.METHODS or node in paths):
            word = node in WORDS and where[-1:] != ("method",)
            if not chosen and not word:
                found.append((".".join(where), node))

    walk(yaml.safe_load(text), ())
    return found


def method_names_in_rules(text: str) -> list[tuple[int, str]]:
    """(line, name) of every quoted method name in a rule file (Snakemake's Python)."""
    return [(i, name) for i, line in enumerate(text.splitlines(), 1)
            for name in re.findall(r"""["']([a-z_0-9]+)["']""", line)
            if name in catalogue.METHODS and name not in WORDS]  # fmt: skip


def test_the_scan_finds_each_form_of_a_name_chosen_by_hand():
    """The scans below can fail: each form is found."""
    source = """
if m == "server_parquet": pass
if m != "ilp_file": pass
if path.method in ("rows", "dataframe"): pass
if variant.method not in ("vectorized",): pass
if mode == "rows": pass
match m:
    case "executemany": pass
LOADERS = {"threads": 1, "rows": 2}
SLOW = ("rows", "iterrows", "to_sql")
load = globals()[f"load_{method}"]
load = getattr(module, f"load_{method}")
"""
    assert method_names_in_python(source) == [
        (2, "comparison", ["server_parquet"]),
        (3, "comparison", ["ilp_file"]),
        (4, "comparison", ["rows", "dataframe"]),
        (5, "comparison", ["vectorized"]),
        (9, "dict key", ["threads"]),
        (10, "list", ["rows", "iterrows", "to_sql"]),
        (11, "lookup by a built name", []),
        (12, "lookup by a built name", []),
        (8, "case", ["executemany"]),
    ]
    schema = "paths: {items: {enum: [dataframe-http, vectorized-tcp]}, default: [rows]}\n"
    assert method_names_in_yaml(schema, config=False) == [
        ("paths.items.enum", "dataframe-http"), ("paths.items.enum", "vectorized-tcp"),
    ]  # fmt: skip
    config = "variants: [{method: dataframe}]\npaced: {slow: server_csv}\nthreads: 2\n"
    assert method_names_in_yaml(config, config=True) == [
        ("paced.slow", "server_csv"),
        ("", "threads"),
    ]
    assert method_names_in_rules('if wildcards.method == "asyncpg":\n') == [(1, "asyncpg")]


def test_no_module_but_the_catalogue_chooses_by_a_method_name():
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        where = str(path.relative_to(PACKAGE))
        if path.name == "catalogue.py":  # the catalogue itself
            continue
        hits = [h for h in method_names_in_python(path.read_text())
                if not h[2] or any((where, n) not in ALLOWED for n in h[2])]  # fmt: skip
        if hits:
            found[where] = hits
    assert not found, f"method names chosen by hand (ask ingestbench.catalogue): {found}"


def test_no_yaml_or_rule_file_lists_method_names_by_hand():
    """configs/full.yaml is generated from the catalogue (`make readme`); the other configs and
    config.yaml choose methods, each as a `method` (their user's choice)."""
    configs = [CHECKOUT / "config.yaml", *sorted((CHECKOUT / "configs").glob("*.yaml"))]
    found = {}
    for path in [*configs, *sorted((CHECKOUT / "schemas").glob("*.yaml"))]:
        if path == FULL_CONFIG:
            continue
        if hits := method_names_in_yaml(path.read_text(), config=path in configs):
            found[str(path.relative_to(CHECKOUT))] = hits
    for path in [CHECKOUT / "Snakefile", *sorted((CHECKOUT / "rules").glob("*.smk"))]:
        if hits := method_names_in_rules(path.read_text()):
            found[str(path.relative_to(CHECKOUT))] = hits
    assert not found, f"method names typed by hand (derive them from the catalogue): {found}"


def test_every_record_is_whole():
    for method in catalogue.CATALOGUE:
        assert method.doc and method.phases and method.implementation and method.two_tables
        assert method.libraries and method.formats and method.transports, method.name
        assert not (method.flush_modes and method.unpaced_reason), method.name
        assert set(method.flush_modes) <= set(catalogue.FLUSH_MODES)
        assert set(method.formats) <= set(catalogue.FORMATS)
        # Paced and delivered methods name their code, which resolves; own data's refusals exist.
        assert bool(method.paced) == bool(method.flush_modes), method.name
        assert bool(method.deliver) == bool(method.resend) == bool(method.delivery_transports)
        for ref in filter(None, (method.paced, method.deliver)):
            assert callable(resolve(ref)), ref
        assert set(method.own_refusals) <= {*REFUSALS, *CSV_IMPORT_REFUSALS}, method.name


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
    python = python_in(copy)

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
