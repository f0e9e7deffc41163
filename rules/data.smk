# Data stage: each dataset's files and manifest, in the shared data folder, written by the rule
# its kind names (ingestbench.datasets: `data_rule`). One rule per dataset, because a rule's
# outputs cannot depend on a wildcard's value and the big ILP text must exist only where it is
# sent.
#
# Generated (TSBS: cpu, or iot's two tables): seeded, as Parquet plus the formats its variants
# read (dataset_formats).
for _name in datasets_made_by("generate"):

    rule:
        name:
            f"generate_{_name.replace('-', '_')}"
        output:
            **{fmt: dataset_file(_name, fmt) for fmt in dataset_formats(_name)},
            # First: the job's record of its settings is kept beside its first output.
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
            settings={
                "dataset": dataset_config(_name),
                "formats": dataset_formats(_name),
            },
            code=script_code("generate.py"),
        script:
            "../scripts/generate.py"


# Described (own data, ingestbench.own): the user's file is described, hashed into its manifest
# and, where a variant sends it, written once as ILP text; never copied. A changed file reruns
# its jobs.
for _name in datasets_made_by("describe"):

    rule:
        name:
            f"describe_{_name.replace('-', '_')}"
        input:
            **derived_inputs(_name),
            data=dataset_sources(_name),
            # A sorted copy: its source's table (symbols, timestamp) and the sort's record.
        output:
            **{fmt: dataset_file(_name, fmt) for fmt in dataset_formats(_name)},
            manifest=f"{DATA}/{_name}.manifest.json",
        log:
            f"{RESULTS}/logs/describe/{_name}.log",
        group:
            "dataset"
        conda:
            "../envs/ingestbench.yaml"
        params:
            settings={
                "dataset": dataset_config(_name),
                "formats": dataset_formats(_name),
            },
            code=script_code("describe_own.py"),
        script:
            "../scripts/describe_own.py"


# An own dataset's sorted copy (`sorted: true`, ingestbench.own.sort): DuckDB writes the user's
# rows ordered by their timestamp into the data folder, in bounded memory; the sort's time is
# recorded apart. The copy is then described and benchmarked as a dataset of its own.
for _name, _source in SORTED_COPIES.items():

    rule:
        name:
            f"sort_{_name.replace('-', '_')}"
        input:
            data=dataset_sources(_source),
            manifest=f"{DATA}/{_source}.manifest.json",
        output:
            # First: the job's record of its settings is kept beside its first output.
            record=f"{DATA}/{_name}.sort.json",
            data=validation_source(_name),  # the copy, which its validation reads
        log:
            f"{RESULTS}/logs/sort/{_name}.log",
        group:
            "dataset"
        conda:
            "../envs/ingestbench.yaml"
        params:
            settings={
                "dataset": dataset_config(_source),
                "memory_limit": config["validation"]["memory_limit"],
                "null_value": (dataset_config(_name).get("csv") or {}).get(
                    "null_values", [""]
                )[0],
            },
            code=script_code("sort_own.py"),
        script:
            "../scripts/sort_own.py"


# The example own tables, N rows, as Parquet or CSV, made only when a dataset's path names one:
# trades (configs/own.yaml, ingestbench.own.example; its CSV with its own delimiter and null
# marker) and flights (configs/sorted.yaml, ingestbench.own.flights: string-heavy, out of order).
rule own_example:
    output:
        "results/examples/{table}-{rows}.{ext}",
    log:
        f"{RESULTS}/logs/own_example/{{table}}-{{rows}}.{{ext}}.log",
    wildcard_constraints:
        table="trades|flights",
        rows="[0-9]+",
        ext="parquet|csv",
    localrule: True
    conda:
        "../envs/ingestbench.yaml"
    params:
        settings={},
        code=script_code("own_example.py"),
    script:
        "../scripts/own_example.py"
