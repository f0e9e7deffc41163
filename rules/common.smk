# Helpers shared by all the .smk files: the experiment's folders, its datasets and the variant
# matrix, and what each rule depends on. The matrix itself is decided in ingestbench.variants and
# the settings each rule depends on in ingestbench.workflow.rule_inputs; this file only turns them into
# file lists and params.

import sys
from pathlib import Path
from types import SimpleNamespace

from snakemake.logging import logger

from ingestbench.charts.registry import chart_files, chart_paths, report_charts
from ingestbench.datasets import dataset_entries, of_entry, plan
from ingestbench.preflight import say
from ingestbench.storage.disk import check_needs, workflow_needs
from ingestbench.workflow.rule_inputs import code_digest, readers_settings
from ingestbench.server.versions import by_label, server_labels
from ingestbench.server.certificate import UNVERIFIED
from ingestbench.variants import (
    NO_COPY_ROOT,
    NO_COPY_ROOT_PLANNED,
    no_such_variant,
    parse_variant_name,
    server_unsupported,
)

# This experiment's results (each config names its own folder) and the datasets (shared).
RESULTS = config["results_dir"].rstrip("/")
DATA = config["data_dir"].rstrip("/")
SCRIPTS = Path(workflow.basedir) / "scripts"

# Every dataset: the config's, and those derived from them (an own one's sorted copy).
DATASET_CONFIGS = dataset_entries(config)
# Each dataset's kind (ingestbench.datasets), which every helper below asks instead of branching.
KINDS = {name: of_entry(d) for name, d in DATASET_CONFIGS.items()}
# The plan: each dataset's variants (those its kind supports).
VARIANTS = {name: variants for name, (_label, variants) in plan(config).items()}
# A sorted copy's source, by the copy's name.
SORTED_COPIES = {
    name: d["derived"]["from"]
    for name, d in DATASET_CONFIGS.items()
    if d.get("derived")
}
# The servers (ingestbench.server.versions): each version, with its defaults and with each
# settings set; every output path of the backfill and the experiments has the server's label as
# a level (`server_dir`), the default config's one server too.
SERVERS = server_labels(config)


def server_dir(server):
    """The path level of a server's outputs: its label (a wildcard's value, or `{server}`)."""
    return server


def server_version(server):
    return by_label(config, server).version


# Variants the configured server cannot run: said once here; their jobs record them unsupported.
_QDB = config["questdb"]
_NOT_HERE = sorted(
    {
        v.name
        for vs in VARIANTS.values()
        for v in vs
        if server_unsupported(v.method, _QDB["mode"], _QDB["copy_root"])
    }
)
if _NOT_HERE:
    logger.warning(
        NO_COPY_ROOT_PLANNED.format(variants=", ".join(_NOT_HERE), reason=NO_COPY_ROOT)
    )
if _QDB["mode"] == "external" and _QDB["tls"] and not _QDB["tls_verify"]:
    logger.warning(UNVERIFIED.format(host=_QDB["host"]))


def script_code(name, modules=()):
    """The digest of a rule's script and every module of the package it imports (and of
    `modules`, which it imports by name): a param, so a change of that code reruns the rule.
    """
    return code_digest(SCRIPTS / name, modules)


def dataset_config(name):
    return DATASET_CONFIGS[name]


def datasets_made_by(rule):
    """The datasets whose files the data rule `rule` writes ("generate", "describe")."""
    return [name for name, kind in KINDS.items() if kind.data_rule == rule]


def dataset_formats(name):
    """The formats the dataset's data rule writes, as its kind needs them for its variants. A
    TSBS dataset's Parquet always (validation reads it) and the formats its variants read; an own
    dataset's ILP text only. The ILP text is big (disk.FILE_BYTES_PER_ROW), so only for datasets
    that send it.
    """
    return KINDS[name].formats(VARIANTS.get(name, []))


def dataset_sources(name):
    """The files a dataset's data rule reads (the user's file; none for generated data)."""
    return KINDS[name].source_files(DATASET_CONFIGS[name])


def dataset_path(name, fmt):
    return f"{DATA}/{name}.{fmt}"


def data_input(name, fmt):
    """The file an ingestion of format `fmt` reads: an own dataset's is the user's file where it
    is (its ILP text excepted), a TSBS dataset's the generated one."""
    return KINDS[name].data_input(DATASET_CONFIGS[name], fmt, dataset_path(name, fmt))


def validation_source(name):
    """What DuckDB reads the expected rows from: the user's file, or the generated Parquet."""
    parquet = dataset_path(name, "parquet")
    return KINDS[name].validation_source(DATASET_CONFIGS[name], parquet)


def dataset_file(name, fmt):
    """A dataset's file in one format; an iot dataset's Parquet and CSV are directories of one
    file per table (its ILP text is one file for both tables)."""
    path = dataset_path(name, fmt)
    return directory(path) if KINDS[name].file_is_directory(fmt) else path


def profile_sources():
    """Where each dataset's profile is: an own dataset's manifest (its describe pass), a TSBS
    dataset's expected aggregates (the pass that reads its Parquet)."""
    return [KINDS[name].profile_source(name, DATA, RESULTS) for name in VARIANTS]


def derived_inputs(name):
    """A sorted copy's describe inputs besides its file: its source's manifest and the sort's
    record; none for any other dataset."""
    if name not in SORTED_COPIES:
        return {}
    return {
        "source": f"{DATA}/{SORTED_COPIES[name]}.manifest.json",
        "sort": f"{DATA}/{name}.sort.json",
    }


def variant_config(name):
    """A variant's settings from its name. A name that is none (a typo in a target) ends the
    run here in one sentence naming the closest planned variant, with status 1 as the preflight
    does: raised, it would end in an InputFunctionException and its traceback."""
    try:
        return parse_variant_name(name).to_dict()
    except ValueError:
        planned = [v.name for variants in VARIANTS.values() for v in variants]
        say([no_such_variant(name, planned)], "ERROR")
        sys.exit(1)


def run_pairs():
    """(server, dataset, variant) of every ingestion: each variant on each server."""
    return [
        (server, ds, v.name)
        for server in SERVERS
        for ds, variants in VARIANTS.items()
        for v in variants
    ]


def run_path(server, ds, variant):
    return f"{RESULTS}/runs/{server_dir(server)}/{ds}/{variant}.json"


def run_files():
    return [run_path(*run) for run in run_pairs()]


def validation_files():
    return [
        f"{RESULTS}/validation/{server_dir(server)}/{ds}/{v}.json"
        for server, ds, v in run_pairs()
    ]


def export_output(path):
    """The export that validation reads: kept until the next ingestion of its variant (so
    validation can rerun alone) unless validation.keep_export is false."""
    out = directory(path)
    return out if config["validation"]["keep_export"] else temp(out)


def questdb_jar_input(w=None):
    """What a server job depends on: the configured jar, this workflow's record of the cached
    jar of its server's version (`w.server`; without wildcards, the first server's), or nothing
    (external). The cached jar itself is shared by every clone and never an input: its mtime
    must not rerun anything. The record is ancient() for the same reason; its path names the
    version, so a new version still reruns the server jobs."""
    qdb = config["questdb"]
    if qdb["mode"] == "external":
        return []
    if qdb["jar"]:
        return qdb["jar"]
    server = getattr(w, "server", None) or SERVERS[0]
    return ancient(questdb_jar_record(server_version(server)))


def questdb_jar_inputs():
    """The jar inputs of a job that starts every server in turn (the environment's): the
    record of each version's jar."""
    if config["questdb"]["mode"] == "external" or config["questdb"]["jar"]:
        return questdb_jar_input()
    one_each = {server_version(s): s for s in reversed(SERVERS)}
    return [
        questdb_jar_input(SimpleNamespace(server=s))
        for s in reversed(one_each.values())
    ]


def questdb_jar_record(version):
    return f"{RESULTS}/questdb/questdb-{version}.json"


def charts_files():
    return chart_paths(f"{RESULTS}/plots")


def check_disk_space():
    """Raise DiskSpaceError (one sentence) if the datasets still to generate, and the data of
    one ingestion job of the largest dataset still to ingest, do not fit the free space.
    """
    rows = {
        name: KINDS[name].rows(d, name, DATA) for name, d in DATASET_CONFIGS.items()
    }
    to_generate = []
    for name in DATASET_CONFIGS:
        missing = [
            f for f in dataset_formats(name) if not Path(dataset_path(name, f)).exists()
        ]
        to_generate.append((rows[name], missing))
    pending = {
        (ds, v) for srv, ds, v in run_pairs() if not Path(run_path(srv, ds, v)).exists()
    }
    # A derived dataset not yet written (a sorted copy: about its source's bytes, and DuckDB's
    # spill as much again).
    copies = [
        nbytes
        for name, d in DATASET_CONFIGS.items()
        if (nbytes := KINDS[name].derived_bytes(d))
    ]
    check_needs(
        workflow_needs(
            to_generate,
            [rows[ds] for _srv, ds, v in run_pairs() if (ds, v) in pending],
            results=Path(RESULTS),
            embedded_server=config["questdb"]["mode"] == "embedded",
            data=Path(DATA),
            keep_exports=config["validation"]["keep_export"],
            sorted_copies=copies,
        )
    )


def readers_runs():
    """The run files of the variants that run with readers (none when readers are off)."""
    return [
        run_path(server, ds, v)
        for server, ds, v in run_pairs()
        if readers_settings(config, v) and config["readers"]["counts"]
    ]
