"""The browser every test of this folder drives: Debian's chromium through Playwright. Without
chromium (or Playwright) the tests that use it skip, unless INGESTBENCH_REQUIRE_BROWSER is set
(CI), where a missing browser is an error."""

from __future__ import annotations

import os
import shutil

import pytest


@pytest.fixture(scope="module")
def browser():
    chromium_path = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium_path is None:
        if os.environ.get("INGESTBENCH_REQUIRE_BROWSER"):
            raise RuntimeError("the browser tests need chromium: apt-get install chromium")
        pytest.skip("no chromium on this machine (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=chromium_path, args=["--no-sandbox"])
        yield chromium
        chromium.close()
