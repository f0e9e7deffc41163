# One job per dataset and variant, each on a fresh QuestDB (resource `questdb`, limit 1 in the
# profile, so ingestions never overlap; `threads` takes the whole machine for a quiet run).


rule ingest:
    input:
        data=lambda w: f"results/data/{w.dataset}.{variant_config(w.variant)['format']}",
        manifest="results/data/{dataset}.manifest.json",
        jar=questdb_jar_input(),
    output:
        run="results/runs/{dataset}/{variant}.json",
        actual="results/actual/{dataset}/{variant}.json",
        # A directory of Parquet pieces (validation.export_piece_rows rows each).
        export=temp(directory("results/exports/{dataset}/{variant}")),
    log:
        # The job's own log last: Snakemake shows failed logs in order, the cause comes last.
        server="results/logs/questdb/{dataset}/{variant}.log",
        job="results/logs/ingest/{dataset}/{variant}.log",
    benchmark:
        "results/benchmarks/ingest/{dataset}/{variant}.tsv"
    conda:
        "../envs/ingestbench.yaml"
    threads: workflow.cores
    resources:
        questdb=1,
    script:
        "../scripts/ingest.py"
