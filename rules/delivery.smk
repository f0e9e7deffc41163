# The delivery experiment (docs/faults.md, "Delivery under faults"): included only when the
# config has a `delivery` section (configs/delivery.yaml; ingestbench.workflow.experiments). Every path loads the dataset while
# its own server is killed and restarted, paused, or its connection cut; delivery.csv has each
# case, summary.md the matrix.

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
            caption="../report/delivery.rst",
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
