# Readers beside ingestion (the config's `readers` section, off by default): the chart of rows
# accepted and visible over time, drawn from the series files the ingest jobs write beside their
# run files (undeclared outputs: a run without readers has none, and its rule stays as it was).
# Its inputs are the run files of the variants that ran with readers; with readers off it is no
# part of `all`.

from ingestbench.rule_inputs import readers_settings


def readers_runs():
    """The run files of the variants that run with readers (none when readers are off)."""
    return [
        run_path(ds, v)
        for ds, v in run_pairs()
        if readers_settings(config, v) and config["readers"]["counts"]
    ]


def readers_charts():
    """The over-time chart, when some variant runs with readers."""
    if not readers_runs():
        return []
    return [f"{RESULTS}/plots/throughput_over_time.{ext}" for ext in ("png", "svg")]


rule chart_throughput_over_time:
    input:
        runs=readers_runs(),
    output:
        png=report(
            f"{RESULTS}/plots/throughput_over_time.png",
            caption="../report/throughput_over_time.rst",
            category="Charts",
            subcategory="Throughput over time",
        ),
        svg=f"{RESULTS}/plots/throughput_over_time.svg",
    log:
        f"{RESULTS}/logs/plots/throughput_over_time.log",
    localrule: True
    conda:
        "../envs/ingestbench.yaml"
    params:
        settings=lambda w: {"dpi": config["charts"]["dpi"]},
        code=script_code("plot_over_time.py"),
    script:
        "../scripts/plot_over_time.py"
