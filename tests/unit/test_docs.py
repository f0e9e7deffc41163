"""The README and docs/ stay short, linked and true: the README's figures and
docs/configuration.md are what `make readme` generates from the committed files."""

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
