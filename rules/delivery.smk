# The delivery experiment (docs/faults.md, "Delivery under faults"): included only when the
# config has a `delivery` section (configs/delivery.yaml; ingestbench.workflow.experiments). Every path loads the dataset while
# its own server is killed and restarted, paused, or its connection cut; delivery.csv has each
# case, summary.md the matrix.

from ingestbench.charts.registry import report_charts
from ingestbench.datasets import dataset_name
from ingestbench.delivery.settings import dataset_entry
from ingestbench.workflow.experiments import settings as experiment_settings

# The section's problems stopped the run already, before any job (ingestbench.preflight).
_delivery_dataset = dataset_name(dataset_entry(config))


rule delivery:
    input:
        jar=questdb_jar_input,
        manifest=f"{DATA}/{_delivery_dataset}.manifest.json",
        # A TSBS dataset's Parquet file, or the user's own file where it is.
        data=data_input(_delivery_dataset, "parquet"),
    output:
        csv=report(
            f"{RESULTS}/delivery/{{server}}/delivery.csv",
            caption="../report/delivery_cases.rst",
            category="Delivery",
        ),
        matrix=report(
            f"{RESULTS}/delivery/{{server}}/delivery.md",
            caption="../report/delivery_matrix.rst",
            category="Delivery",
        ),
        # One file per case: each batch as the client saw it, with its attempts.
        histories=directory(f"{RESULTS}/delivery/{{server}}/histories"),
    log:
        server=f"{RESULTS}/logs/questdb/{{server}}/delivery.log",
        job=f"{RESULTS}/logs/delivery/{{server}}.log",
    conda:
        "../envs/ingestbench.yaml"
    resources:
        questdb=1,
    params:
        settings=lambda w: experiment_settings("delivery", config, None, w.server),
        code=script_code("delivery.py"),
    script:
        "../scripts/delivery.py"


# The delivery chart, drawn from every server's delivery.csv (and the summary, for the title).
for _chart, _entry in report_charts("delivery").items():

    rule:
        name:
            f"chart_{_chart}"
        input:
            summary=f"{RESULTS}/summary.csv",
            delivery=expand(
                f"{RESULTS}/delivery/{{server}}/delivery.csv", server=SERVERS
            ),
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
