# Data stage: each seeded TSBS dataset (cpu, or iot's two tables), as Parquet plus the formats
# its variants read (dataset_formats), and its manifest, in the shared data folder. One rule per
# dataset, because a rule's outputs cannot depend on a wildcard's value and the big ILP text must
# exist only where it is sent.

for _name in DATASET_CONFIGS:

    rule:
        name:
            f"generate_{_name.replace('-', '_')}"
        output:
            **{fmt: dataset_file(_name, fmt) for fmt in dataset_formats(_name)},
            manifest=f"{DATA}/{_name}.manifest.json",
        log:
            f"{RESULTS}/logs/generate/{_name}.log",
        benchmark:
            f"{RESULTS}/benchmarks/generate/{_name}.tsv"
        # With `expected`: one cluster job per dataset (groups apply only to cluster runs).
        group:
            "dataset"
        conda:
            "../envs/ingestbench.yaml"
        params:
            dataset=dataset_config(_name),
            formats=dataset_formats(_name),
            code=script_code("generate.py"),
        script:
            "../scripts/generate.py"
