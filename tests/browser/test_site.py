"""The results page in a real browser (Debian's chromium, driven by Playwright), from file://.

Two runs of one config on one machine are archived: the committed reference run and a later
copy (another commit) in which one variant was planted at half its rates. The page is built from
them and opened at 1280 × 800, a laptop's screen: the first screen answers (the newest run's
leading variants, their numbers, the legend), nothing is wider than the window, the selection
lives in the address and comes back from it, the numbers equal the documents', and the history
view marks the planted slowdown and nothing else. Screenshots go to pytest's tmp_path, never
the repository. Without chromium the tests skip, unless INGESTBENCH_REQUIRE_BROWSER is set (CI).
"""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from ingestbench.publish.archive import write_document
from ingestbench.publish.site import write_site
from tests.helpers import OWN, OWN_PROFILE, REFERENCE, with_own_data

LAPTOP = {"width": 1280, "height": 800}
DATASET = "cpu-s4000-e250-seed42"
SLOWED = "pandas-dataframe-parquet-tcp"  # its min-max range is well under half its median


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """An archive of the reference run and a later run with SLOWED at half its rates, and the
    page built from it."""
    root = tmp_path_factory.mktemp("site")
    archive = root / "archive"
    first = json.loads(write_document(REFERENCE, archive, "reference").read_text())
    other = root / "other"
    shutil.copytree(REFERENCE, other)
    env = json.loads((other / "environment.json").read_text())
    env["workflow"]["git_commit"] = "f" * 40
    env["timestamp_utc"] = "2026-12-01T00:00:00Z"
    (other / "environment.json").write_text(json.dumps(env))
    df = pd.read_csv(other / "summary.csv")
    rates = [c for c in df.columns if c.startswith("rows_per_s_")]
    slowed = (df["dataset"] == DATASET) & (df["variant"] == SLOWED)
    df.loc[slowed, rates] = df.loc[slowed, rates] * 0.5
    df.to_csv(other / "summary.csv", index=False)
    second = json.loads(write_document(other, archive, "reference").read_text())
    out = write_site(archive, None, root / "site" / "index.html")
    return out, first, second


def open_page(browser, url: str):
    page = browser.new_page(viewport=LAPTOP)
    page.problems, page.requests = [], []
    page.on("console", lambda m: m.type in ("error", "warning") and page.problems.append(m.text))
    page.on("pageerror", lambda e: page.problems.append(str(e)))
    page.on("request", lambda r: page.requests.append(r.url))
    page.goto(url)
    page.wait_for_selector("body[data-rendered]")
    return page


@pytest.fixture
def page(browser, site):
    page = open_page(browser, site[0].as_uri())
    yield page
    page.close()


def rendered(page, times: int) -> None:
    page.wait_for_selector(f"body[data-rendered='{times}']")


#: The matrix's cells that hold a rate (an unsupported variant's cell names a note instead).
MEASURED_CELLS = "#matrix tbody td.cell:not(.empty):not(.unsupported)"


def variants(doc, dataset=DATASET) -> list[dict]:
    """The dataset's measured variants (the ranked ones; an unsupported one has no rate)."""
    return [v for v in doc["variants"]
            if v["dataset"] == dataset and v.get("status", "measured") == "measured"]  # fmt: skip


def matrix_rows(page) -> list[str]:
    return page.eval_on_selector_all("#matrix tbody tr", "rows => rows.map(r => r.dataset.variant)")


def matrix_runs(page) -> list[str]:
    return page.eval_on_selector_all(
        "#matrix thead th[data-sort]", "ths => ths.map(t => t.dataset.sort)"
    )


def on_first_screen(page, selector: str) -> bool:
    box = page.locator(selector).first.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= LAPTOP["height"]


def overflow(page) -> int:
    """How far the page reaches beyond the window's width (0 when it fits)."""
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


def test_the_page_loads_offline_without_console_errors(page, site, tmp_path):
    assert page.problems == []
    assert page.requests == [site[0].as_uri()]  # nothing but the file itself
    assert page.locator("#runs-list input").count() == 2
    page.screenshot(path=tmp_path / "site.png", full_page=True)
    assert (tmp_path / "site.png").stat().st_size > 10_000


def test_the_first_screen_answers_with_the_newest_runs_leading_variants(page, site):
    _, _, second = site
    assert matrix_runs(page) == ["variant", second["id"]]  # the newest run alone
    leading = sorted(variants(second), key=lambda v: -v["rows_per_s"]["median"])[:5]
    assert matrix_rows(page)[:5] == [v["variant"] for v in leading]
    for v in leading:
        cell = f"#matrix tr[data-variant='{v['variant']}'] td[data-run='{second['id']}']"
        assert on_first_screen(page, cell)
        number = page.locator(f"{cell} .num").inner_text()
        assert number == f"{v['rows_per_s']['median']:,.0f}"
    answer = page.locator("#answer").inner_text()
    best = next(v for v in leading if v["method"] != "ilp_file")
    assert best["variant"] in answer and f"{best['rows_per_s']['median']:,.0f}" in answer
    assert "wire ceiling" in answer
    for legend in (
        "#matrix-legend",
        "#answer .swatch",
        f"#matrix th[data-sort='{second['id']}'] .swatch",
    ):
        assert on_first_screen(page, legend), legend
    assert page.locator("#runs-list input:checked").count() == 1 and on_first_screen(
        page, "#runs-list label .swatch"
    )


def test_nothing_is_wider_than_the_window(page, site):
    assert overflow(page) == 0
    for box in page.locator("#runs-list input").all():
        box.check()
    page.locator("#published").check()
    rendered(page, 3)
    assert len(matrix_runs(page)) == 3 and overflow(page) == 0
    page.locator("input[name='view'][value='history']").check()
    rendered(page, 4)
    assert overflow(page) == 0
    assert page.problems == []


def test_a_cells_numbers_equal_its_archived_document(page, site):
    _, _, second = site
    v = next(v for v in variants(second) if v["variant"] == "polars-dataframe-parquet-tcp")
    cell = page.locator(f"#matrix tr[data-variant='{v['variant']}'] td[data-run='{second['id']}']")
    rate = v["rows_per_s"]
    best = max(x["rows_per_s"]["median"] for x in variants(second) if x["method"] != "ilp_file")
    spread = (rate["max"] - rate["min"]) / 2 / rate["median"]
    assert cell.locator(".num").inner_text() == f"{rate['median']:,.0f}"
    assert cell.locator(".spread").inner_text() == f"±{100 * spread:.0f}%"
    assert cell.locator(".times").inner_text() == f"×{best / rate['median']:.2f}"
    assert cell.locator(".ceil").inner_text().strip() == f"· {100 * v['ceiling_fraction']:.0f} %"
    title = cell.get_attribute("title")
    assert f"min {rate['min']:,.0f}, max {rate['max']:,.0f}" in title
    assert f"client CPU-s per 1M rows {v['client_cpu_s_per_1m_rows']:.2f}" in title
    assert "validated: yes" in title


def test_a_selection_changes_the_url_and_reopening_it_restores_it(browser, page, site):
    first_id, second_id = site[1]["id"], site[2]["id"]
    before = page.url
    page.locator(f"#runs-list input[value='{first_id}']").check()
    rendered(page, 2)
    page.locator("#more summary").click()
    page.locator("fieldset[data-filter='library'] input[value='polars']").uncheck()
    rendered(page, 3)
    page.locator(f"#matrix th[data-sort='{first_id}']").click()  # a run's column: fastest first
    rendered(page, 4)
    page.locator("#shade").select_option("row")
    rendered(page, 5)
    url = page.url
    assert url != before and f"runs={second_id}%2C{first_id}" in url and "library=" in url
    rows, runs = matrix_rows(page), matrix_runs(page)
    assert runs == ["variant", second_id, first_id] and rows
    assert not [r for r in rows if r.startswith("polars-")]
    rates = page.eval_on_selector_all(
        f"#matrix tbody td[data-run='{first_id}'] .num",
        "cells => cells.map(c => Number(c.textContent.replaceAll(',', '')))",
    )
    assert rates == sorted(rates, reverse=True)

    again = open_page(browser, url)
    try:
        assert matrix_rows(again) == rows and matrix_runs(again) == runs
        assert again.locator("#runs-list input:checked").count() == 2
        assert not again.locator(
            "fieldset[data-filter='library'] input[value='polars']"
        ).is_checked()
        assert again.locator("#shade").input_value() == "row"
        assert (
            again.locator(f"#matrix th[data-sort='{first_id}']")
            .get_attribute("class")
            .endswith("desc")
        )
        assert again.url == url and again.problems == []
    finally:
        again.close()


def test_the_charts_follow_the_selection_with_their_legend_above(page, site):
    """The costs' charts (the rates are the matrix's own bars: no chart repeats them)."""

    def bars() -> int:
        return page.locator("#costs svg .mark-rect path").count()

    cells = page.locator(MEASURED_CELLS).count()
    assert bars() == 3 * cells
    assert page.locator("#chart, #chart-legend").count() == 0
    assert page.locator("#costs-legend .key").count() == 1
    legend, chart = (
        page.locator("#costs-legend").bounding_box(),
        page.locator("#costs").bounding_box(),
    )
    assert legend["y"] + legend["height"] <= chart["y"]
    page.locator(f"#runs-list input[value='{site[1]['id']}']").check()
    rendered(page, 2)
    assert page.locator("#costs-legend .key").count() == 2
    assert bars() == 3 * page.locator(MEASURED_CELLS).count() > 3 * cells


def test_the_run_details(page):
    page.locator("#matrix thead button.run").first.click()
    details = page.locator("#details-text").inner_text()
    assert "git_commit" in details and "cpu_model" in details and "config" in details


def test_the_history_view_marks_the_planted_slowdown(browser, page, site):
    _, first, second = site
    page.locator("input[name='view'][value='history']").check()
    rendered(page, 2)
    assert "view=history" in page.url
    changes = page.locator("#changes li.change")
    assert changes.count() == 1
    change = changes.first
    assert change.get_attribute("data-variant") == SLOWED
    assert change.get_attribute("data-run") == second["id"]
    assert "slower ×0.50" in change.inner_text()
    steps = page.eval_on_selector_all(
        f"#history tbody td[data-run='{second['id']}']",
        "cells => cells.map(c => [c.closest('tr').dataset.variant, c.dataset.step])",
    )
    assert len(steps) == len(variants(first))
    assert [v for v, step in steps if step in ("slower", "faster")] == [SLOWED]
    assert dict(steps)[SLOWED] == "slower"
    assert page.locator(f"#history tr[data-variant='{SLOWED}'] td.slower .mark").inner_text() == (
        " ▼×0.50"
    )
    again = open_page(browser, page.url)  # the history view comes back from its address
    try:
        assert again.locator("#history-view").is_visible()
        assert again.locator("#changes li.change").all_inner_texts() == [change.inner_text()]
    finally:
        again.close()
    # The chart's layer of marked steps holds one point: the planted slowdown, ▼.
    marked = page.eval_on_selector_all(
        "#history-chart svg g.layer_1_marks path", "ps => ps.map(p => p.getAttribute('aria-label'))"
    )
    assert len(marked) == 1 and f"variant: {SLOWED}" in marked[0] and "step: slower" in marked[0]
    assert page.problems == []


def test_one_run_alone_opens_and_says_why_it_has_no_history(browser, tmp_path):
    write_document(REFERENCE, tmp_path / "archive", "reference")
    out = write_site(tmp_path / "archive", None, tmp_path / "index.html")
    page = open_page(browser, out.as_uri() + "#view=history")
    try:
        assert page.locator("#no-history").is_visible()
        assert "archive another run" in page.locator("#no-history").inner_text()
        page.locator("input[name='view'][value='runs']").check()
        rendered(page, 2)
        doc = json.loads(next((tmp_path / "archive").glob("*.json")).read_text())
        assert len(matrix_rows(page)) == len(
            [v for v in doc["variants"] if v["dataset"] == DATASET]
        )
        assert overflow(page) == 0 and page.problems == []
    finally:
        page.close()


def test_own_data_is_named_and_an_unsupported_variant_shows_its_reason(browser, tmp_path):
    """Own data named like the summary names it (label, rows, columns, bytes); a variant that
    cannot load it is a row with its reason in its tooltip and a note under the matrix (not in
    the cell, which would stretch it), never ranked or charted."""
    shutil.copytree(REFERENCE, tmp_path / "r")
    with_own_data(tmp_path / "r")
    out = write_site(tmp_path / "archive", tmp_path / "r", tmp_path / "index.html")
    page = open_page(browser, out.as_uri() + f"#dataset={OWN['dataset']}")
    try:
        option = page.locator(f"#dataset option[value='{OWN['dataset']}']").inner_text()
        assert option.startswith("mine: your data, 500 rows, 4 columns, 9.0 MiB")
        cell = page.locator(f"#matrix tr[data-variant='{OWN['unsupported']}'] td.cell")
        assert cell.locator(".badge").inner_text() == "unsupported"
        assert cell.locator(".note-ref").inner_text() == "1"
        assert OWN["reason"] in cell.get_attribute("title")
        assert OWN["reason"] not in cell.inner_text()
        note = page.locator("#matrix-notes li[data-note='1']").inner_text()
        assert note == f"{OWN['unsupported']} cannot load this data: {OWN['reason']}"
        measured = page.locator(MEASURED_CELLS).first.bounding_box()
        assert cell.bounding_box()["height"] <= measured["height"]  # no taller than a rate's
        assert matrix_rows(page)[-1] == OWN["unsupported"]  # unranked: last
        assert OWN["unsupported"] not in page.locator("#answer").inner_text()
        assert overflow(page) == 0 and page.problems == []
    finally:
        page.close()


def test_a_datasets_profile_and_recommendation_show_under_the_answer(browser, tmp_path):
    """The profile the summary wrote beside it (profiles.json) reaches the page as sentences,
    for the dataset selected; a dataset without one shows none."""
    shutil.copytree(REFERENCE, tmp_path / "r")
    with_own_data(tmp_path / "r")
    (tmp_path / "r" / "profiles.json").write_text(json.dumps({OWN["dataset"]: OWN_PROFILE}))
    out = write_site(tmp_path / "archive", tmp_path / "r", tmp_path / "index.html")
    page = open_page(browser, out.as_uri() + f"#dataset={OWN['dataset']}")
    try:
        text = page.locator("#profile").inner_text()
        assert "Profile: 500 rows; bytes per row: Parquet 120.0, ILP 300.0 (estimate)" in text
        assert "90.0% of rows arrive behind the running maximum timestamp" in text
        assert text.endswith("Recommendation: use server_parquet: 1.6× the best client path.")
        assert on_first_screen(page, "#profile") and overflow(page) == 0 and page.problems == []
        page.select_option("#dataset", DATASET)
        rendered(page, 2)
        assert page.locator("#profile").is_hidden()
    finally:
        page.close()
