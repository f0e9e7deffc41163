# Prove what landed: DuckDB aggregates of each dataset, then each ingestion checked against them
# and row for row against the export of its table (see ingestbench.validate).


rule expected:
    input:
        parquet=lambda w: validation_source(w.dataset),
        manifest="results/data/{dataset}.manifest.json",
    output:
        "results/expected/{dataset}.json",
    log:
        "results/logs/expected/{dataset}.log",
    # Before the first ingestion, like `validate` before the next: otherwise, when one ingestion
    # takes every core, the scheduler may run them all first and their exports pile up on disk.
    priority: 1
    # With the dataset's generate rule: one cluster job (groups apply only to cluster runs).
    group:
        "dataset"
    conda:
        "../envs/ingestbench.yaml"
    script:
        "../scripts/expected.py"


rule validate:
    input:
        run="results/runs/{dataset}/{variant}.json",
        actual="results/actual/{dataset}/{variant}.json",
        export="results/exports/{dataset}/{variant}",
        expected="results/expected/{dataset}.json",
        parquet=lambda w: validation_source(w.dataset),
    output:
        "results/validation/{dataset}/{variant}.json",
    log:
        "results/logs/validate/{dataset}/{variant}.log",
    # Ahead of the next ingestion, so each big export is checked and deleted before the next.
    priority: 1
    conda:
        "../envs/ingestbench.yaml"
    params:
        validation=config["validation"],
        spill_root="results/tmp/duckdb",
    script:
        "../scripts/validate.py"
