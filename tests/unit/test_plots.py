"""Every chart of a summary is drawn, as PNG and SVG, from the fixture summary, also when data
are missing."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import pandas as pd
import pytest

from ingestbench.charts import draw as plots
from ingestbench.charts.data import short_cpu
from ingestbench.charts.registry import report_charts
from ingestbench.results.summary import summarize, write_summary
from tests.helpers import FIXTURE_RESULTS, REPO

FIXTURE = FIXTURE_RESULTS
#: The charts drawn from a summary (the registry's other charts: tests/unit/test_chart_registry.py).
CHARTS = report_charts("summary")
ENV = json.loads((FIXTURE / "environment.json").read_text())


@pytest.fixture(scope="module")
def summary() -> pd.DataFrame:
    return summarize(sorted((FIXTURE / "runs").rglob("*.json")),
                     sorted((FIXTURE / "validation").rglob("*.json")))  # fmt: skip


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", head[16:24])


def draw_all(df: pd.DataFrame, out: Path) -> list[Path]:
    paths = []
    for name in CHARTS:
        targets = [out / f"{name}.png", out / f"{name}.svg"]
        plots.render_chart(name, df, ENV, targets)
        paths += targets
    return paths


def check_files(paths: list[Path]) -> None:
    for path in paths:
        assert path.stat().st_size > 1000, path
        if path.suffix == ".png":
            width, height = png_size(path)
            assert width >= 900 and height > 200, (path, width, height)
        else:
            assert "<svg" in path.read_text()[:2000], path
    assert not [p for p in paths[0].parent.iterdir() if ".tmp-" in p.name]


def test_every_chart_from_the_fixture(tmp_path, summary):
    check_files(draw_all(summary, tmp_path))


def test_every_chart_from_summary_csv(tmp_path):
    csv, md = tmp_path / "summary.csv", tmp_path / "summary.md"
    write_summary(sorted((FIXTURE / "runs").rglob("*.json")),
                  sorted((FIXTURE / "validation").rglob("*.json")),
                  FIXTURE / "environment.json", csv, md)  # fmt: skip
    out = tmp_path / "plots"
    for name in CHARTS:
        plots.render_chart_files(name, csv, FIXTURE / "environment.json",
                                 [out / f"{name}.png", out / f"{name}.svg"])  # fmt: skip
    check_files(sorted(out.iterdir()))
    assert len(list(out.iterdir())) == 2 * len(CHARTS)


@pytest.mark.parametrize(
    "drop",
    [
        ["threads", "processes"],
        ["batches"],
        ["rows"],
        ["rows", "dataframe", "threads", "processes", "batches"],  # server-side only
    ],
)
def test_charts_without_some_methods_still_produce_every_file(tmp_path, summary, drop):
    df = summary[~summary["method"].isin(drop)].reset_index(drop=True)
    check_files(draw_all(df, tmp_path))


def test_placeholder_figures_say_no_data(summary):
    df = summary[~summary["method"].isin(["threads", "processes", "batches"])]
    for chart in (plots.scaling, plots.batch_sweep):
        fig = chart(df, ENV)
        texts = [t.get_text() for ax in fig.axes for t in ax.texts]
        assert any(t.startswith("No data") for t in texts)


def test_titles_name_size_and_machine(summary):
    fig = plots.throughput(summary, ENV)
    title = fig._suptitle.get_text()
    assert "1,000 rows" in title and "100 rows" in title
    assert "2 cores, Intel Xeon E5-2680 v4" in title


def test_the_phases_chart_calls_end_to_end_wall_time_not_a_sum(summary):
    ax = plots.phases(summary, ENV).axes[0]
    label = ax.get_xlabel()
    assert "wall time" in label and "= read + convert" not in label
    ticks = ax.collections[0].get_offsets()[:, 0]  # the end-to-end marks, fastest first
    shown = summary[summary["dataset"] == summary["dataset"].iloc[0]]
    assert sorted(ticks) == pytest.approx(sorted(shown["end_to_end_s_median"]))


def test_short_cpu_names():
    assert short_cpu("Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz") == "Intel Xeon E5-2680 v4"
    assert short_cpu("AMD EPYC 7763 64-Core Processor") == "AMD EPYC 7763"
    assert short_cpu(None) == "unknown CPU"


def test_unknown_chart_is_refused(tmp_path, summary):
    with pytest.raises(ValueError, match="unknown chart"):
        plots.render_chart("pie", summary, ENV, [tmp_path / "pie.png"])


def test_every_chart_in_the_registry_has_a_drawing_and_a_caption():
    assert all(callable(getattr(plots, name)) for name in CHARTS)
    smk = (REPO / "rules" / "charts.smk").read_text()
    assert "from ingestbench.charts.registry import report_charts" in smk
    for name in CHARTS:
        assert (REPO / "report" / f"{name}.rst").read_text().strip()
    assert 'caption=f"../report/{_chart}.rst"' in smk
    for caption in re.findall(r'"\.\./report/(\w+)\.rst"', smk):
        assert (REPO / "report" / f"{caption}.rst").is_file(), caption
    assert 'report: "../report/workflow.rst"' in smk
    assert (REPO / "report" / "workflow.rst").read_text().strip()
    report = (REPO / "rules" / "report.smk").read_text()
    for caption in re.findall(r'"\.\./report/(\w+)\.rst"', report):
        assert (REPO / "report" / f"{caption}.rst").is_file(), caption


def test_cpu_chart_stacks_client_and_server_per_million_rows(summary):
    fig = plots.cpu(summary, ENV)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.texts]
    first = summary[summary["dataset"] == summary.sort_values("dataset_rows")["dataset"].iloc[-1]]
    row = first.assign(total=first["client_cpu_s_per_1m_rows"] + first["server_cpu_s_per_1m_rows"])
    cheapest = row.sort_values("total").iloc[0]
    assert ax.get_yticklabels()[0].get_text() == cheapest["variant"]
    assert labels[0].strip() == (
        f"{cheapest['client_cpu_s_per_1m_rows']:.2f} + {cheapest['server_cpu_s_per_1m_rows']:.2f}"
    )


def test_cpu_chart_reads_a_summary_from_before_the_per_row_columns(summary):
    old = summary.drop(columns=["client_cpu_s_per_1m_rows", "server_cpu_s_per_1m_rows"])
    texts = [t.get_text() for ax in plots.cpu(old, ENV).axes for t in ax.texts]
    assert texts and not any(t.startswith("No data") for t in texts)
