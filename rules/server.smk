# The QuestDB server jar, cached outside results/ so that a clean of results/ keeps it.


rule fetch_questdb:
    output:
        # A path in the user's cache (see questdb_jar() in common.smk), not under results/.
        jar=questdb_jar() or "never-built-in-external-mode.jar",
    log:
        "results/logs/fetch_questdb.log",
    localrule: True
    conda:
        "../envs/ingestbench.yaml"
    params:
        version=config["questdb"]["version"],
        cache_dir=config["questdb"]["cache_dir"],
    script:
        "../scripts/fetch_questdb.py"
