"""The results page in a real browser (Debian's chromium, driven by Playwright), from file://.

Two runs are archived (the committed reference run and a copy with other rates, commit and
label), the page is built from them, and the browser shows what the documents hold: no console
error, no request beyond the file itself, filters and run choices change the table and the chart,
and a variant's numbers equal its document's. The screenshot goes to pytest's tmp_path, never the
repository. Without chromium the tests skip, unless INGESTBENCH_REQUIRE_BROWSER is set (CI).
"""

from __future__ import annotations

import json
import os
import shutil

import pandas as pd
import pytest

from ingestbench.publish.archive import write_document
from ingestbench.publish.site import write_site
from tests.helpers import REPO

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    if os.environ.get("INGESTBENCH_REQUIRE_BROWSER"):
        raise RuntimeError("the browser tests need chromium: apt-get install chromium")
    pytest.skip("no chromium on this machine (apt-get install chromium)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """An archive of two runs and the page built from it."""
    root = tmp_path_factory.mktemp("site")
    archive = root / "archive"
    first = json.loads(write_document(REPO / "results", archive, "reference").read_text())
    other = root / "other"
    shutil.copytree(REPO / "results", other)
    env = json.loads((other / "environment.json").read_text())
    env["workflow"]["git_commit"] = "f" * 40
    env["timestamp_utc"] = "2026-12-01T00:00:00Z"
    (other / "environment.json").write_text(json.dumps(env))
    df = pd.read_csv(other / "summary.csv")
    rates = [c for c in df.columns if c.startswith("rows_per_s_")]
    df[rates] = df[rates] * 0.9
    df.to_csv(other / "summary.csv", index=False)
    second = json.loads(write_document(other, archive, "copy").read_text())
    out = write_site(archive, None, root / "site" / "index.html")
    return out, first, second


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, site):
    out = site[0]
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.problems, page.requests = [], []
    page.on("console", lambda m: m.type in ("error", "warning") and page.problems.append(m.text))
    page.on("pageerror", lambda e: page.problems.append(str(e)))
    page.on("request", lambda r: page.requests.append(r.url))
    page.goto(out.as_uri())
    page.wait_for_selector("body[data-rendered]")
    yield page
    page.close()


def rendered(page, times: int) -> None:
    page.wait_for_selector(f"body[data-rendered='{times}']")


def table_keys(page) -> list[str]:
    return page.eval_on_selector_all("#results tbody tr", "rows => rows.map(r => r.dataset.key)")


def bars(page) -> int:
    return page.locator("#chart svg .mark-rect path").count()


def test_the_page_loads_offline_without_console_errors(page, site, tmp_path):
    assert page.problems == []
    assert page.requests == [site[0].as_uri()]  # nothing but the file itself
    assert page.locator("#runs input").count() == 2
    page.screenshot(path=tmp_path / "site.png", full_page=True)
    assert (tmp_path / "site.png").stat().st_size > 10_000


def test_a_variants_numbers_equal_its_archived_document(page, site):
    _, first, _ = site
    v = next(v for v in first["variants"] if v["variant"] == "pandas-dataframe-parquet-tcp")
    row = page.locator(f"#results tbody tr[data-key='{first['id']}|{v['variant']}']")

    def col(name: str) -> str:
        return row.locator(f"td[data-col='{name}']").inner_text().strip()

    assert col("rate") == f"{v['rows_per_s']['median']:,.0f}"
    assert col("low") == f"{v['rows_per_s']['min']:,.0f} – {v['rows_per_s']['max']:,.0f}"
    assert col("client_cpu") == f"{v['client_cpu_s_per_1m_rows']:.2f}"
    assert col("server_cpu") == f"{v['server_cpu_s_per_1m_rows']:.2f}"
    assert col("rss") == f"{v['client_rss_bytes'] / 2**20:,.0f}"
    assert col("ceiling") == f"{v['ceiling_fraction']:.2f}×"
    assert col("validated") == "yes"


def test_filters_and_run_choices_change_table_and_chart(page, site):
    _, first, second = site
    keys, chart_bars = table_keys(page), bars(page)
    published = [k for k in keys if k.startswith("published|")]
    assert published and chart_bars == len(keys)
    page.locator("fieldset[data-filter='library'] input[value='polars']").uncheck()
    rendered(page, 2)
    left = table_keys(page)
    assert left and len(left) < len(keys) and not [k for k in left if "|polars-" in k]
    assert bars(page) == len(left)
    page.locator(f"#runs input[value='{second['id']}']").uncheck()
    rendered(page, 3)
    assert {k.split("|")[0] for k in table_keys(page)} <= {first["id"], "published"}
    assert page.problems == []


def test_sorting_and_the_run_details(page, site):
    page.locator("th[data-key='client_cpu']").click()
    rendered(page, 2)
    values = page.eval_on_selector_all(
        "#results tbody td[data-col='client_cpu']",
        "cells => cells.map(c => c.textContent).filter(t => t !== '–').map(Number)",
    )
    assert len(values) > 5 and values == sorted(values)  # first click on CPU: cheapest first
    page.locator("#results tbody button.run").first.click()
    details = page.locator("#details-text").inner_text()
    assert "git_commit" in details and "cpu_model" in details and "config" in details
