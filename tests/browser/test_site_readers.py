"""The results page's readers section in a real browser: shown for the committed run of
configs/readers.yaml (its over-time chart drawn, a row per variant with its rates per reader
count), hidden for a run without readers. Without chromium the tests skip (browser/conftest.py).
"""

from __future__ import annotations

import json
import shutil

import pytest

from ingestbench.publish.site import write_site
from tests.helpers import REPO, open_page

DATASET = "cpu-s4000-e2500-seed42"  # configs/readers.yaml's 10M rows


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The page of the archived readers run and the default run beside it."""
    root = tmp_path_factory.mktemp("site")
    archive = root / "archive"
    archive.mkdir()
    docs = [p for p in sorted((REPO / "archive").glob("*.json"))
            if p.stem.endswith(("_readers", "_default"))][-2:]  # fmt: skip
    for path in docs:
        shutil.copy(path, archive)
    readers = next(json.loads(p.read_text()) for p in docs if p.stem.endswith("_readers"))
    return write_site(archive, None, root / "index.html"), readers


def test_a_run_with_readers_shows_its_series_and_figures(browser, site):
    path, readers = site
    page = open_page(browser, f"{path.as_uri()}#dataset={DATASET}&runs={readers['id']}")
    try:
        assert page.locator("#readers-section").is_visible()
        page.wait_for_selector("#over-time svg")
        rows = page.locator("#readers-table tr")
        with_readers = [v for v in readers["variants"] if "readers" in v]
        assert rows.count() == 1 + len(with_readers)
        head = page.locator("#readers-table tr").first.inner_text()
        assert "8 readers: rows/s (slowdown)" in head
        assert "Cores: not pinned" in page.locator("#readers-note").inner_text()
        assert not page.problems, page.problems
    finally:
        page.close()


def test_a_run_without_readers_hides_the_section(browser, site):
    path, _ = site
    page = open_page(browser, path.as_uri() + "#dataset=cpu-s4000-e250-seed42")
    try:
        assert page.locator("#readers-section").is_hidden()
        assert not page.problems, page.problems
    finally:
        page.close()
