"""One chart registry (ingestbench.charts.registry) names every chart, of the report and of the
page alike: every file a rule draws into plots/ and every spec the page embeds is a registry
entry, and every entry is drawn where it says, by a function that exists."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from ingestbench.charts.registry import (
    CHARTS,
    SOURCES,
    chart_files,
    chart_paths,
    drawing,
    page_charts,
    page_specs,
    report_charts,
)
from tests.helpers import REPO

PAGE = REPO / "src" / "ingestbench" / "publish" / "page"


@pytest.fixture(scope="module")
def rule_outputs(tmp_path_factory) -> dict[str, list[str]]:
    """{rule: its outputs} of the workflow as Snakemake parses it (the default config with the
    paced and delivery experiments' sections, whose rules draw their charts)."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

    with SnakemakeApi(OutputSettings()) as api:
        workflow = api.workflow(
            resource_settings=ResourceSettings(cores=1),
            config_settings=ConfigSettings(
                configfiles=[
                    REPO / "config.yaml",
                    REPO / "configs" / "paced.yaml",
                    REPO / "configs" / "delivery.yaml",
                ]  # fmt: skip
            ),
            snakefile=REPO / "Snakefile",
            workdir=REPO,
        )
        return {r.name: [str(o) for o in r.output] for r in workflow._workflow.rules}


def test_every_chart_file_a_rule_draws_is_a_registry_entry_and_vice_versa(rule_outputs):
    drawn = sorted(o for outs in rule_outputs.values() for o in outs if "/plots/" in o)
    results = drawn[0].split("/plots/")[0]
    registered = sorted(
        path for source in SOURCES for name in report_charts(source)
        for path in chart_files(name, f"{results}/plots")
    )  # fmt: skip
    assert drawn == registered


def test_every_spec_the_page_embeds_is_a_registry_entry_and_vice_versa():
    """The page's script embeds DATA.specs.<name>; the site fills DATA.specs from page_specs()
    (tests/unit/test_site_data.py reads them back out of a built page)."""
    scripts = "".join(p.read_text() for p in sorted(PAGE.glob("*.js")))
    assert set(re.findall(r"DATA\.specs\.(\w+)", scripts)) == set(page_charts())
    assert '"specs": page_specs()' in (PAGE.parent / "site.py").read_text()


def test_every_entry_is_drawn_somewhere_by_a_function_that_exists():
    for name, chart in CHARTS.items():
        assert chart.source in SOURCES, name
        assert chart.report or chart.page, f"{name} is drawn neither for the report nor the page"
        assert (chart.source == "page") == (not chart.report), name
        if chart.report:
            assert callable(drawing(name, "report")) and chart.formats, name
            assert (REPO / "report" / f"{name}.rst").is_file() or chart.source == "dtype_matrix"
        if chart.page:
            assert isinstance(drawing(name, "page")(), dict), name


def test_the_charts_of_a_summary_take_the_summary_and_the_environment():
    for name in report_charts("summary"):
        draw = drawing(name, "report")
        assert list(inspect.signature(draw, follow_wrapped=False).parameters) == ["df", "env"], name


def test_the_workflow_draws_the_registry_s_functions():
    from ingestbench.dtypes import job

    assert job.draw_heatmap is drawing("dtype_matrix", "report")
    assert "drawing(sm.params.chart" in (REPO / "scripts" / "plot_over_time.py").read_text()


def test_the_reference_run_redraws_the_charts_of_its_summary():
    assert "chart_paths(" in (REPO / "reference" / "Snakefile").read_text()
    assert chart_paths("r") == [
        f"r/{n}.{e}" for n in report_charts("summary") for e in ("png", "svg")
    ]
    committed = {p.stem for p in Path(REPO / "reference" / "default" / "plots").glob("*.png")}
    assert set(report_charts("summary")) <= committed


def test_a_name_or_a_way_the_registry_does_not_know_is_refused():
    with pytest.raises(ValueError, match="unknown chart 'pie'"):
        drawing("pie", "report")
    with pytest.raises(ValueError, match="not drawn for the report"):
        drawing("costs", "report")
    with pytest.raises(ValueError, match="no chart source"):
        report_charts("csv")


def test_page_specs_are_the_specs_of_the_page_charts():
    specs = page_specs()
    assert list(specs) == list(page_charts())
    assert all("$schema" in spec for spec in specs.values())


def test_a_readers_chart_drawn_through_the_registry_writes_every_format(tmp_path):
    for name, chart in report_charts("readers").items():
        outputs = [Path(p) for p in chart_files(name, str(tmp_path))]
        drawing(name, "report")([], outputs, dpi=50)  # no run with readers: the placeholder
        assert [p.suffix for p in outputs] == [f".{ext}" for ext in chart.formats]
        assert all(p.stat().st_size > 1000 for p in outputs)


def test_the_delivery_chart_draws_each_servers_matrix_and_a_placeholder_without_one(tmp_path):
    from ingestbench.charts.draw import render_chart_files
    from tests.helpers import REFERENCE, results_with_every_part

    results = results_with_every_part(tmp_path / "r")
    delivery = sorted((results / "delivery").glob("*/delivery.csv"))
    for data, name in ((delivery, "delivery"), ([], "none")):
        outputs = [tmp_path / f"{name}.png", tmp_path / f"{name}.svg"]
        render_chart_files("delivery", REFERENCE / "summary.csv", None, outputs, 50, data)
        assert all(p.stat().st_size > 1000 for p in outputs)
    drawn = (tmp_path / "delivery.svg").read_text()
    assert "lost 7 unknown" in drawn and "QuestDB 9.3.4" in drawn
    assert "no delivery case ran" in (tmp_path / "none.svg").read_text()
