"""A screenshot of the results page's first screen on a laptop (1280 × 800) in the system
chromium: `python -m ingestbench.publish.screenshot PAGE PNG [DATASET]` (make site-screenshot
writes the README's image, opened on the default benchmark's first dataset: the newest archived
run may be an experiment's, with a small dataset of its own)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from ingestbench.errors import UserError, run_reporting_user_errors


def screenshot(page_path: Path, png: Path, dataset: str | None = None, width: int = 1280,
               height: int = 800) -> Path:  # fmt: skip
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise UserError("there is no chromium on this machine; install it (apt-get install "
                        "chromium), then rerun.")  # fmt: skip
    png.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            fragment = f"#dataset={dataset}" if dataset else ""  # the page's own address
            page.goto(Path(page_path).resolve().as_uri() + fragment)
            page.wait_for_selector("body[data-rendered]")
            page.screenshot(path=png)
        finally:
            browser.close()
    return png


if __name__ == "__main__":
    dataset = sys.argv[3] if len(sys.argv) > 3 else None
    run_reporting_user_errors(lambda: print(screenshot(Path(sys.argv[1]), Path(sys.argv[2]),
                                                       dataset)))  # fmt: skip
