"""The results page's answers and sections in a real browser: a run of two servers with paced
and delivery parts (tests.helpers.results_with_every_part, archived by the real hooks) shows
one answer per section, each linking to it, the servers side by side, the rate each path
sustains and the delivery matrix; a run without them shows none. Without chromium the tests
skip (browser/conftest.py)."""

from __future__ import annotations

import pytest

from ingestbench.publish.site import write_site
from tests.helpers import REFERENCE, open_page, results_with_every_part


@pytest.fixture(scope="module")
def page(browser, tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    results = results_with_every_part(root / "results", older="8.2.0")
    (root / "archive").mkdir()
    path = write_site(root / "archive", results, root / "index.html")
    page = open_page(browser, path.as_uri())
    yield page
    page.close()


def test_one_answer_per_section_each_linking_to_it(page):
    answers = page.locator("#answers li")
    assert answers.count() == 3
    text = page.locator("#answers").inner_text()
    assert "Against QuestDB 9.3.4's defaults, the median of each server's rows/s ratios" in text
    assert "8.2.0 0.50× (30 paths; " in text and "beyond the noise: `none-server_parquet" in text
    assert "up to 1,000 rows/s, use pandas-dataframe-parquet-http with flush `arrival`" in text
    assert "dataframe-tcp lost or altered rows under a fault (QuestDB 9.3.4)" in text
    assert text.count("(amd-epyc-2c-24gib, 2026-11-27, current)") == 3  # each answer's run
    hash_before = page.evaluate("location.hash")
    assert page.locator("#delivery-section").bounding_box()["y"] > 800  # below the first screen
    page.locator("#answers a[href='#delivery-section']").click()
    assert page.evaluate("location.hash") == hash_before  # the selection stays in the address
    assert 0 <= page.locator("#delivery-section").bounding_box()["y"] < 800  # scrolled to it
    assert page.problems == []


def test_the_servers_side_by_side_as_ratios_with_the_spread(page):
    section = page.locator("#servers-section")
    assert "Versions × paths" in section.inner_text()
    head = section.locator("thead").first.inner_text()
    assert "QuestDB 8.2.0" in head and "QuestDB 9.3.4" in head
    assert section.locator("td", has_text="0.50×").count() > 0
    # the matrix keys each variant by its server in a run of several
    assert page.locator("#matrix th.variant", has_text="@ 8.2.0").count() > 0


def test_the_stream_and_delivery_sections_show_their_parts(page):
    paced = page.locator("#paced-section")
    row = paced.locator("tbody tr").first.inner_text()
    assert "pandas-dataframe-parquet-http" in row and "1,000" in row and "arrival" in row
    assert "At your rate: up to 1,000 rows/s" in paced.inner_text()
    page.wait_for_selector("#paced-chart-0 svg")  # latency against the offered rate
    steps = paced.locator("details")
    assert steps.locator("summary").inner_text() == "Every step (2)"
    assert not steps.locator("table").is_visible()  # behind its toggle
    steps.locator("summary").click()
    assert steps.locator("tbody tr").count() == 2 and "fail" in steps.inner_text()
    delivery = page.locator("#delivery-section")
    lost = delivery.locator("td.v-lost")
    assert lost.inner_text() == "lost 7 unknown (silent)"
    assert lost.get_attribute("title") == "fault at 0.25 s: lost 7 unknown (silent)"
    assert delivery.locator("td.v-duplicates").inner_text() == "duplicates 5"
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") == 0


def test_a_run_without_them_shows_no_section(browser, tmp_path):
    path = write_site(tmp_path / "none", REFERENCE, tmp_path / "index.html")
    page = open_page(browser, path.as_uri())
    try:
        assert page.locator("#answers").is_hidden()
        assert page.locator("section.experiment:not([hidden])").count() == 0
    finally:
        page.close()


def test_the_archived_runs_of_the_axis_each_show_their_comparison(browser, tmp_path):
    """The committed versions and settings runs (archive/, each config run twice): one answer
    and one table each, from the newest run, the answer saying what held in both."""
    from tests.helpers import REPO

    path = write_site(REPO / "archive", None, tmp_path / "index.html")
    page = open_page(browser, path.as_uri())
    try:
        answers = page.locator("#answers li[data-section='servers-section']")
        assert answers.count() == 2
        assert all(t.startswith("Servers side by side: In 2 runs against QuestDB 9.3.4")
                   for t in answers.all_inner_texts())  # fmt: skip
        text = page.locator("#servers-section").inner_text()
        assert "Versions × paths" in text and "QuestDB 7.3.10" in text
        assert "Settings × paths" in text and "QuestDB 9.3.4-commitsync" in text
        # what held replaces the newest run's own recommendation, which names settings
        assert "No settings set beat the defaults in every run: keep the defaults." in text
        assert "beat 9.3.4's defaults beyond the noise on" not in text
    finally:
        page.close()


def test_the_page_opens_on_the_ways_to_load_not_on_an_axis_or_experiment_run(browser, tmp_path):
    """The committed archive's newest runs are a delivery run (its backfill a 20,000-row
    control) and the server axis's, on the default run's dataset: the page opens on the newest
    run of the ways to load, of one server and no experiment, its fastest cell a way to load."""
    from tests.helpers import REPO

    path = write_site(REPO / "archive", None, tmp_path / "index.html")
    page = open_page(browser, path.as_uri())
    try:
        ticked = page.locator("#runs-list input:checked")
        assert ticked.count() == 1
        label = page.locator("#runs-list label:has(input:checked)").inner_text()
        assert "servers)" not in label and "· default" in label
        dataset = page.locator("#dataset").input_value()
        assert dataset == "cpu-s4000-e250-seed42", dataset  # the default run's first
    finally:
        page.close()
