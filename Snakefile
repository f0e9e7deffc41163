# Benchmark: the fastest correct way to get a dataframe into QuestDB (TSBS cpu and iot data).
# README.md describes the commands, the layout and the results; rules/ holds the stages.
# Run it from the venv that `make install` makes (`make run`, or .venv/bin/snakemake): the rules'
# code and its pinned libraries are there. src/ goes on the path first, so the package imports
# from this checkout even where it is not installed.

import sys

sys.path.insert(0, f"{workflow.basedir}/src")

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version

from ingestbench.config import validate_config
from ingestbench.datasets import dataset_pattern
from ingestbench.preflight import check_unless_checked
from ingestbench.storage.disk import DiskSpaceError
from ingestbench.workflow.experiments import all_inputs, included
from ingestbench.workflow.rule_records import rerun_what_changed

min_version("9.0")


configfile: "config.yaml"


# The preflight (ingestbench.preflight): every mistake the config can show before any job, each
# as one sentence, then exit 1; skipped where `ingestbench check` has just checked this very
# config (the make targets). A job Snakemake starts in a process of its own (a cluster's) reads
# the config the main process checked: the schema's defaults only.
if workflow.is_main_process:
    check_unless_checked(config)
else:
    validate_config(config)

# A job whose outputs were made under other settings or code than now reruns, also where
# Snakemake has no metadata of it (a fresh clone, a copied results folder): rule_records.
rerun_what_changed()


include: "rules/common.smk"


wildcard_constraints:
    dataset=dataset_pattern(),
    # A server's label: its version, and its settings set's name (ingestbench.server.versions).
    server="[0-9]+\\.[0-9]+\\.[0-9]+(-[a-z0-9_]+)?",
    version="[0-9]+\\.[0-9]+\\.[0-9]+",
    variant="[a-z_]+-[a-z_]+-[a-z]+-[a-z]+(-[wb][0-9]+)?(-c([0-9]+|all))?",


include: "rules/data.smk"
include: "rules/server.smk"
include: "rules/ingest.smk"
include: "rules/validate.smk"
include: "rules/report.smk"


# The experiments beside the backfill whose section the config has, each its rules file
# (ingestbench.workflow.experiments: readers, paced ingestion, delivery, the dtype matrix).
for _experiment in included(config):

    include: _experiment.rules


# Before any job runs (not in a dry run): stop if the run cannot fit on the disk.
onstart:
    try:
        check_disk_space()
    except DiskSpaceError as exc:
        raise WorkflowError(str(exc)) from None


rule all:
    default_target: True
    input:
        f"{RESULTS}/summary.csv",
        f"{RESULTS}/summary.md",
        f"{RESULTS}/published_comparison.md",
        charts_files(),
        # What the experiments the config runs add (the dtype matrix: `make run-dtypes`).
        all_inputs(config, RESULTS, chart_files),
