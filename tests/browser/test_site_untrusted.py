"""The results page treats archive documents as untrusted (they may come by pull request): text in
any field is shown as text, never run or parsed as HTML, and a broken document leaves the others
on the page. In Debian's chromium, from file://; skipped without it unless
INGESTBENCH_REQUIRE_BROWSER is set (CI)."""

from __future__ import annotations

import json

from ingestbench.publish.archive import write_document
from ingestbench.publish.site import write_site
from tests.helpers import REFERENCE

# Ends the data's script element, opens a comment that would swallow the page's own scripts,
# and carries markup that would run or be drawn if it were parsed.
HOSTILE = (
    '</script><!--<script><img src=x onerror="document.body.dataset.pwned=1">'
    "<u class=hostile>underlined</u>&amp;"
)
#: Strings the schema constrains (a constant, the id and the date, both patterns): kept.
CONSTRAINED = {"kind", "id", "date_utc", "status"}  # status: an enum of the schema


def hostile(value, key=None):
    """Every string of a document with the hostile text appended (constrained ones kept)."""
    if isinstance(value, dict):
        return {k: hostile(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [hostile(v, key) for v in value]
    if isinstance(value, str) and key not in CONSTRAINED:
        return value + HOSTILE
    return value


def open_page(browser, path):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.problems = []
    page.on("pageerror", lambda e: page.problems.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-rendered]")
    return page


def test_hostile_text_in_every_field_is_shown_as_text(browser, tmp_path):
    archive = tmp_path / "archive"
    doc = json.loads(write_document(REFERENCE, archive, "reference").read_text())
    bad = hostile(doc)
    (archive / f"{doc['id']}.json").write_text(json.dumps(bad))
    out = write_site(archive, None, tmp_path / "site" / "index.html")
    assert "<!--<script" not in out.read_text().split('id="data">', 1)[1].split("</script>")[0]
    page = open_page(browser, out)
    try:
        assert page.problems == []
        assert page.evaluate("document.body.dataset.pwned") is None  # no markup ran
        assert page.locator("img[src=x], .hostile").count() == 0
        table = page.locator("#matrix").inner_text()
        # the variants' names with the hostile text, as text (those of the dataset it shows)
        assert any(v["variant"] in table for v in bad["variants"])
        assert page.locator("#runs-list").inner_text().count(HOSTILE) >= 1  # the run's label
        # The data the page reads is the document as it was, every string intact.
        script = "JSON.parse(document.getElementById('data').textContent).runs[0]"
        assert page.evaluate(script) == bad
    finally:
        page.close()


def test_a_broken_document_leaves_the_others_on_the_page(browser, tmp_path):
    archive = tmp_path / "archive"
    first = write_document(REFERENCE, archive, "reference")
    second = json.loads(first.read_text())
    second["id"] = second["id"].replace("_reference", "_copy")
    second["label"] = "copy"
    (archive / f"{second['id']}.json").write_text(json.dumps(second))
    (archive / "broken.json").write_text(first.read_text()[:300])  # a truncated document
    out = write_site(archive, None, tmp_path / "site" / "index.html")
    page = open_page(browser, out)
    try:
        assert page.problems == []
        assert page.locator("#runs-list input").count() == 2
    finally:
        page.close()
