# The QuestDB server jar lives in a cache shared by every clone (outside results/, so a clean of
# results/ keeps it). This rule's output is only this workflow's record of it: the shared jar is
# never an output, so no workflow deletes it or reruns because another one touched it. One record
# per version of the config's servers (ingestbench.server.versions).


rule fetch_questdb:
    output:
        record=questdb_jar_record("{version}"),
    log:
        f"{RESULTS}/logs/fetch_questdb/{{version}}.log",
    localrule: True
    conda:
        "../envs/ingestbench.yaml"
    params:
        # No code digest: its record is ancient() to the jobs that use it, and a job forced
        # ahead of ancient() inputs hides them from Snakemake's planning, so a stale job after
        # it would not rerun. A new version is a new record (its path), so it is fetched anyway.
        settings=lambda w: {"version": w.version},
        version=lambda w: w.version,
        cache_dir=config["questdb"]["cache_dir"],
    script:
        "../scripts/fetch_questdb.py"
