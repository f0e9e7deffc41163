# Results people read: the recorded environment, the summary table, the charts and the report.
# Chart rules read only results/summary.csv and environment.json (never a run file), so
# `snakemake charts` redraws everything from existing runs, and a styling change in
# src/ingestbench/plots.py (an input of the chart rules) reruns the chart rules and nothing else.

import os

from ingestbench.config import config_hash

REPO_DIR = os.path.dirname(os.path.dirname(os.path.abspath(workflow.snakefile)))

# Keep in step with ingestbench.plots.CHARTS (tests/test_plots.py checks it); not imported here
# so that parsing the workflow does not load matplotlib.
CHARTS = {
    "throughput": "Throughput",
    "phases": "Phases",
    "speedup": "Speedup",
    "scaling": "Scaling",
    "parquet_vs_csv": "Parquet vs CSV",
    "batch_sweep": "Batch size",
}


report: "../report/workflow.rst"


rule environment:
    input:
        lock=os.path.join(REPO_DIR, "requirements.lock"),
        jar=questdb_jar(),
    output:
        report(
            "results/environment.json",
            caption="../report/environment.rst",
            category="Environment",
        ),
    log:
        job="results/logs/environment.log",
        server="results/logs/questdb/environment.log",
    localrule: True
    conda:
        "../envs/ingestbench.yaml"
    resources:
        questdb=1,
    params:
        # The checkout holding the lock file: its git commit is recorded.
        workflow_dir=lambda w, input: os.path.dirname(os.path.abspath(input.lock)),
        # A changed config re-records the environment (and so redraws the tables and charts).
        config_hash=config_hash(config),
    script:
        "../scripts/environment.py"


rule summarize:
    input:
        runs=run_files(),
        validations=validation_files(),
        environment="results/environment.json",
        code=os.path.join(REPO_DIR, "src/ingestbench/summary.py"),
    output:
        csv=report(
            "results/summary.csv",
            caption="../report/summary.rst",
            category="Summary",
        ),
        md="results/summary.md",
    log:
        "results/logs/summarize.log",
    localrule: True
    conda:
        "../envs/ingestbench.yaml"
    script:
        "../scripts/summarize.py"


for _chart, _title in CHARTS.items():

    rule:
        name:
            f"chart_{_chart}"
        input:
            summary="results/summary.csv",
            environment="results/environment.json",
            style=os.path.join(REPO_DIR, "src/ingestbench/plots.py"),
        output:
            png=report(
                f"results/plots/{_chart}.png",
                caption=f"../report/{_chart}.rst",
                category="Charts",
                subcategory=_title,
            ),
            svg=f"results/plots/{_chart}.svg",
        log:
            f"results/logs/plots/{_chart}.log",
        localrule: True
        conda:
            "../envs/ingestbench.yaml"
        params:
            chart=_chart,
        script:
            "../scripts/plot.py"


rule charts:
    # Target: redraw the summary and every chart from the run files already there.
    input:
        charts_files(),
        "results/summary.csv",
        "results/summary.md",
