# Readers beside ingestion (the config's `readers` section, off by default): the chart of rows
# accepted and visible over time, drawn from the series files the ingest jobs write beside their
# run files (undeclared outputs: a run without readers has none, and its rule stays as it was).
# Its inputs are the run files of the variants that ran with readers; with readers off it is no
# part of `all`. Its file lists: readers_runs() and readers_charts() in common.smk.


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
