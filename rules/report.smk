# Results people read: the recorded environment and the summary table; the charts drawn from
# them are in charts.smk (which reference/Snakefile shares to redraw the reference runs).

import os

from ingestbench.workflow.result_keys import config_hash
from ingestbench.workflow.experiments import summary_inputs, summary_modules
from ingestbench.workflow.rule_inputs import file_digest, ingest_settings

LOCK = os.path.join(workflow.basedir, "requirements.lock")


rule environment:
    input:
        # ancient(): its content is in the settings below, so a checkout's new file time (a
        # fresh clone beside a results folder from elsewhere) reruns nothing.
        lock=ancient(LOCK),
        # each server's jar: the record lists every server
        jar=questdb_jar_inputs(),
    output:
        report(
            f"{RESULTS}/environment.json",
            caption="../report/environment.rst",
            category="Environment",
        ),
    log:
        job=f"{RESULTS}/logs/environment.log",
        server=f"{RESULTS}/logs/questdb/environment.log",
    localrule: True
    conda:
        "../envs/ingestbench.yaml"
    resources:
        questdb=1,
    params:
        # The checkout holding the lock file: its git commit is recorded.
        workflow_dir=lambda w, input: os.path.dirname(os.path.abspath(input.lock)),
        # A changed benchmark config or lock re-records the environment (and so the tables and
        # charts).
        settings={"config_hash": config_hash(config), "lock": file_digest(LOCK)},
        code=script_code("environment.py"),
    script:
        "../scripts/environment.py"


rule summarize:
    input:
        # The files of each experiment the config runs whose rows and section join the
        # summary, named by its key (ingestbench.workflow.experiments).
        **summary_inputs(config, RESULTS),
        runs=run_files(),
        validations=validation_files(),
        environment=f"{RESULTS}/environment.json",
        # Each dataset's profile: an own dataset's manifest, a TSBS dataset's expected file.
        profiles=profile_sources(),
    output:
        csv=report(
            f"{RESULTS}/summary.csv",
            caption="../report/summary.rst",
            category="Summary",
        ),
        md=f"{RESULTS}/summary.md",
        profiles=f"{RESULTS}/profiles.json",
        profiles_table=report(
            f"{RESULTS}/profiles.csv",
            caption="../report/profiles.rst",
            category="Summary",
        ),
    log:
        f"{RESULTS}/logs/summarize.log",
    localrule: True
    conda:
        "../envs/ingestbench.yaml"
    params:
        # What each run file must have run under: the summary refuses one that differs.
        settings={
            "runs": {
                run_path(srv, ds, v): ingest_settings(config, v, srv)
                for srv, ds, v in run_pairs()
            }
        },
        # With the experiments' summary functions, which the script imports by name.
        code=script_code("summarize.py", summary_modules(config)),
    script:
        "../scripts/summarize.py"


include: "charts.smk"


rule charts:
    # Target: the summary and every chart of this experiment (what is stale reruns first).
    input:
        charts_files(),
        f"{RESULTS}/summary.csv",
        f"{RESULTS}/summary.md",
