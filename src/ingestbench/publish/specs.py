"""The results page's Vega-Lite charts, written with altair; the page feeds them its selection.

Every chart reads one named data set, `rows`, whose records the page builds from the selected
runs: `variant`, `run` (its name), `run_order` (its place among the selected runs), `color` (the
run's swatch, the same as in its checkbox and the matrix's column), `order` (the variant's row in
the matrix, so that every chart lists the variants alike) and the measures. Colours come from the
data (scale=None), so the charts carry no legend of their own: the page draws one above them from
the same swatches. Long charts put their axis at the top, where a reader starts.
"""

from __future__ import annotations

from typing import Any

#: Wide enough for the longest variant name; the bars get the rest of the 1280 px page.
LABEL_LIMIT = 290
SMALL_WIDTH = 290


def _y(axis: bool = True):
    import altair as alt

    return alt.Y(
        "variant:N",
        sort=alt.EncodingSortField("order", op="min"),
        title=None,
        axis=alt.Axis(labelLimit=LABEL_LIMIT) if axis else None,
    )


def _offset():
    """A bar per run within a variant's band, in the page's order of the runs (newest first)."""
    import altair as alt

    return alt.YOffset("run:N", sort=alt.EncodingSortField("run_order", op="min"))


def _colour():
    import altair as alt

    return alt.Color("color:N", scale=None, legend=None)


def cost_charts() -> dict[str, Any]:
    """Client and server CPU-seconds per 1M rows and the table's size on disk, side by side,
    the variants in the matrix's order (labels on the first only)."""
    import altair as alt

    def small(field: str, title: str, fmt: str, first: bool) -> alt.Chart:
        return (
            alt.Chart(alt.NamedData("rows"))
            .mark_bar()
            .encode(
                y=_y(axis=first),
                yOffset=_offset(),
                x=alt.X(f"{field}:Q", title=title, axis=alt.Axis(orient="top")),
                color=_colour(),
                tooltip=[
                    alt.Tooltip("variant:N"),
                    alt.Tooltip("run:N"),
                    alt.Tooltip(f"{field}:Q", title=title, format=fmt),
                ],  # fmt: skip
            )
            .properties(width=SMALL_WIDTH, height=alt.Step(9))
        )

    return alt.hconcat(
        small("client_cpu", "client CPU-s per 1M rows", ".2f", True),
        small("server_cpu", "server CPU-s per 1M rows", ".2f", False),
        small("disk", "table on disk, MiB", ",.0f", False),
        spacing=12,
    ).to_dict()


def history_chart() -> dict[str, Any]:
    """Each variant's median rows/s across the runs of one machine and config (in commit order),
    one grey line per variant, the steps beyond the noise marked ▲ (faster) or ▼ (slower)."""
    import altair as alt

    x = alt.X(
        "column:O",
        sort=alt.EncodingSortField("position", op="min"),
        title=None,
        axis=alt.Axis(labelAngle=0),
    )
    y = alt.Y("median:Q", title="rows/s (median)", axis=alt.Axis(format="~s"))
    tooltip = [
        alt.Tooltip("variant:N"),
        alt.Tooltip("run:N"),
        alt.Tooltip("median:Q", title="rows/s", format=",.0f"),
        alt.Tooltip("step:N", title="against the run before"),
    ]
    base = alt.Chart(alt.NamedData("rows")).encode(x=x, y=y, tooltip=tooltip)
    lines = base.mark_line(color="#bbb", point=alt.OverlayMarkDef(color="#999", size=18)).encode(
        detail="variant:N"
    )
    marks = (
        base.transform_filter("datum.step === 'faster' || datum.step === 'slower'")
        .mark_point(filled=True, size=110, opacity=1)
        .encode(
            shape=alt.Shape(
                "step:N",
                scale=alt.Scale(
                    domain=["faster", "slower"], range=["triangle-up", "triangle-down"]
                ),
                legend=None,
            ),  # fmt: skip
            color=alt.Color(
                "step:N",
                scale=alt.Scale(domain=["faster", "slower"], range=["#2e7d32", "#c62828"]),
                legend=None,
            ),  # fmt: skip
        )
    )
    return (lines + marks).properties(width=1100, height=260).to_dict()


def over_time_chart() -> dict[str, Any]:
    """Rows accepted (solid) and visible (dashed) over a repeat's seconds, a colour per variant,
    a panel per reader count (records: variant, readers, t, rows, line)."""
    import altair as alt

    return (
        alt.Chart(alt.NamedData("rows"))
        .mark_line()
        .encode(
            x=alt.X("t:Q", title="seconds since the repeat's start"),
            y=alt.Y("rows:Q", title="rows", axis=alt.Axis(format="~s")),
            color=alt.Color("variant:N", legend=alt.Legend(orient="bottom", columns=2)),
            strokeDash=alt.StrokeDash("line:N", legend=alt.Legend(orient="bottom", title=None)),
            detail="variant:N",
            tooltip=[
                "variant:N",
                "readers:N",
                "line:N",
                alt.Tooltip("t:Q", format=".1f"),
                alt.Tooltip("rows:Q", format=",.0f"),
            ],  # fmt: skip
        )
        .properties(width=340, height=220)
        .facet(column=alt.Column("readers:N", title=None, sort="ascending"))
        .to_dict()
    )


def paced_chart() -> dict[str, Any]:
    """Latency (p50 dashed, p99 solid) against the offered rate, a colour per path and flush
    mode, log scales; the bound as a grey rule, each sustained rate as a large point on its p99
    (records: line, rate, latency, percentile, bound, sustained)."""
    import altair as alt

    base = alt.Chart(alt.NamedData("rows"))
    x = alt.X("rate:Q", title="offered rows/s", scale=alt.Scale(type="log"))
    y = alt.Y("latency:Q", title="latency from due to visible, s", scale=alt.Scale(type="log"))
    legend = alt.Legend(orient="bottom", columns=2, labelLimit=LABEL_LIMIT + 120)
    colour = alt.Color("line:N", title=None, legend=legend)
    tooltip = ["line:N", "percentile:N", alt.Tooltip("rate:Q", format=",.0f"),
               alt.Tooltip("latency:Q", format=".3f")]  # fmt: skip
    lines = base.mark_line(point=True).encode(
        x=x, y=y, color=colour, strokeDash=alt.StrokeDash(
            "percentile:N", title=None, scale=alt.Scale(domain=["p50", "p99"],
                                                        range=[[4, 3], [1, 0]])),
        detail="percentile:N", tooltip=tooltip)  # fmt: skip
    bound = base.mark_rule(color="#888", strokeDash=[4, 3]).encode(y="mean(bound):Q")
    sustained = (
        base.transform_filter("datum.sustained && datum.percentile == 'p99'")
        .mark_point(size=160, filled=True, shape="diamond")
        .encode(x=x, y=y, color=colour, tooltip=tooltip)
    )
    return alt.layer(lines, bound, sustained).properties(width=560, height=280).to_dict()
