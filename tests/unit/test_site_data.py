"""What the results page is given: the history of each machine and config as
ingestbench.publish.history computes it (runs in commit order, a verdict on every step), and
charts that read the page's selection."""

from __future__ import annotations

import copy
import json

import pytest

from ingestbench.charts.registry import page_charts, page_specs
from ingestbench.publish.archive import build_document
from ingestbench.publish.history import series
from ingestbench.publish.site import history_groups, page
from ingestbench.publish.specs import cost_charts
from tests.helpers import REFERENCE


@pytest.fixture(scope="module")
def doc():
    return build_document(REFERENCE, "reference")


def _run(doc, commit: str, date: str, factor: float, config: str | None = None) -> dict:
    out = copy.deepcopy(doc)
    out["workflow"]["git_commit"] = commit * 40
    out["workflow"]["config_hash"] = config or doc["workflow"]["config_hash"]
    out["date_utc"] = date
    out["id"] = f"{date[:10]}_{out['machine']['id']}_{commit * 7}_reference"
    for v in out["variants"]:
        v["rows_per_s"] = {k: None if x is None else x * factor for k, x in v["rows_per_s"].items()}
    return out


def test_the_history_groups_are_the_history_commands_series_in_commit_order(doc):
    runs = [
        _run(doc, "a", "2026-01-01T00:00:00Z", 1.0),
        _run(doc, "b", "2026-01-02T00:00:00Z", 1.0),
        _run(doc, "c", "2026-01-03T00:00:00Z", 0.5),
        _run(doc, "d", "2026-01-04T00:00:00Z", 1.0, config="another"),  # alone: no history
    ]
    order = {"b" * 40: 0, "a" * 40: 1, "c" * 40: 2}
    [group] = history_groups(runs, order)
    assert group["machine"] == doc["machine"]["id"]
    assert group["config_hash"] == doc["workflow"]["config_hash"]
    assert group["runs"] == [runs[1]["id"], runs[0]["id"], runs[2]["id"]]
    expected = series(runs, order)
    assert [(s["dataset"], s["variant"]) for s in group["series"]] == [
        (s.dataset, s.variant) for s in expected
    ]
    for s in group["series"]:
        assert [p["step"] for p in s["points"]] == ["", "within noise", "slower"]
    assert history_groups(runs[3:], order) == []


def test_every_chart_reads_the_pages_rows_and_colours_from_the_data():
    for spec in page_specs().values():
        text = json.dumps(spec)
        assert '"name": "rows"' in text and '"url"' not in text
    assert '"scale": null' in json.dumps(cost_charts())  # the runs' swatches, as in the page


def test_the_page_inlines_the_runs_the_charts_and_the_history(doc):
    later = _run(doc, "e", "2026-01-05T00:00:00Z", 1.0)
    html = page([doc, later], built="now")
    data = html.split('<script type="application/json" id="data">', 1)[1].split("</script>", 1)[0]
    parsed = json.loads(data)
    assert [r["id"] for r in parsed["runs"]] == [doc["id"], later["id"]]
    assert list(parsed["specs"]) == list(page_charts())  # every page chart of the registry
    [group] = parsed["history"]
    assert sorted(group["runs"]) == sorted([doc["id"], later["id"]])
