# Data stage: the seeded TSBS cpu-only dataset, always as Parquet and CSV plus its manifest.
# The {dataset} wildcard is the dataset's name from its parameters (DatasetParams.name).


rule generate:
    output:
        parquet="results/data/{dataset}.parquet",
        csv="results/data/{dataset}.csv",
        manifest="results/data/{dataset}.manifest.json",
    log:
        "results/logs/generate/{dataset}.log",
    benchmark:
        "results/benchmarks/generate/{dataset}.tsv"
    conda:
        "../envs/ingestbench.yaml"
    params:
        dataset=lambda w: dataset_config(w.dataset),
    script:
        "../scripts/generate.py"
