# Results people read: the recorded environment, the summary table, the charts and the report.
# Chart rules read only results/summary.csv and environment.json (never a run file), so
# `snakemake charts` redraws everything from existing runs, and a styling change in
# the drawing code (an input of the chart rules) reruns the chart rules and nothing else.

import os

# The chart list, from a light module: parsing the workflow does not load matplotlib.
from ingestbench.charts.registry import CHARTS
from ingestbench.config import config_hash

REPO_DIR = os.path.dirname(os.path.dirname(os.path.abspath(workflow.snakefile)))
# What a chart's drawing depends on: a change here redraws the charts.
CHART_CODE = [
    os.path.join(REPO_DIR, "src/ingestbench/charts", name)
    for name in ("draw.py", "style.py", "data.py", "registry.py")
]


report: "../report/workflow.rst"


rule environment:
    input:
        lock=os.path.join(REPO_DIR, "requirements.lock"),
        jar=questdb_jar_input(),
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
        code=[
            os.path.join(REPO_DIR, "src/ingestbench/results", name)
            for name in ("summary.py", "records.py", "ceiling.py")
        ],
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
            code=CHART_CODE,
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


# QuestDB's published pandas benchmark (figures in ingestbench/results/published.py) next to this run's
# variants of the same shape; config.published.yaml runs all of them.
rule published_comparison:
    input:
        summary="results/summary.csv",
        code=os.path.join(REPO_DIR, "src/ingestbench/results/published.py"),
    output:
        "results/published_comparison.md",
    log:
        "results/logs/published_comparison.log",
    localrule: True
    conda:
        "../envs/ingestbench.yaml"
    script:
        "../scripts/published_comparison.py"


rule charts:
    # Target: redraw the summary and every chart from the run files already there.
    input:
        charts_files(),
        "results/summary.csv",
        "results/summary.md",
