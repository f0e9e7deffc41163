# The dtype matrix (`make run-dtypes`, an experiment outside `all` and the summary: its entry in
# ingestbench.workflow.experiments): every case of ingestbench.dtypes.cases
# through the configured methods and transports, each into a table of its own on one fresh
# server, checked by DuckDB.

from ingestbench.charts.registry import chart_files
from ingestbench.workflow.experiments import settings as experiment_settings


rule dtype_matrix:
    input:
        jar=questdb_jar_input(),
    output:
        csv=f"{RESULTS}/dtype_matrix.csv",
        table=f"{RESULTS}/dtype_matrix.md",
        # The registry's chart, one PNG.
        chart=chart_files("dtype_matrix", f"{RESULTS}/plots")[0],
    log:
        server=f"{RESULTS}/logs/questdb/dtype_matrix.log",
        job=f"{RESULTS}/logs/dtype_matrix.log",
    conda:
        "../envs/ingestbench.yaml"
    resources:
        questdb=1,
        external_questdb=1 if config["questdb"]["mode"] == "external" else 0,
    params:
        settings=experiment_settings("dtype_matrix", config),
        code=script_code("dtype_matrix.py"),
    script:
        "../scripts/dtype_matrix.py"
