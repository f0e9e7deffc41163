# Prove what landed: DuckDB aggregates of each dataset, then each ingestion checked against them
# and row for row against the export of its table (see ingestbench.validate).

from ingestbench.workflow.rule_inputs import validate_settings


rule expected:
    input:
        parquet=lambda w: validation_source(w.dataset),
        manifest=f"{DATA}/{{dataset}}.manifest.json",
    output:
        f"{RESULTS}/expected/{{dataset}}.json",
    log:
        f"{RESULTS}/logs/expected/{{dataset}}.log",
    # Before the first ingestion, like `validate` before the next: otherwise, when one ingestion
    # takes every core, the scheduler may run them all first and their exports pile up on disk.
    priority: 1
    # With the dataset's generate rule: one cluster job (groups apply only to cluster runs).
    group:
        "dataset"
    conda:
        "../envs/ingestbench.yaml"
    params:
        settings={},
        code=script_code("expected.py"),
    script:
        "../scripts/expected.py"


rule validate:
    input:
        run=f"{RESULTS}/runs/{{server}}/{{dataset}}/{{variant}}.json",
        actual=f"{RESULTS}/actual/{{server}}/{{dataset}}/{{variant}}.json",
        export=f"{RESULTS}/exports/{{server}}/{{dataset}}/{{variant}}",
        expected=f"{RESULTS}/expected/{{dataset}}.json",
        parquet=lambda w: validation_source(w.dataset),
    output:
        f"{RESULTS}/validation/{{server}}/{{dataset}}/{{variant}}.json",
    log:
        f"{RESULTS}/logs/validate/{{server}}/{{dataset}}/{{variant}}.log",
    # Ahead of the next ingestion, so each big export is checked and deleted before the next.
    priority: 1
    conda:
        "../envs/ingestbench.yaml"
    params:
        settings=validate_settings(config),
        spill_root=f"{RESULTS}/tmp/duckdb",
        code=script_code("validate.py"),
    script:
        "../scripts/validate.py"
