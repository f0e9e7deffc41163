# Paced ingestion (docs/methodology.md#paced-ingestion), an experiment included when the config
# has a `paced` section (ingestbench.workflow.experiments): one job per dataset, path and flush
# mode on a fresh QuestDB (resource `questdb`, so no two overlap), then every step's figures in
# paced.csv; the summary adds each path's highest sustained rate, the chart rules draw the paced
# chart from paced.csv.

import os

from ingestbench.charts.registry import report_charts
from ingestbench.paced.settings import paced_paths
from ingestbench.workflow.experiments import settings as experiment_settings

# The section's problems stopped the run already, before any job (ingestbench.preflight).
PACED = [p.name for p in paced_paths(config)]


wildcard_constraints:
    paced="[a-z_]+-[a-z_]+-parquet-[a-z]+-f[a-z]+(-p[0-9]+)?",


def paced_records():
    return [
        f"{RESULTS}/paced/{server_dir(srv)}/{ds}/{name}.json"
        for srv in SERVERS
        for ds in DATASET_CONFIGS
        for name in PACED
    ]


rule paced:
    input:
        parquet=lambda w: dataset_path(w.dataset, "parquet"),
        manifest=f"{DATA}/{{dataset}}.manifest.json",
        jar=questdb_jar_input,
    output:
        f"{RESULTS}/paced/{{server}}/{{dataset}}/{{paced}}.json",
    log:
        server=f"{RESULTS}/logs/questdb/paced/{{server}}/{{dataset}}/{{paced}}.log",
        job=f"{RESULTS}/logs/paced/{{server}}/{{dataset}}/{{paced}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/paced/{{server}}/{{dataset}}/{{paced}}.tsv"
    conda:
        "../envs/ingestbench.yaml"
    # The whole machine: a paced step measures latency, which any neighbour would add to.
    threads: os.cpu_count() or 1
    resources:
        questdb=1,
        external_questdb=1 if config["questdb"]["mode"] == "external" else 0,
    params:
        settings=lambda w: experiment_settings("paced", config, w.paced, w.server),
        work_dir=lambda w: f"{RESULTS}/tmp/paced/{w.server}/{w.dataset}/{w.paced}",
        code=script_code("paced.py"),
    script:
        "../scripts/paced.py"


rule paced_table:
    input:
        records=paced_records(),
    output:
        csv=report(
            f"{RESULTS}/paced.csv",
            caption="../report/paced.rst",
            category="Paced",
        ),
    log:
        f"{RESULTS}/logs/paced_table.log",
    localrule: True
    conda:
        "../envs/ingestbench.yaml"
    params:
        settings={},
        code=script_code("paced_table.py"),
    script:
        "../scripts/paced_table.py"


# The paced charts, drawn from paced.csv (and the summary, for the titles).
for _chart, _entry in report_charts("paced").items():

    rule:
        name:
            f"chart_{_chart}"
        input:
            summary=f"{RESULTS}/summary.csv",
            paced=f"{RESULTS}/paced.csv",
            environment=f"{RESULTS}/environment.json",
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
            settings={"chart": _chart, **chart_settings(config)},
            code=script_code("plot.py"),
        script:
            "../scripts/plot.py"
