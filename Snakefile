# Benchmark: the fastest correct way to get a dataframe into QuestDB (TSBS cpu dataset).
# See README.md for the commands and ../shared/DESIGN.md-style notes in the code for the design.

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version

from ingestbench.config import ConfigError, validate_config

min_version("9.0")


configfile: "config.yaml"


try:
    validate_config(config)
except ConfigError as exc:
    raise WorkflowError(str(exc)) from None


include: "rules/common.smk"


wildcard_constraints:
    dataset="cpu-[A-Za-z0-9-]+",
    variant="[a-z_]+-[a-z_]+-[a-z]+-[a-z]+(-[wb][0-9]+)?",


include: "rules/data.smk"
include: "rules/server.smk"
include: "rules/ingest.smk"
include: "rules/validate.smk"
include: "rules/report.smk"


rule all:
    default_target: True
    input:
        "results/summary.csv",
        "results/summary.md",
        "results/seed_comparison.md",
        charts_files(),
