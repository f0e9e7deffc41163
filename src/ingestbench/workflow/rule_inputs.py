"""What each rule's outputs depend on, so that Snakemake's rerun triggers see every change.

- The settings: for each rule, the slice of the validated config that changes its outputs. The
  rules pass it as `params:`, so editing `repeats` reruns the ingestions (and what follows them),
  editing `validation.rel_tolerance` the validations, a chart setting the charts. No secret is
  ever among them: a config names the environment variable that holds one, never the secret.
- The code: a digest of a rule's script and of every module of this package it imports,
  directly or through others (found by reading the imports, not from a list kept by hand). Passed
  as a param too: a changed module reruns the rules that run it, while a fresh clone (no
  Snakemake metadata yet) reruns nothing.

Light on purpose: the Snakefile imports this module while it parses.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ingestbench import CHECKOUT
from ingestbench.server.versions import by_label, highest_ilp_protocol, server_questdb, servers
from ingestbench.variants import CAPPED_METHODS, expand_spec, parse_variant_name
from ingestbench.workflow.result_keys import benchmark_config

PACKAGE = "ingestbench"
PACKAGE_DIR = CHECKOUT / "src" / PACKAGE

#: The `validation` key that shapes the ingestion's export, not the validation's verdict.
EXPORT_KEY = "export_piece_rows"


def server_settings(config: Mapping[str, Any], server: str | None = None) -> dict[str, Any]:
    """The `questdb` block of the jobs of `server` (a label; None: the config's first server):
    one version and at most one settings set, so an edit of another server's reruns none of
    these jobs, and the default server's block is what a config of one version always had."""
    chosen = by_label(config, server) if server else servers(config)[0]
    return server_questdb(benchmark_config(config)["questdb"], chosen)


def ilp_protocol(config: Mapping[str, Any], server: str | None = None) -> int:
    """The config's ILP protocol, at most the highest the server's version speaks (each version
    as it is: protocol 1 before 9.0; the methods that need 2 are unsupported there)."""
    version = server_settings(config, server)["version"]
    return min(config["ilp_protocol_version"], highest_ilp_protocol(version))


def ingest_settings(
    config: Mapping[str, Any], variant: str, server: str | None = None
) -> dict[str, Any]:
    """What the ingestion of `variant` (a variant name) on `server` (a label; None: the first)
    runs under, config-shaped: its params, recorded in its run file, and with
    `result_keys.without_effect` all its job reads (`result_keys.job_config`); the summary
    refuses a run file whose record differs."""
    method = parse_variant_name(variant).method
    return {
        "repeats": config["repeats"],
        "warmup_rows": config["warmup_rows"],
        "ilp_protocol_version": ilp_protocol(config, server),
        "table": config["table"],
        # The cap applies to the row loops and SQL only: no other ingestion reruns when it changes.
        "rows_cap": config["rows_cap"] if method in CAPPED_METHODS else None,
        "questdb": server_settings(config, server),
        "validation": {
            EXPORT_KEY: config["validation"][EXPORT_KEY],
            # The checks of every repeat against its source compare with this tolerance.
            "rel_tolerance": config["validation"]["rel_tolerance"],
        },
        # Absent unless readers run beside this variant: the settings of a run without them
        # stay what they were before readers existed.
        **({"readers": readers} if (readers := readers_settings(config, variant)) else {}),
    }


def readers_settings(config: Mapping[str, Any], variant: str) -> dict[str, Any] | None:
    """The `readers` section when `variant` runs with readers (a count is set and one of its
    `variants` patterns matches the name) or pinned cores; None otherwise."""
    section = config.get("readers") or {}
    if not section.get("counts") and not section.get("pin_cores"):
        return None
    if not any(fnmatch.fnmatchcase(variant, p) for p in section.get("variants", ["*"])):
        return None
    return dict(section)


def runs_with_readers(config: Mapping[str, Any]) -> bool:
    """Whether some variant runs with readers (a count set, its name matched): then the charts
    of their series are drawn. The config's variant specs stand for the plan here: the preflight
    refuses a variant that no dataset runs."""
    return bool((config.get("readers") or {}).get("counts")) and any(
        readers_settings(config, v.name) for spec in config["variants"] for v in expand_spec(spec)
    )


def readers_listing(config: Mapping[str, Any]) -> list[str]:
    """What `ingestbench variants` says of the readers: their counts and the variants they join."""
    section = config.get("readers") or {}
    if not runs_with_readers(config):
        return ["off (no reader count)"]
    joined = sorted({v.name for spec in config["variants"] for v in expand_spec(spec)
                     if readers_settings(config, v.name)})  # fmt: skip
    counts = ", ".join(map(str, section["counts"]))
    return [f"counts {counts} beside each repeat of {len(joined)} variants:", *joined]


def validate_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """What a validation ran under: the `validation` section but for the export's shape (the
    ingestion's) and whether the export is kept. `memory_limit` cannot change a verdict, but the
    job is given it, so it is here: a job reads only what reruns it."""
    return {k: v for k, v in config["validation"].items() if k not in (EXPORT_KEY, "keep_export")}


def dtype_matrix_settings(config: Mapping[str, Any], job: str | None = None) -> dict[str, Any]:
    """The matrix's cases and the server it runs them on (one job: `job` is None; the first)."""
    return {"dtype_matrix": config["dtype_matrix"], "questdb": server_settings(config)}


def chart_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    return dict(config["charts"])


def settings_differences(recorded: Mapping[str, Any], expected: Mapping[str, Any]) -> list[str]:
    """Dotted keys whose values differ between two settings records (a missing one differs)."""
    keys = sorted(set(recorded) | set(expected))
    out = []
    for key in keys:
        a, b = recorded.get(key), expected.get(key)
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            out += [f"{key}.{sub}" for sub in settings_differences(a, b)]
        elif a != b:
            out.append(key)
    return out


# -------------------------------------------------------------------------------- the code


def file_digest(path: str | Path) -> str:
    """16 hex digits over a file's bytes: a source file's content as a setting."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def code_digest(script: str | Path, modules: Iterable[str] = ()) -> str:
    """16 hex digits over a rule's script and every module of this package it imports, and over
    `modules` (dotted names it imports by name, such as an experiment's hooks) and theirs. With
    no `modules`, the digest it always had."""
    named = {f for name in modules for m in _module_files(name) for f in (m, *imported_modules(m))}
    found = imported_modules(Path(script).resolve()) | named
    files = [Path(script).resolve(), *sorted(found - {Path(script).resolve()})]
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(CHECKOUT)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@functools.cache
def imported_modules(source: Path) -> frozenset[Path]:
    """The package's module files that `source` imports, transitively (its own file excluded)."""
    seen: set[Path] = set()
    todo = [source]
    while todo:
        for module in _direct_imports(todo.pop()):
            if module not in seen:
                seen.add(module)
                todo.append(module)
    seen.discard(source)
    return frozenset(seen)


@functools.cache
def _direct_imports(source: Path) -> frozenset[Path]:
    """Modules of the package named in `source`: `import`/`from` statements anywhere (lazy ones
    inside functions too) and string constants that name a module (importlib.import_module)."""
    tree = ast.parse(source.read_text(), filename=str(source))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:  # the package imports absolutely
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Constant) and str(node.value).startswith(f"{PACKAGE}."):
            names.add(node.value)
    files = set()
    for name in names:
        files.update(_module_files(name))
    return frozenset(files)


def _module_files(name: str) -> list[Path]:
    """The file of module `name` and the __init__ files of the packages above it (importing a
    module runs them); nothing for a name outside the package or an attribute."""
    parts = name.split(".")
    if parts[0] != PACKAGE:
        return []
    files = []
    path = PACKAGE_DIR.parent
    for part in parts:
        path = path / part
        if (path / "__init__.py").is_file():
            files.append(path / "__init__.py")
        elif path.with_suffix(".py").is_file():
            files.append(path.with_suffix(".py"))
            break
        else:
            break
    return files
