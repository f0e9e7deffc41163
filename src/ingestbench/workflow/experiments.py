"""The experiments beside the backfill (the variant matrix: ingest, validate, summarize, charts),
one entry each in EXPERIMENTS, the one list every wiring point loops over: the Snakefile's
includes and `rule all`, the summarize rule's inputs and script, the preflight, the keys that
cannot change the backfill's results (workflow.result_keys), `ingestbench variants`.

An experiment is the config section of its key. It is *included* when the config has that
section (its rules file parsed, its checks run), and *active* when it also plans jobs (its `runs`
hook, or always): then `all` and the summary take its outputs. Readers ride inside the ingest
jobs (their settings join each ingestion's, their figures the run files, so they add no summary
input); the dtype matrix stays outside `all` and the summary (`in_all` False, `make run-dtypes`).

Its functions are named as "module:function" from the package and imported when called
(`hook`), as charts/registry.py names its drawings: the Snakefile imports this module while it
parses, and a module imported here would join the code digest (workflow.rule_inputs) of every
rule whose script imports this one.

Adding an experiment: docs/development.md ("Adding an experiment").
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Mapping
from typing import Any

from ingestbench.server import versions  # light: no imports of the package


@dataclasses.dataclass(frozen=True)
class Experiment:
    key: str  # its config section; present: the experiment is included
    rules: str  # its rules file, from the checkout
    settings: str  # (config, job or None) -> the settings slice its rule's job runs under
    # config -> the lines `ingestbench variants` prints for it: a heading, then one item a line
    listing: str
    bench: str | None  # its findings benchmark, from the checkout: benchmarks/bench_NAME.py
    changes_backfill: bool  # whether its key can change what the backfill measures
    check: str | None = None  # config -> one sentence per problem (the preflight)
    runs: str | None = None  # config -> whether it plans jobs; None: whenever included
    summary_inputs: tuple[str, ...] = ()  # files in the results folder the summary reads
    # (those files) -> (its rows of summary.csv or None, its section of summary.md)
    summary: str | None = None
    charts: tuple[str, ...] = ()  # its charts' names in charts/registry.py
    in_all: bool = True  # whether `all` (its charts) and the summary (its inputs) take it
    # Whether its summary inputs are one per server (`<results>/<name-stem>/<server>/<name>`),
    # made by a job per server, rather than one file over every server's jobs.
    per_server: bool = False
    # (its summary inputs) -> its part of the archived document, under `experiments.<key>`
    archive: str | None = None
    # Its section of the results page: a script of publish/page/ that registers the section's
    # render and its answer (page.js's SECTIONS) from its part of a document.
    page: str | None = None
    # What one item of its listing is, for the count line of `ingestbench variants` ("paced
    # job"); None: its items add no work of their own (readers ride inside the ingest jobs).
    counted_as: str | None = None


EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        key="readers",
        rules="rules/over_time.smk",
        settings="workflow.rule_inputs:readers_settings",
        listing="workflow.rule_inputs:readers_listing",
        bench="benchmarks/bench_sampler_cost.py",
        changes_backfill=True,  # readers run inside the ingest jobs, beside their repeats
        runs="workflow.rule_inputs:runs_with_readers",
        charts=("throughput_over_time",),
    ),
    Experiment(
        key="paced",
        rules="rules/paced.smk",
        settings="paced.settings:rule_settings",
        listing="paced.settings:listing",
        bench="benchmarks/bench_paced.py",
        changes_backfill=False,  # its jobs run on servers of their own, after the backfill's
        check="paced.settings:check",
        summary_inputs=("paced.csv",),
        summary="paced.summary:summary_part",
        charts=("paced",),
        archive="paced.summary:archive_part",
        page="paced.js",
        counted_as="paced job",
    ),
    Experiment(
        key="delivery",
        rules="rules/delivery.smk",
        settings="delivery.settings:rule_settings",
        listing="delivery.settings:listing",
        bench="benchmarks/bench_delivery.py",
        changes_backfill=False,
        check="delivery.settings:check",
        summary_inputs=("delivery.csv",),
        summary="delivery.summary:summary_part",
        charts=("delivery",),
        archive="delivery.summary:archive_part",
        page="delivery.js",
        per_server=True,  # its one job loads the dataset on one server: a job per server
        counted_as="delivery path",  # each under every fault of the section
    ),
    Experiment(
        key="dtype_matrix",
        rules="rules/dtypes.smk",
        settings="workflow.rule_inputs:dtype_matrix_settings",
        listing="dtypes.cases:listing",
        bench=None,  # `make run-dtypes` is its finding: dtype_matrix.md, cited by docs/dtypes.md
        changes_backfill=False,
        charts=("dtype_matrix",),
        in_all=False,
    ),
)


def hook(target: str) -> Callable[..., Any]:
    """The function a "module:function" string names (imported now)."""
    module, function = target.split(":")
    return getattr(importlib.import_module(f"ingestbench.{module}"), function)


def by_key(key: str) -> Experiment:
    found = [e for e in EXPERIMENTS if e.key == key]
    if not found:
        raise ValueError(f"no experiment {key!r}; the experiments: {[e.key for e in EXPERIMENTS]}")
    return found[0]


def included(config: Mapping[str, Any]) -> list[Experiment]:
    """The experiments whose section the config has: their rules are parsed, checks run."""
    return [e for e in EXPERIMENTS if config.get(e.key) is not None]


def active(config: Mapping[str, Any]) -> list[Experiment]:
    """The included experiments that plan jobs: `all` and the summary take their outputs."""
    return [e for e in included(config) if e.runs is None or hook(e.runs)(config)]


def settings(
    key: str, config: Mapping[str, Any], job: str | None = None, server: str | None = None
) -> dict[str, Any]:
    """The settings slice of experiment `key`'s rule (of its job `job`, where it has jobs) on
    `server` (a label; None: the first): its `questdb` block is that server's alone, so an
    experiment goes over the servers as the backfill does, without knowing of them."""
    out = hook(by_key(key).settings)(config, job)
    if "questdb" in out:
        chosen = versions.by_label(config, server) if server else versions.servers(config)[0]
        out["questdb"] = versions.server_questdb(out["questdb"], chosen)
    return out


def all_inputs(
    config: Mapping[str, Any], results: str, chart_files: Callable[[str, str], list[str]]
) -> list[str]:
    """What `rule all` takes of the active experiments besides the summary (which takes their
    summary inputs): their charts' files (`chart_files`: charts.registry's, which the Snakefile
    has; charts sit above this module)."""
    return [
        path
        for e in active(config)
        if e.in_all
        for name in e.charts
        for path in chart_files(name, f"{results}/plots")
    ]


def summary_inputs(config: Mapping[str, Any], results: str) -> dict[str, list[str]]:
    """The summarize rule's inputs of the active experiments, named by their keys."""
    return {
        e.key: [f"{results}/{name.split('.')[0]}/{server}/{name}"
                for name in e.summary_inputs for server in versions.server_labels(config)]
        if e.per_server else [f"{results}/{name}" for name in e.summary_inputs]
        for e in active(config)
        if e.summary is not None and e.in_all
    }  # fmt: skip


def summary_parts(inputs: Mapping[str, list[str]]) -> list[tuple[Any, str]]:
    """(rows or None, section) of each experiment with summary inputs, in EXPERIMENTS' order."""
    return [hook(e.summary)(inputs[e.key]) for e in EXPERIMENTS if e.key in inputs]


def summary_modules(config: Mapping[str, Any]) -> list[str]:
    """The modules of the active experiments' summary functions: the summarize rule's code."""
    return [f"ingestbench.{e.summary.split(':')[0]}" for e in EXPERIMENTS
            if e.key in summary_inputs(config, "")]  # fmt: skip


def section_checks(config: Mapping[str, Any]) -> list[str]:
    """The included experiments' problems, one sentence each, in EXPERIMENTS' order."""
    return [p for e in included(config) if e.check for p in hook(e.check)(config)]


def plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def listings(config: Mapping[str, Any], variants: int) -> tuple[str, list[str]]:
    """What `ingestbench variants` prints of the experiments: the counts of what the config's
    run does (`variants` of the backfill, then each experiment's items), and each included
    experiment's lines; one outside the run (off, or outside `all`) as its heading alone, so the
    listing says what `snakemake` with this config will run."""
    in_run = {e.key for e in active(config) if e.in_all}
    counts = [plural(variants, "variant")]
    lines = []
    for e in included(config):
        heading, *items = hook(e.listing)(config) or [""]
        if e.key not in in_run:
            lines.append(f"experiment {e.key}, not in this run: {heading}".rstrip(": "))
            continue
        if e.counted_as:
            counts.append(plural(len(items), e.counted_as))
        lines.append(f"experiment {e.key}: {heading}".rstrip(": "))
        lines += [f"  {item}" for item in items]
    return ", ".join(counts), lines
