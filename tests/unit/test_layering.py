"""The package's layering, as its docstrings state it: each part (a top-level module, or a package
with its `__init__.py`) says in one line `May import: ...` which other parts it imports, and this
test holds the code to exactly that line, and the whole to having no import circle: neither at
import time nor through late imports inside functions (which would run, but would still make two
modules or parts that each need the other)."""

from __future__ import annotations

import ast
import graphlib
import re
from pathlib import Path

import pytest

import ingestbench

PACKAGE = Path(ingestbench.__file__).parent
ROOT = "ingestbench"  # CHECKOUT and the version: every part may import the root


def modules() -> dict[str, Path]:
    """{dotted name: file} of every module of the package."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = [ROOT, *path.relative_to(PACKAGE).with_suffix("").parts]
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


MODULES = modules()


def part(module: str) -> str:
    """The part a module belongs to: `ingestbench.server.jar` -> `server`."""
    return module.split(".")[1] if module != ROOT else ROOT


def imports(module: str, at_import_time: bool = False) -> set[str]:
    """The package's modules that `module` imports anywhere (late imports in functions too), or,
    `at_import_time`, in the statements that run when it is imported."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    tree = ast.parse(path.read_text())
    nodes = tree.body if at_import_time else ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{up}.{base}" if base else up
            for alias in node.names:
                name = f"{base}.{alias.name}"
                found.add(name if name in MODULES else base)
    return {m for m in found if m in MODULES and m != module}


def stated(module: str) -> set[str]:
    """The parts (or modules, as `results.records`) a part's docstring says it may import."""
    doc = ast.get_docstring(ast.parse(MODULES[module].read_text())) or ""
    line = re.search(r"^May import: (.*?)(?:\n\n|\Z)", doc, re.M | re.S)
    assert line, f"{module}'s docstring has no line 'May import: ...'; add one"
    text = re.sub(r"\([^)]*\)", "", line.group(1)).replace("\n", " ").strip().rstrip(".")
    if text == "nothing":
        return set()
    return {item.strip() for item in re.split(r",| and ", text) if item.strip()}


def covered_by(target: str, allowed: str) -> bool:
    """`target` is the part or module `allowed` names, or inside it."""
    return target == f"{ROOT}.{allowed}" or target.startswith(f"{ROOT}.{allowed}.")


PARTS = sorted({m for m in MODULES if m.count(".") == 1})


@pytest.mark.parametrize("owner", PARTS)
def test_each_part_imports_exactly_what_its_docstring_states(owner):
    allowed = stated(owner)
    unknown = {a for a in allowed if f"{ROOT}.{a}" not in MODULES}
    assert not unknown, f"{owner} states parts that do not exist: {sorted(unknown)}"
    name = part(owner)
    used: dict[str, str] = {}  # imported module -> an importer, for the message
    for module in (m for m in MODULES if part(m) == name):
        for target in imports(module):
            if part(target) not in (name, ROOT):
                used.setdefault(target, module)

    stray = {t: m for t, m in used.items() if not any(covered_by(t, a) for a in allowed)}
    assert not stray, f"{owner} imports beyond its 'May import' line: " + ", ".join(
        f"{m} imports {t}" for t, m in sorted(stray.items())
    )
    unused = {a for a in allowed if not any(covered_by(t, a) for t in used)}
    assert not unused, f"{owner}'s 'May import' line names what it does not import: {unused}"


#: Packages inside a part that state what of their part they may import ("Within ingest, may
#: import: frames, timing"): so that a part reads bottom-up, its lower layers not reaching up.
LAYERS = sorted(m for m, path in MODULES.items() if m.count(".") == 2 and path.name == "__init__.py"
                and re.search(r"^Within \w+, may import: ", ast.get_docstring(
                    ast.parse(path.read_text())) or "", re.M))  # fmt: skip


def test_ingest_states_its_layers():
    assert {"ingestbench.ingest.frames", "ingestbench.ingest.methods"} <= set(LAYERS)


@pytest.mark.parametrize("layer", LAYERS)
def test_each_layer_imports_only_the_layers_below_it(layer):
    owner = layer.rsplit(".", 1)[0]
    doc = ast.get_docstring(ast.parse(MODULES[layer].read_text())) or ""
    text = re.search(r"^Within \w+, may import: (.*?)\.?$", doc, re.M).group(1)
    allowed = set() if text == "nothing" else {a.strip() for a in text.split(",")}
    stray = {
        f"{m} imports {t}"
        for m in MODULES if m == layer or m.startswith(layer + ".")
        for t in imports(m)
        if t.startswith(owner + ".") and not t.startswith(layer)
        and not any(t == f"{owner}.{a}" or t.startswith(f"{owner}.{a}.") for a in allowed)
    }  # fmt: skip
    assert not stray, f"{layer} reaches beyond its 'Within ... may import' line: {sorted(stray)}"


def _circle(graph: dict[str, set[str]]) -> str | None:
    """One import circle of `graph` as "a -> b -> a", or None."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        return " -> ".join(exc.args[1])
    return None


def _parts_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    return {p: {part(t) for m in MODULES if part(m) == p for t in graph[m]} - {p, ROOT}
            for p in {part(m) for m in MODULES}}  # fmt: skip


@pytest.mark.parametrize("late", [False, True], ids=["at import time", "late imports too"])
def test_no_module_imports_one_that_imports_it_back(late):
    graph = {m: imports(m, at_import_time=not late) for m in MODULES}
    circle = _circle(graph)
    assert circle is None, f"an import circle: {circle}"
    circle = _circle(_parts_graph(graph))
    assert circle is None, f"a circle between parts: {circle}"


def test_late_imports_are_seen():
    """The late check covers function-level imports, which the import-time one leaves out."""
    late = imports("ingestbench.ingest.job")  # its measuring code is imported inside _measure
    assert "ingestbench.ingest.runner" in late
    assert "ingestbench.ingest.runner" not in imports("ingestbench.ingest.job", at_import_time=True)


def test_the_top_holds_at_most_eight_modules_each_with_its_reason():
    """A module stays at the top only if no package owns it, and docs/development.md says why."""
    top = sorted(path.stem for path in PACKAGE.glob("*.py"))
    assert len(top) <= 8, f"{len(top)} modules at the top ({top}): move one into its package"
    doc = (ingestbench.CHECKOUT / "docs" / "development.md").read_text()
    heading = "### What stays at the top of the package"
    assert heading in doc, f"docs/development.md has no section '{heading}'"
    section = doc.split(heading, 1)[1].split("\n#", 1)[0]
    unexplained = [m for m in top if f"- `{m}`:" not in section]
    assert not unexplained, f"docs/development.md does not say why {unexplained} stay at the top"


def test_no_part_of_a_run_imports_the_maintenance_tools():
    """`dev/` maintains the checkout (the lock's conda env, the generated docs): a run never
    needs it, so no other part imports it."""
    importers = {f"{m} imports {t}" for m in MODULES if part(m) != "dev"
                 for t in imports(m) if part(t) == "dev"}  # fmt: skip
    assert not importers, f"the runtime reaches into dev/: {sorted(importers)}"


#: The `ingestbench` command's budget: it declares each subcommand and hands its work to the
#: module that owns it, so a new subcommand costs a few lines here and its work lands there.
CLI_LINES = 450


def test_the_command_stays_within_its_budget():
    lines = len((PACKAGE / "cli.py").read_text().splitlines())
    assert lines <= CLI_LINES, (
        f"cli.py has {lines} lines (budget {CLI_LINES}): move a subcommand's work into the "
        f"module it belongs to"
    )
