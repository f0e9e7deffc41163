"""The README and docs/ stay short, linked and true: the README's figures, docs/configuration.md
and docs/methods.md's method table and matrices are what `make readme` generates from the
committed files, and every other measured figure links the findings or results it comes from."""

from __future__ import annotations

import re
from pathlib import Path

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
SOURCE = re.compile(r"\]\(([^)#]*(?:findings|results)/[^)#]*)(?:#[^)]*)?\)")
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
#: Figures in docs/ that are not measurements: settings, code constants and quoted claims, per
#: page. A new one belongs here only if it is no measurement; a measurement links its findings.
NOT_MEASURED = {
    "README.md": {"30s": "an example config value"},
    "dataset.md": {"10 s": "TSBS's interval", "30s": "an example flag value"},
    "faults.md": {
        "60 s": "ingestbench.server.table.STALL_S",
        "0.01 s": "ingestbench.delivery.matrix.POSITION_S",
    },
    "development.md": {"16 MiB": "ingestbench.own.describe.CSV_INFER_BYTES"},
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
        "2 MiB": "ingestbench.ingest.methods.ilp_file.BLOCK_BYTES",
        "16 MiB": "ingestbench.ingest.methods.ilp_file.BLOCK_BYTES",
        "28×": "QuestDB's published claim, quoted",
        "92×": "QuestDB's published claim, quoted",
        "5 s": "paced.lead_in_s's default (schemas/config.schema.yaml)",
        "10 s": "paced.step_s's default (schemas/config.schema.yaml)",
        "5 %": "ingestbench.paced.latency.BACKLOG_SHARE",
        "0.01 s": "ingestbench.paced.latency.RISE_SLOPE",
        "1 %": "ingestbench.paced.latency.RISE_SLOPE, as a share of the time",
    },
    "methods.md": {"30 s": "config.yaml's out-of-order lag"},
    "own-data.md": {
        "2.4×": "an example of the recommendation's wording",
        "1.6×": "an example of the recommendation's wording",
        "1.1×": "ingestbench.results.profile_text.WORTH",
        "10 %": "ten times ingestbench.results.profile_text.LATE_NOTABLE",
    },
    "publishing.md": {"10 %": "an example --fail-above value"},
    "scale.md": {
        "28 GB": "100M rows of CSV at disk.FILE_BYTES_PER_ROW",
        "80 B/row": "ingestbench.storage.disk's estimates, as the paragraph says",
        "280 B/row": "ingestbench.storage.disk",
        "490 B/row": "ingestbench.storage.disk",
        "300 B/row": "ingestbench.storage.disk",
        "140 B/row": "ingestbench.storage.disk",
        "15 %": "ingestbench.storage.disk.SAFETY",
        "12 GB": "ingestbench.storage.disk's estimate for the day",
        "8 GB": "ingestbench.storage.disk's estimate",
        "44 GB": "ingestbench.storage.disk's estimate",
        "1 MiB": "ingestbench.server.uploads.UPLOAD_READ_BYTES",
        "16 KiB": "urllib3's read size",
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


def source_text(page: Path, targets: list[str]) -> str:
    """The text of every file in the folders the links point into (a findings folder's README,
    output.txt and CSVs; a results folder's summary)."""
    folders = {(page.parent / target).resolve() for target in targets}
    files = {f for d in folders for f in ([d] if d.is_file() else [])}
    files |= {f for d in folders for f in (d if d.is_dir() else d.parent).glob("*") if f.is_file()}
    return "".join(f.read_text(errors="ignore") for f in sorted(files) if f.suffix in TEXTS)


TEXTS = (".md", ".txt", ".csv", ".json")


def unsourced_figures(page: Path, text: str) -> list[str]:
    """The figures of `page` that no findings or results file it links in their paragraph
    holds (each number of the figure must appear in one of them)."""
    allowed = NOT_MEASURED.get(page.name, {})
    found = []
    for paragraph in paragraphs(text):
        figures = [f for f in FIGURE.findall(paragraph) if f not in allowed]
        targets = SOURCE.findall(paragraph)
        sources = source_text(page, targets) if figures and targets else ""
        found += [f for f in figures if not all(holds(sources, n) for n in NUMBER.findall(f))]
    return found


def holds(text: str, number: str) -> bool:
    """`number` stands in `text` as a number of its own (with or without thousands commas)."""
    spellings = {number, number.replace(",", "")}
    return any(re.search(rf"(?<![\d.]){re.escape(s)}(?!\d|\.\d)", text) for s in spellings)


def test_every_measured_figure_in_the_docs_links_its_findings():
    """A figure in docs/ (and the README) comes from a findings folder or a results file, linked
    in its paragraph; docs/configuration.md is the schema's text, generated."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    found = {
        page.name: figures
        for page in pages
        if page.name != "configuration.md"
        and (figures := unsourced_figures(page, page.read_text()))
    }
    assert not found, f"figures no findings/ or results/ file linked beside them holds: {found}"


def test_the_figure_check_catches_a_typed_figure_and_accepts_a_sourced_one():
    page = REPO / "docs" / "x.md"
    link = " ([server-start](../findings/2026-11-25-server-start/README.md))"
    typed = "The server starts in 1.8 s instead of 3.4 CPU-s, at 1,200,000 rows/s (2.0×)."
    figures = ["1.8 s", "3.4 CPU-s", "1,200,000 rows/s", "2.0×"]
    assert unsourced_figures(page, typed) == figures
    assert unsourced_figures(page, typed + link) == figures  # linked, but not what it holds
    held = "It answers after 2.17 → 1.28 s, with 2.30 CPU-s."
    assert unsourced_figures(page, held) == ["1.28 s", "2.30 CPU-s"]
    assert unsourced_figures(page, held + link) == []
    table = "Before and after:\n\n| path | before |\n| --- | --- |\n| a | 0.48, 2.17× |"
    assert unsourced_figures(page, table) == ["2.17×"]
    assert unsourced_figures(page, table.replace(":", link, 1)) == []
    assert unsourced_figures(page, "```\nsleep 5 s\n```\nTSBS-style keys, 4,000 hosts") == []
    assert unsourced_figures(REPO / "docs" / "dataset.md", "epochs 10 s apart") == []


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
    from ingestbench.ingest.methods import METHODS

    page = (REPO / "docs" / "methods.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \|", page.split("<!-- methods:end -->")[0], re.M)
    assert sorted(rows) == sorted(METHODS)


def test_the_matrix_counts_what_ingestbench_variants_lists(capsys):
    """The generated matrix of config.yaml and `ingestbench variants` count the same variants."""
    from ingestbench.cli import main

    assert main(["variants", "--config", str(REPO / "config.yaml")]) == 0
    listed = re.findall(r"^\S+ \((\w+)\): (\d+) variants?$", capsys.readouterr().out, re.M)
    assert listed, "ingestbench variants printed no dataset"
    page = (REPO / "docs" / "methods.md").read_text()
    for label, count in listed:
        assert f"| `config.yaml` | `{label}` | {count} |" in page, label


def test_every_allowed_figure_is_still_on_its_page():
    """The allow-list holds no figure a page no longer has (it would let a measurement in)."""
    for name, allowed in NOT_MEASURED.items():
        page = REPO / name if name == "README.md" else REPO / "docs" / name
        on_page = {f for p in paragraphs(page.read_text()) for f in FIGURE.findall(p)}
        assert set(allowed) <= on_page, (name, set(allowed) - on_page)


def test_the_pages_that_list_the_methods_name_every_one():
    """Hand-written lists of the methods (the iot page's two-table table, the report's intro)."""
    from ingestbench.ingest.methods import METHODS

    for page in (REPO / "docs" / "iot.md", REPO / "report" / "workflow.rst"):
        text = page.read_text()
        missing = [m for m in METHODS if not re.search(rf"``?{m}``?", text)]
        assert not missing, f"{page.relative_to(REPO)} does not name the methods {missing}"


def test_every_config_key_the_docs_name_is_in_the_schema():
    """`questdb.jar`, `validation.keep_export`, `datasets[].dedup`...: a key a page names in code
    style is one that configuration.md (the schema) has; file names like `variants.py` aside."""
    keys = set(re.findall(r"^\| `([^`]+)` \|", (REPO / "docs/configuration.md").read_text(), re.M))
    tops = {key.split(".")[0].removesuffix("[]") for key in keys}
    files = (".py", ".csv", ".md", ".json", ".png", ".yaml", ".html", ".smk")
    named = re.compile(r"`([a-z_]+(?:\[\])?(?:\.[a-z_]+)+)(?::[^`]*)?`")
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        unknown = [
            key
            for key in named.findall(page.read_text())
            if key.split(".")[0].removesuffix("[]") in tops
            and not key.endswith(files)
            and key not in keys
        ]
        assert not unknown, f"{page.name} names config keys the schema does not have: {unknown}"
