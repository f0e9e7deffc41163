# Readers beside ingestion (the config's `readers` section, off by default), the experiment that
# rides inside the ingest jobs (ingestbench.workflow.experiments): the charts of the registry
# drawn from the series files the ingest jobs write beside their run files (undeclared outputs:
# a run without readers has none, and its rule stays as it was), such as rows accepted and
# visible over time. Their inputs are the run files of the variants that ran with readers
# (readers_runs() in common.smk); with readers off they are no part of `all`.

from ingestbench.charts.registry import report_charts

for _chart, _entry in report_charts("readers").items():

    rule:
        name:
            f"chart_{_chart}"
        input:
            runs=readers_runs(),
        output:
            png=report(
                f"{RESULTS}/plots/{_chart}.png",
                caption=f"../report/{_chart}.rst",
                category="Charts",
                subcategory=_entry.title,
            ),
            svg=f"{RESULTS}/plots/{_chart}.svg",
        log:
            f"{RESULTS}/logs/plots/{_chart}.log",
        localrule: True
        conda:
            "../envs/ingestbench.yaml"
        params:
            chart=_chart,
            settings=lambda w: {"dpi": config["charts"]["dpi"]},
            code=script_code("plot_over_time.py"),
        script:
            "../scripts/plot_over_time.py"
