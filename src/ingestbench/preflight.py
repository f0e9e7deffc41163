"""The preflight: everything about a config that can be known without ingesting, checked where the
config is read (the Snakefile, `ingestbench check`, `ingestbench variants`, the make targets that
run work), so that a mistake stops the run before any job, in one sentence naming the key, the
value and the fix.

It checks, after the schema (ingestbench.config):
- `results_dir` and `data_dir` lie outside the project's own folders (PROJECT_FOLDERS);
- every `*_env` key names a variable that is set (never printing its value);
- each own dataset's file exists and reads: its format, its schema (a Parquet footer, a CSV's
  header and first block) and its timestamp column, by the job's own describe pass
  (ingestbench.own.describe); a file a rule makes (EXAMPLES) is checked when it is made;
- each variant runs on some dataset (an error naming why where it runs on none; one note listing
  the datasets that leave variants out, and why);
- the servers: each version served by Maven Central (a committed list) or in the jar cache, each
  property of a settings set known to its version, none set twice (ingestbench.server.versions);
- each experiment's own checks, where the config has its section (its `check` in
  ingestbench.workflow.experiments).

It runs once per command: `ingestbench check --hash` prints the checked config's hash, which the
make targets pass to Snakemake in CHECKED_VARIABLE; the Snakefile skips its own check when that
is the hash of the config it parsed (check_unless_checked). A bare `snakemake` checks.

May import: errors, config, variants, catalogue, datasets, own, server.access (the
credentials' variables), server.versions and server.jar (the versions and properties of the
servers, the jars in the cache) and workflow.experiments (the experiments' checks).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ingestbench.catalogue import METHODS
from ingestbench.config import ConfigError, load_config, validate_config
from ingestbench.errors import UserError
from ingestbench.server.jar import cached_jar_path
from ingestbench.server.versions import axis_problems
from ingestbench.variants import as_list, expand_spec
from ingestbench.workflow.experiments import section_checks

#: The environment variable in which the make targets tell the Snakefile that `ingestbench check`
#: checked the config it runs with: that config's hash (checked_hash).
CHECKED_VARIABLE = "INGESTBENCH_CHECKED"

#: The project's own top-level folders: a run's results or data there would overwrite what the
#: project ships (the committed reference run, the docs, the code). A fixed list, since a test's
#: copy of the workflow has no .git to ask; tests/unit/test_preflight.py holds it complete.
PROJECT_FOLDERS = frozenset({
    "archive", "benchmarks", "cluster", "configs", "docs", "envs", "findings", "profiles",
    "reference", "report", "rules", "schemas", "scripts", "src", "tests",
    ".ci", ".git", ".github", ".snakemake", ".venv", "site",
})  # fmt: skip
#: Own files a rule of the workflow makes (rule own_example: its output and wildcard
#: constraints): checked when they are made, not before.
EXAMPLES = re.compile(r"^results/examples/(trades|flights)-[0-9]+\.(parquet|csv)$")


class PreflightError(ConfigError):
    """Every problem the preflight found, one sentence each: a line each in the message, which
    the CLI prints after "ERROR: " (so each line starts so)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\nERROR: ".join(problems))
        self.problems = problems


#: A results or data folder inside one of PROJECT_FOLDERS.
IN_PROJECT_FOLDER = (
    "{key} is {value!r}, inside the project's own folder {folder}/, which a run would overwrite; "
    "set {key} to a folder under results/ (such as results/mine) or another folder of its own."
)


def folder_problems(config: Mapping[str, Any]) -> list[str]:
    """`results_dir` or `data_dir` in one of the project's own folders, or the checkout itself."""
    out = []
    for key in ("results_dir", "data_dir"):
        value = str(config[key])
        parts = Path(os.path.normpath(value)).parts
        if not parts or parts[0] == ".":
            out.append(f"{key} is {value!r}, the workflow's own folder, where a run would write "
                       f"among the project's files; set {key} to a folder of its own, such as "
                       f"results/mine.")  # fmt: skip
        elif parts[0] in PROJECT_FOLDERS:
            out.append(IN_PROJECT_FOLDER.format(key=key, value=value, folder=parts[0]))
    return out


def _env_keys(value: Any, where: str) -> list[tuple[str, str]]:
    """(key path, variable name) of every `*_env` key, at any depth."""
    if isinstance(value, Mapping):
        return [
            found
            for k, v in value.items()
            for found in (
                [(f"{where}.{k}".lstrip("."), v)] if str(k).endswith("_env") and isinstance(v, str)
                else _env_keys(v, f"{where}.{k}")
            )
        ]  # fmt: skip
    if isinstance(value, list):
        return [f for i, v in enumerate(value) for f in _env_keys(v, f"{where}[{i}]")]
    return []


def env_problems(config: Mapping[str, Any], environ: Mapping[str, str] = os.environ) -> list[str]:
    """Every `*_env` key whose variable is unset or empty: named, its value never read out."""
    from ingestbench.server.access import UNSET_VARIABLE

    return [UNSET_VARIABLE.format(key=key, name=name) for key, name in _env_keys(config, "")
            if not environ.get(name)]  # fmt: skip


def tls_problems(config: Mapping[str, Any]) -> list[str]:
    """A `questdb.tls_roots` that names no file (the job's own check)."""
    from ingestbench.server.access import tls_roots_problem

    problem = tls_roots_problem(config["questdb"].get("tls_roots"))
    return [problem] if problem else []


def own_problems(config: Mapping[str, Any]) -> list[str]:
    """Each own file checked as its describe job will check it (exists, a format the workflow
    reads, its schema and timestamp column), and its manifest's name not taken by another file."""
    from ingestbench.datasets import OWN, dataset_entries, of_entry
    from ingestbench.own.dataset import OwnDataError, OwnDataset

    out = []
    for entry in config["datasets"]:
        if not OWN.claims_entry(entry) or EXAMPLES.match(os.path.normpath(str(entry["path"]))):
            continue
        try:
            dataset = OwnDataset.from_config(entry)
            dataset.require_exists()
            from ingestbench.own.describe import describe  # pyarrow: only for own data

            describe(dataset)
        except OwnDataError as exc:
            out.append(str(exc))
    try:
        entries = list(dataset_entries(config).values())
    except UserError:  # a derived copy of a file said above
        entries = config["datasets"]
    for entry in entries:
        try:
            of_entry(entry).check_entry(entry, config["data_dir"])
        except UserError as exc:
            out.append(str(exc))
    return out


def _why_no_variant(method: str, spec: Mapping[str, Any]) -> str | None:
    """Why a spec's method makes no variant, from the catalogue: the library, format or
    transport it asks that the method does not take."""
    m = METHODS[method]
    asked = {
        "library": as_list(spec.get("library"), m.libraries),
        "format": as_list(spec.get("format"), m.formats),
        "transport": as_list(spec.get("transport"), m.transports),
    }
    takes = {"library": m.libraries, "format": m.formats, "transport": m.transports}
    if m.family in ("server", "sql"):
        del asked["transport"]  # the server's own request, or PGWire, whatever was asked
    if m.family == "server":
        del asked["library"]  # the server reads the file: no library
    for key, values in asked.items():
        if not set(values) & set(takes[key]):
            return (f"{method} takes {key} {' or '.join(takes[key])}, and the spec gives "
                    f"{', '.join(map(str, values))}")  # fmt: skip
    return None


def _left_out_why(entry: Mapping[str, Any]) -> str:
    from ingestbench.datasets import OWN, of_entry
    from ingestbench.own.dataset import OwnDataset

    if OWN.claims_entry(entry):
        return f"its file is {OwnDataset.from_config(dict(entry)).format}"
    return f"a {of_entry(dict(entry)).name} dataset does not run it"


#: Why an own dataset leaves variants out (ingestbench.own.dataset.own_variants).
OWN_FORMATS_RULE = (
    "an own dataset runs only the variants that read its file's format, and those of the ILP "
    "text made from it"
)


def variant_problems(config: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(errors, notes): a spec that makes no variant, or a variant no dataset runs, is an error
    naming why; the variants some datasets leave out are one note."""
    from ingestbench.datasets import dataset_entries, plan

    planned = plan(dict(config))
    entries = dataset_entries(dict(config))
    labels = [d["label"] for d in config["datasets"]]
    errors: list[str] = []
    left_out: dict[str, list[str]] = {}
    for i, spec in enumerate(config["variants"]):
        variants = expand_spec(spec)
        if not variants:
            why = [w for m in as_list(spec["method"]) if (w := _why_no_variant(m, spec))]
            why = "; ".join(why) or "no combination of its values makes sense"
            errors.append(f"variants[{i}] makes no variant ({why}); change its values as "
                          f"docs/methods.md lists them.")  # fmt: skip
            continue
        names = [n for n, (label, _) in planned.items() if label in spec.get("datasets", labels)]
        for v in variants:
            runs = [n for n in names if v in planned[n][1]]
            if not runs:
                whys = sorted({f"{n}: {_left_out_why(entries[n])}" for n in names})
                errors.append(f"variants[{i}] plans {v.name}, which runs on no dataset "
                              f"({'; '.join(whys)}; {OWN_FORMATS_RULE}); drop it from "
                              f"variants[{i}], or add a dataset it reads.")  # fmt: skip
            for n in names:
                if n not in runs and runs:
                    left_out.setdefault(n, []).append(v.name)
    notes = []
    if left_out:
        said = "; ".join(f"{n} ({_left_out_why(entries[n])}) leaves out "
                         f"{', '.join(sorted(set(vs)))}" for n, vs in left_out.items())  # fmt: skip
        notes.append(f"variants left out for some datasets, as {OWN_FORMATS_RULE}: {said}.")
    return errors, notes


def check(config: dict[str, Any]) -> list[str]:
    """Validate `config` in place (the schema's defaults filled in), then every preflight check;
    the notes to print. Raises PreflightError with every problem found."""
    validate_config(config)
    problems = folder_problems(config) + env_problems(config) + tls_problems(config)
    cache_dir = config["questdb"]["cache_dir"]
    dataset_errors = own_problems(config)
    problems += dataset_errors
    notes: list[str] = []
    if not dataset_errors:  # a file that does not read leaves its variants unknown
        errors, notes = variant_problems(config)
        problems += errors
    problems += axis_problems(config, lambda v: cached_jar_path(v, cache_dir).is_file())
    problems += section_checks(config)  # each experiment's, one sentence per problem
    if problems:
        raise PreflightError(problems)
    return notes


def say(lines: list[str], prefix: str) -> None:
    for line in lines:
        print(f"{prefix}: {line}", file=sys.stderr)


def check_or_exit(config: dict[str, Any]) -> None:
    """The Snakefile's preflight: the notes printed; on a problem, every sentence printed and the
    process ends with status 1 (a WorkflowError would add a line of the Snakefile to each)."""
    try:
        say(check(config), "NOTE")
    except UserError as exc:
        say(getattr(exc, "problems", [str(exc)]), "ERROR")
        sys.exit(1)


def checked_hash(config: Mapping[str, Any]) -> str:
    """The config as read (before the schema fills its defaults in), as 16 hex digits: what
    `ingestbench check` checked, and what the Snakefile compares with what it parsed."""
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]


def check_unless_checked(config: dict[str, Any], environ: Mapping[str, str] = os.environ) -> None:
    """The Snakefile's preflight, once per command: skipped (the schema's defaults filled in
    only) where CHECKED_VARIABLE holds the hash of this very config, which `ingestbench check`
    checked just before (a make target); otherwise check_or_exit."""
    if environ.get(CHECKED_VARIABLE) == checked_hash(config):
        validate_config(config)
    else:
        check_or_exit(config)


def load_checked(path: str | Path, said: list[str] | None = None) -> dict[str, Any]:
    """The config the workflow runs with `--configfile path`, checked; the notes printed. With
    `said`, the hash of the config as read is appended to it (checked_hash)."""
    config = load_config(path, validate=False)
    read = checked_hash(config)
    say(check(config), "NOTE")
    if said is not None:
        said.append(read)
    return config


def add_check_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "check",
        help="check a config before any job: the schema, the folders, the variables, your own "
        "files and the variant plan (the make targets run it before Snakemake)",
    )
    parser.add_argument("--config", default="config.yaml", help="default: %(default)s")
    parser.add_argument(
        "--hash",
        action="store_true",
        help=f"print only the checked config's hash (the make targets pass it to Snakemake in "
        f"{CHECKED_VARIABLE}, so that the Snakefile does not check it again)",
    )
    parser.set_defaults(func=run_check)
    return parser


def run_check(args: argparse.Namespace) -> int:
    said: list[str] = []
    try:
        load_checked(args.config, said)
    except UserError as exc:
        say(getattr(exc, "problems", [str(exc)]), "ERROR")
        return 1
    if args.hash:  # stdout is the hash alone; what people read goes to stderr
        print(f"{args.config}: no problem found before any job.", file=sys.stderr)
        print(said[0])
    else:
        print(f"{args.config}: no problem found before any job.")
    return 0
