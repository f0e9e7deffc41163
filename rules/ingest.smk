# One job per dataset and variant, each on a fresh QuestDB (resource `questdb`, limit 1 in the
# profile, so ingestions never overlap; `threads` takes the whole machine for a quiet run).
# The thread count is this machine's, not --cores (which caps it locally): a cluster run needs
# no --cores, and its profile sets the cores of a node. An external server is one machine for
# every job, so there ingestions wait for each other under any profile (`external_questdb`).

import os

from ingestbench.workflow.rule_inputs import ingest_settings


rule ingest:
    input:
        data=lambda w: data_input(w.dataset, variant_config(w.variant)["format"]),
        manifest=f"{DATA}/{{dataset}}.manifest.json",
        jar=questdb_jar_input,
    output:
        run=f"{RESULTS}/runs/{{server}}/{{dataset}}/{{variant}}.json",
        actual=f"{RESULTS}/actual/{{server}}/{{dataset}}/{{variant}}.json",
        # A directory of Parquet pieces (validation.export_piece_rows rows each).
        export=export_output(f"{RESULTS}/exports/{{server}}/{{dataset}}/{{variant}}"),
    log:
        # The job's own log last: Snakemake shows failed logs in order, the cause comes last.
        server=f"{RESULTS}/logs/questdb/{{server}}/{{dataset}}/{{variant}}.log",
        job=f"{RESULTS}/logs/ingest/{{server}}/{{dataset}}/{{variant}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/ingest/{{server}}/{{dataset}}/{{variant}}.tsv"
    conda:
        "../envs/ingestbench.yaml"
    threads: os.cpu_count() or 1
    resources:
        questdb=1,
        external_questdb=1 if config["questdb"]["mode"] == "external" else 0,
    params:
        # What the run ran under: recorded in the run file; a change reruns the ingestion.
        settings=lambda w: ingest_settings(config, w.variant, w.server),
        code=script_code("ingest.py"),
    script:
        "../scripts/ingest.py"
