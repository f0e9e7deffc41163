"""docs/methods.md's method table and variant matrices, generated so they cannot drift; and the
other texts the method catalogue writes (docs/iot.md's two-tables table, the report's sentence
of methods, configs/full.yaml's variants).

The method table has one row per method of ingestbench.catalogue, in its words; the matrices
count, per config and dataset, the variants and the timed ingestions (variants x repeats) that
`ingestbench variants --config FILE` would list. All are written between marker comments by
`make readme` and checked by its `--check`.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from ingestbench import CHECKOUT
from ingestbench.catalogue import CATALOGUE, METHOD_NAMES
from ingestbench.config import load_config
from ingestbench.datasets import plan

METHODS_DOC = CHECKOUT / "docs" / "methods.md"
IOT_DOC = CHECKOUT / "docs" / "iot.md"
REPORT_WORKFLOW = CHECKOUT / "report" / "workflow.rst"
FULL_CONFIG = CHECKOUT / "configs" / "full.yaml"
#: The configs whose matrices docs/methods.md shows.
MATRIX_CONFIGS = ("config.yaml", "configs/full.yaml")
_GENERATED = "<!-- written by `make readme` from {}; do not edit -->"


def method_table() -> str:
    lines = [
        _GENERATED.format("ingestbench.catalogue"),
        "",
        "| method | what it does | phases it fills |",
        "| --- | --- | --- |",
    ]
    lines += [f"| `{m.name}` | {m.doc} | {m.phases} |" for m in CATALOGUE]
    return "\n".join(lines)


def two_tables_table() -> str:
    """docs/iot.md's table: how each method loads two tables, methods that do it alike in one
    row."""
    rows: dict[str, list[str]] = {}
    for m in CATALOGUE:
        rows.setdefault(m.two_tables, []).append(f"`{m.name}`")
    lines = [_GENERATED.format("ingestbench.catalogue"), "", "| method | two tables |",
             "| --- | --- |"]  # fmt: skip
    lines += [f"| {', '.join(names)} | {text} |" for text, names in rows.items()]
    return "\n".join(lines)


#: How the report's workflow page names each family of methods.
FAMILY_TEXT = {
    "client": "the client methods {}",
    "server": "the server-side imports {}",
    "file": "{}, an ILP text file sent as it is, the wire ceiling",
    "sql": "SQL over PGWire: {}",
}


def report_methods() -> str:
    """report/workflow.rst's sentence of every method, by family."""
    parts = []
    for family, text in FAMILY_TEXT.items():
        names = [f"``{m.name}``" for m in CATALOGUE if m.family == family]
        listed = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]
        parts.append(text.format(listed))
    return "A method is one of " + "; ".join(parts) + " (docs/methods.md says what each does)."


def matrix_table(configs: tuple[str, ...] = MATRIX_CONFIGS) -> str:
    """Per config and dataset: its variants, timed ingestions and variants per method."""
    lines = [
        _GENERATED.format(", ".join(configs)),
        "",
        "| config | dataset | variants | ingestions | variants per method |",
        "| --- | --- | ---: | ---: | --- |",
    ]
    for name in configs:
        config = load_config(CHECKOUT / name)
        by_dataset = dict(plan(config).values())
        for label, variants in by_dataset.items():
            methods = Counter(v.method for v in variants)
            per_method = ", ".join(f"`{m}` {methods[m]}" for m in METHOD_NAMES if m in methods)
            lines.append(
                f"| `{name}` | `{label}` | {len(variants)} | "
                f"{len(variants) * config['repeats']:,} | {per_method} |"
            )
        total = sum(len(v) for v in by_dataset.values())
        lines.append(
            f"| `{name}` | all {len(by_dataset)} | **{total}** | "
            f"**{total * config['repeats']:,}** | {config['repeats']} repeats each |"
        )
    return "\n".join(lines)


def with_blocks(
    text: str, blocks: dict[str, str], path: Path = METHODS_DOC, marker: str = "<!-- {} -->"
) -> str:
    """`text` with the part between the markers `NAME:begin` and `NAME:end` (as `marker` writes
    them: an HTML comment, or an RST or YAML one) replaced by each block."""
    for name, block in blocks.items():
        begin, end = marker.format(f"{name}:begin"), marker.format(f"{name}:end")
        pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
        if not pattern.search(text):
            raise SystemExit(f"{path} has no {begin} … {end} block; put one where it goes.")
        text = pattern.sub(lambda _, b=begin, e=end, x=block: f"{b}\n{x}\n{e}", text)
    return text


def full_variants() -> str:
    """configs/full.yaml's variants: every method with every library, format and transport its
    record allows, and the settings its `sweep` names; methods whose specs agree share one."""
    specs: dict[tuple, list[str]] = {}
    for m in CATALOGUE:
        spec = {"library": list(m.libraries), "format": list(m.formats),
                "transport": list(m.transports)} | {k: list(v) for k, v in m.sweep}  # fmt: skip
        specs.setdefault(tuple((k, tuple(v)) for k, v in spec.items()), []).append(m.name)
    lines = ["variants: # written by `make readme` from ingestbench.catalogue; do not edit"]
    for spec, methods in specs.items():
        items = {"library": None, "method": methods, **{k: list(v) for k, v in spec}}
        fields = ", ".join(f"{k}: {_flow(v)}" for k, v in items.items() if v is not None)
        lines.append(f"  - {{{fields}}}")
    return "\n".join(lines)


def _flow(values: list) -> str:
    """A YAML flow value: one item bare, several in brackets."""
    if len(values) == 1:
        return str(values[0])
    return "[" + ", ".join(str(v) for v in values) + "]"


def full_config(text: str) -> str:
    """configs/full.yaml's text with its variants current."""
    return with_blocks(text, {"variants": full_variants()}, FULL_CONFIG, "# {}")


def iot_doc(text: str) -> str:
    """docs/iot.md's text with its two-tables table current."""
    return with_blocks(text, {"two-tables": two_tables_table()}, IOT_DOC)


def report_workflow(text: str) -> str:
    """report/workflow.rst's text with its sentence of methods current."""
    return with_blocks(text, {"methods": f"\n{report_methods()}\n"}, REPORT_WORKFLOW, ".. {}")


def methods_doc(text: str) -> str:
    """docs/methods.md's text with its generated blocks current."""
    return with_blocks(text, {"methods": method_table(), "matrix": matrix_table()})
