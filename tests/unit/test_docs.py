"""The README and docs/ stay short, linked and true: the README's figures, docs/configuration.md
and docs/methods.md's method table and matrices are what `make readme` generates from the
committed files, and every other measured figure links the findings or results it comes from."""

from __future__ import annotations

import re

from ingestbench.dev import readme
from tests.helpers import REPO

LINK = re.compile(r"\]\(([^)#]+)(?:#[^)]*)?\)")


def test_the_generated_parts_are_current():
    assert readme.main(["--check"]) == 0, "run `make readme` and commit the result"


def test_the_readme_is_short():
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 300 and len(text.encode()) <= 30_000


def test_every_docs_page_is_linked_and_every_link_resolves():
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    linked = set()
    for page in pages:
        for target in LINK.findall(page.read_text()):
            if target.startswith(("http://", "https://")):
                continue
            path = (page.parent / target).resolve()
            assert path.exists(), f"{page.relative_to(REPO)} links to a missing {target}"
            linked.add(path)
    unlinked = [p.name for p in pages[1:] if p.resolve() not in linked]
    assert not unlinked, f"docs pages no page links to: {unlinked}"


def test_the_configuration_page_names_every_key_of_the_default_config():
    import yaml

    page = (REPO / "docs" / "configuration.md").read_text()
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    for key, value in config.items():
        assert f"| `{key}` |" in page, key
        if isinstance(value, dict):
            assert all(f"| `{key}.{sub}` |" in page for sub in value), key


# ------------------------------------------------------------------ figures cite their source

#: A number with a unit a measurement would have: rates, sizes, times, CPU, shares, ratios.
FIGURE = re.compile(
    r"(?<![\w.`/-])\d[\d,]*(?:\.\d+)?(?:[–-]\d[\d,]*(?:\.\d+)?)?"
    r"(?:\s?(?:rows/s|MiB/s|MB/s|GiB|MiB|GB|MB|KiB|kB|B/row|CPU-s|ms|s|min|h|%)(?![\w/])|×)"
)
#: What a figure must cite in its paragraph: a findings folder or a results file.
SOURCE = re.compile(r"\]\([^)]*(?:findings|results)/")
#: Figures in docs/ that are not measurements: settings, code constants and quoted claims, per
#: page. A new one belongs here only if it is no measurement; a measurement links its findings.
NOT_MEASURED = {
    "README.md": {"30s": "an example config value"},
    "dataset.md": {"10 s": "TSBS's interval", "30s": "an example flag value"},
    "faults.md": {"60 s": "ingestbench.server.table.STALL_S"},
    "iot.md": {
        "1 %": "TSBS's chances (ingestbench.tsbs.trucks.Chances)",
        "5 %": "TSBS's chances",
        "10 %": "TSBS's chances",
        "30 %": "TSBS's chances",
        "2 %": "a property of the generator, asserted by tests/unit/test_trucks.py",
        "0.3 %": "a property of the generator",
    },
    "methodology.md": {
        "20 ms": "the RSS sampler's interval (ingestbench.ingest.runner)",
        "28×": "QuestDB's published claim, quoted",
        "92×": "QuestDB's published claim, quoted",
    },
    "methods.md": {"30 s": "config.yaml's out-of-order lag"},
    "publishing.md": {"10 %": "an example --fail-above value"},
    "scale.md": {
        "28 GB": "100M rows of CSV at disk.FILE_BYTES_PER_ROW",
        "80 B/row": "ingestbench.disk's estimates, as the paragraph says",
        "280 B/row": "ingestbench.disk",
        "490 B/row": "ingestbench.disk",
        "300 B/row": "ingestbench.disk",
        "140 B/row": "ingestbench.disk",
        "15 %": "ingestbench.disk.SAFETY",
        "12 GB": "ingestbench.disk's estimate for the day",
        "8 GB": "ingestbench.disk's estimate",
        "44 GB": "ingestbench.disk's estimate",
        "1 MiB": "ingestbench.server.uploads.UPLOAD_READ_BYTES",
        "16 KiB": "urllib3's read size",
        "1GB": "the default of validation.memory_limit",
    },
}


def paragraphs(text: str) -> list[str]:
    """The prose of a page by paragraph: code blocks and generated blocks left out, and a table
    kept with the paragraph that introduces it."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"<!-- (\w+):begin -->.*?<!-- \1:end -->", "", text, flags=re.S)
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        if block.lstrip().startswith("|") and out:
            out[-1] += "\n" + block
        else:
            out.append(block)
    return out


def unsourced_figures(page: str, text: str) -> list[str]:
    allowed = NOT_MEASURED.get(page, {})
    return [
        figure
        for paragraph in paragraphs(text)
        if not SOURCE.search(paragraph)
        for figure in FIGURE.findall(paragraph)
        if figure not in allowed
    ]


def test_every_measured_figure_in_the_docs_links_its_findings():
    """A figure in docs/ (and the README) comes from a findings folder or a results file, linked
    in its paragraph; docs/configuration.md is the schema's text, generated."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    found = {
        page.name: figures
        for page in pages
        if page.name != "configuration.md"
        and (figures := unsourced_figures(page.name, page.read_text()))
    }
    assert not found, f"figures without a findings/ or results/ link in their paragraph: {found}"


def test_the_figure_check_catches_a_typed_figure_and_accepts_a_linked_one():
    typed = "The server starts in 1.8 s instead of 3.4 CPU-s, at 1,200,000 rows/s (2.0×)."
    assert unsourced_figures("x.md", typed) == ["1.8 s", "3.4 CPU-s", "1,200,000 rows/s", "2.0×"]
    linked = typed + " ([server-start](../findings/2026-11-25-server-start/README.md))"
    assert unsourced_figures("x.md", linked) == []
    table = "Before and after:\n\n| path | before |\n| --- | --- |\n| a | 0.48, 1.00× |"
    assert unsourced_figures("x.md", table) == ["1.00×"]
    assert unsourced_figures("x.md", table.replace(":", ": [f](../findings/f/README.md)", 1)) == []
    assert unsourced_figures("x.md", "```\nsleep 5 s\n```\nTSBS-style keys, 4,000 hosts") == []
    assert unsourced_figures("dataset.md", "epochs 10 s apart") == []


def test_the_schema_has_no_stray_keys():
    """A plain YAML scalar ends at ', ' inside a flow mapping: an unquoted description with a
    comma turns its rest into keys of null value, which the schema then silently carries."""
    import yaml

    from ingestbench.config import SCHEMA_PATH

    def strays(node, path="schema"):
        if isinstance(node, dict):
            for key, value in node.items():
                if value is None and key not in ("default", "const"):
                    yield f"{path}.{key}"
                yield from strays(value, f"{path}.{key}")
        elif isinstance(node, list):
            for i, item in enumerate(node):
                yield from strays(item, f"{path}[{i}]")

    assert list(strays(yaml.safe_load(SCHEMA_PATH.read_text()))) == []


def test_the_method_table_has_one_row_per_method_of_the_registry():
    from ingestbench.dev import methods_doc
    from ingestbench.ingest.methods import METHODS

    assert set(methods_doc.METHOD_TEXT) == set(METHODS)
    page = (REPO / "docs" / "methods.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \|", page.split("<!-- methods:end -->")[0], re.M)
    assert sorted(rows) == sorted(METHODS)


def test_the_matrix_counts_what_ingestbench_variants_lists(capsys):
    """The generated matrix of config.yaml and `ingestbench variants` count the same variants."""
    from ingestbench.cli import main

    assert main(["variants", "--config", str(REPO / "config.yaml")]) == 0
    listed = re.findall(r"^\S+ \((\w+)\): (\d+) variants$", capsys.readouterr().out, re.M)
    assert listed, "ingestbench variants printed no dataset"
    page = (REPO / "docs" / "methods.md").read_text()
    for label, count in listed:
        assert f"| `config.yaml` | `{label}` | {count} |" in page, label
