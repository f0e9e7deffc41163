# Results people read: the recorded environment, the summary table, the charts and the report.
# Chart rules read only the summary and the environment (never a run file), so `snakemake charts`
# redraws everything from existing results (a fresh clone has the reference run's), and a change
# of the drawing code or of the `charts` settings reruns the chart rules and nothing else.

import os

# The chart list, from a light module: parsing the workflow does not load matplotlib.
from ingestbench.charts.registry import CHARTS
from ingestbench.config import config_hash
from ingestbench.rule_inputs import chart_settings, ingest_settings


report: "../report/workflow.rst"


rule environment:
    input:
        lock=os.path.join(workflow.basedir, "requirements.lock"),
        jar=questdb_jar_input(),
    output:
        report(
            f"{RESULTS}/environment.json",
            caption="../report/environment.rst",
            category="Environment",
        ),
    log:
        job=f"{RESULTS}/logs/environment.log",
        server=f"{RESULTS}/logs/questdb/environment.log",
    localrule: True
    conda:
        "../envs/ingestbench.yaml"
    resources:
        questdb=1,
    params:
        # The checkout holding the lock file: its git commit is recorded.
        workflow_dir=lambda w, input: os.path.dirname(os.path.abspath(input.lock)),
        # A changed benchmark config re-records the environment (and so the tables and charts).
        config_hash=config_hash(config),
        code=script_code("environment.py"),
    script:
        "../scripts/environment.py"


rule summarize:
    input:
        runs=run_files(),
        validations=validation_files(),
        environment=f"{RESULTS}/environment.json",
    output:
        csv=report(
            f"{RESULTS}/summary.csv",
            caption="../report/summary.rst",
            category="Summary",
        ),
        md=f"{RESULTS}/summary.md",
    log:
        f"{RESULTS}/logs/summarize.log",
    localrule: True
    conda:
        "../envs/ingestbench.yaml"
    params:
        # What each run file must have run under: the summary refuses one that differs.
        settings={run_path(ds, v): ingest_settings(config, v) for ds, v in run_pairs()},
        code=script_code("summarize.py"),
    script:
        "../scripts/summarize.py"


for _chart, _title in CHARTS.items():

    rule:
        name:
            f"chart_{_chart}"
        input:
            summary=f"{RESULTS}/summary.csv",
            environment=f"{RESULTS}/environment.json",
        output:
            png=report(
                f"{RESULTS}/plots/{_chart}.png",
                caption=f"../report/{_chart}.rst",
                category="Charts",
                subcategory=_title,
            ),
            svg=f"{RESULTS}/plots/{_chart}.svg",
        log:
            f"{RESULTS}/logs/plots/{_chart}.log",
        localrule: True
        conda:
            "../envs/ingestbench.yaml"
        params:
            chart=_chart,
            settings=chart_settings(config),
            code=script_code("plot.py"),
        script:
            "../scripts/plot.py"


# QuestDB's published pandas benchmark (figures in ingestbench/results/published.py) next to this
# run's variants of the same shape; config.published.yaml runs all of them.
rule published_comparison:
    input:
        summary=f"{RESULTS}/summary.csv",
    output:
        f"{RESULTS}/published_comparison.md",
    log:
        f"{RESULTS}/logs/published_comparison.log",
    localrule: True
    conda:
        "../envs/ingestbench.yaml"
    params:
        code=script_code("published_comparison.py"),
    script:
        "../scripts/published_comparison.py"


rule charts:
    # Target: redraw the summary and every chart from the run files already there.
    input:
        charts_files(),
        f"{RESULTS}/summary.csv",
        f"{RESULTS}/summary.md",
