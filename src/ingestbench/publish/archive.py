"""One finished run as one self-describing JSON document in `archive/`.

A document holds what a reader needs to trust and place a result without the checkout it came
from: the machine, every version (QuestDB and its non-default settings, the client libraries,
Python, Java), the commit, the config and its hash, the date, the datasets, and per variant the
median/min/max of every phase and rate, CPU per 1M rows, client memory, the table's size on
disk, whether every row was validated, and the fraction of the wire ceiling; each dataset's
profile and the recommendation drawn from the run (results.profile_text); a variant whose
method cannot load the dataset (own data) is there with `status` unsupported and the reason. It
is built from a results folder's summary.csv and environment.json, and checked against
schemas/archive.schema.json when written and when read, so that a document contributed by pull
request is refused in one sentence rather than half-read.

File names say machine, date and commit (`<date>_<machine>_<commit>_<label>.json`), so
contributions from many machines sit side by side without colliding.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import re
from pathlib import Path
from typing import Any

import jsonschema

from ingestbench import CHECKOUT
from ingestbench.errors import UserError
from ingestbench.results.profile_text import profile_text
from ingestbench.results.records import STATS, TIMES
from ingestbench.results.summary.rows import STATUS, UNSUPPORTED
from ingestbench.storage.files import load_json, write_json_atomic

log = logging.getLogger(__name__)

#: Bump when a field changes meaning or goes away; READABLE lists the versions readers take.
ARCHIVE_VERSION = 1
READABLE = (1,)
SCHEMA_PATH = CHECKOUT / "schemas" / "archive.schema.json"
KIND = "ingestbench run"
#: The packages whose versions a reader compares runs by (the rest stay in environment.json).
PACKAGES = ("questdb", "pandas", "polars", "pyarrow", "duckdb", "numpy", "snakemake")
#: Server settings that say where a run's server listened or kept its files, not how it ran.
_PLACE = re.compile(r"(\.bind\.to|\.root)$")


class ArchiveError(UserError):
    pass


@functools.cache
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text())


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-") or "unknown"


def machine_id(machine: dict[str, Any]) -> str:
    """What makes two machines comparable: CPU model, logical cores and RAM, as a slug."""
    ram = machine.get("ram_bytes")
    ram_part = f"{round(ram / 2**30)}gib" if ram else "ram-unknown"
    return slug(f"{machine.get('cpu_model') or 'cpu-unknown'} {machine.get('cores_logical')}c") + (
        f"-{ram_part}"
    )


def config_on_machine(doc: dict[str, Any]) -> tuple[str, str]:
    """What makes two archived runs runs of one config on one machine (the server axis holds
    each cell against every such run)."""
    return doc["machine"]["id"], doc["workflow"]["config_hash"]


def _number(value: Any) -> float | int | None:
    """A JSON number from a summary cell (NaN and missing become null)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if math.isnan(number):
        return None
    return int(number) if number.is_integer() and abs(number) < 2**53 else number


def _int(value: Any) -> int | None:
    number = _number(value)
    return None if number is None else int(number)


def _stats(row: dict[str, Any], prefix: str) -> dict[str, float | None]:
    return {stat: _number(row.get(f"{prefix}_{stat}")) for stat in STATS}


def _per_1m(row: dict[str, Any], side: str) -> float | None:
    value = _number(row.get(f"{side}_cpu_s_per_1m_rows"))
    if value is None:  # a summary from before the column: the same ratio of medians
        cpu, rows = _number(row.get(f"{side}_cpu_s_median")), _number(row.get("rows"))
        value = cpu / rows * 1e6 if cpu is not None and rows else None
    return value


def _validated(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    return {"True": True, "False": False, "true": True, "false": False}.get(str(value))


def variant_entry(row: dict[str, Any], several_servers: bool = False) -> dict[str, Any]:
    """One summary row as the archive's variant record; in a run of several servers its
    `name` (what the page and the history key it by) names its server too."""
    disk = _number(row.get("table_disk_mib_median"))
    server = row.get("server") if isinstance(row.get("server"), str) else None
    return {
        "dataset": row["dataset"],
        "variant": row["variant"],
        **({"server": server} if server else {}),
        "name": f"{row['variant']} @ {server}" if several_servers and server else row["variant"],
        "library": row["library"],
        "method": row["method"],
        "format": row["format"],
        "transport": row["transport"],
        "workers": _int(row.get("workers")),
        "batch_rows": _int(row.get("batch_rows")),
        "rows": _int(row.get("rows")),
        "repeats": _int(row.get("repeats")),
        "phases_s": {phase: _stats(row, f"{phase}_s") for phase in TIMES},
        "rows_per_s": _stats(row, "rows_per_s"),
        "send_rows_per_s": _stats(row, "send_rows_per_s"),
        "mib_per_s": _stats(row, "mib_per_s"),
        "client_cpu_s_per_1m_rows": _per_1m(row, "client"),
        "server_cpu_s_per_1m_rows": _per_1m(row, "server"),
        "client_rss_bytes": _int(row.get("client_rss_bytes_max")),
        "table_disk_bytes": None if disk is None else int(disk * 2**20),
        "validated": _validated(row.get("validated")),
        "ceiling_fraction": _number(row.get("ceiling_fraction")),
        # Another QuestDB or job shared the machine during its repeats (ingest.contention).
        "contended": _validated(row.get("contended")) is True,
        # Readers beside the repeats (ingestbench.readers): absent in a run without them.
        **({"readers": readers_entry(row)} if _present(row.get("reader_counts")) else {}),
        # The method cannot load the dataset (own data): the reason, and no figures.
        **({"status": UNSUPPORTED, "reason": str(row.get("reason"))}
           if row.get(STATUS) == UNSUPPORTED else {}),
    }  # fmt: skip


def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def readers_entry(row: dict[str, Any]) -> dict[str, Any]:
    """A variant's figures with readers (results.summary.readers), per reader count."""
    counts = [int(c) for c in str(row["reader_counts"]).split("/")]

    def of(prefix: str, stats: tuple[str, ...], suffix: str) -> dict[str, Any]:
        return {s: _number(row.get(f"{prefix}_{s}{suffix}")) for s in stats}

    by_count = []
    for n in counts:
        entry = {"readers": n, "rows_per_s": _number(row.get(f"rows_per_s_median_r{n}")),
                 "slowdown": _number(row.get(f"slowdown_r{n}")),
                 "lag_s": {s: _number(row.get(f"lag_s_{s}_r{n}"))
                           for s in ("p50", "p95", "p99", "max")}}  # fmt: skip
        if n > 0:
            entry |= {
                "query_ms": {s: _number(row.get(f"query_{s}_ms_r{n}")) for s in QUERY_STATS},
                "qps": _number(row.get(f"qps_r{n}")),
                "query_ms_idle": {
                    s: _number(row.get(f"query_{s}_ms_idle_r{n}")) for s in QUERY_STATS
                },  # fmt: skip
                "qps_idle": _number(row.get(f"qps_idle_r{n}")),
                "errors": _int(row.get(f"reader_errors_r{n}")),
                "readers_behind": _int(row.get(f"readers_behind_r{n}")),
            }
        by_count.append(entry)
    basis = row.get("lag_basis")  # "n/a" reads back from summary.csv as a missing value
    return {"lag_basis": basis if isinstance(basis, str) else "n/a", "rate_per_s": _number(
        row.get("reader_rate_per_s")), "by_count": by_count}  # fmt: skip


#: The query latency percentiles a readers' entry keeps (results.summary.readers).
QUERY_STATS = ("p50", "p95", "p99")
#: Points kept per line of a series in the archive (evenly spaced in time): enough for the page.
SERIES_POINTS = 150


def series_entries(results: Path, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The over-time series of the variants that ran with readers (each reader count's first
    repeat), thinned to SERIES_POINTS points per line, from the files beside the run files."""
    import pandas as pd

    out = []
    for r in rows:
        if not _present(r.get("reader_counts")):
            continue
        # Beside its run file: runs/<server>/<dataset>/, or runs/<dataset>/ before the server level
        server = r.get("server") if _present(r.get("server")) else ""
        path = Path(results) / "runs" / server / r["dataset"] / f"{r['variant']}.series.csv"
        if not path.is_file():
            continue
        df = pd.read_csv(path)
        for n, group in df.groupby("readers"):
            group = group[group["repeat"] == group["repeat"].min()]
            step = max(1, len(group) // SERIES_POINTS)
            group = group.iloc[::step]
            out.append({"dataset": r["dataset"], "variant": r["variant"], "readers": int(n),
                        "t_s": [round(float(t), 3) for t in group["t_s"]],
                        "rows_accepted": [int(v) for v in group["rows_accepted"]],
                        "rows_visible": [int(v) for v in group["rows_visible"]]})  # fmt: skip
    return out


def dataset_entries(
    rows: list[dict[str, Any]], profiles: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The datasets of the summary's rows, each with its profile (as a sentence too) where
    `profiles` (the run's profiles.json) has it."""
    profiles = profiles or {}
    seen: dict[str, dict[str, Any]] = {}
    for r in rows:
        field_type = r.get("field_type")
        seen.setdefault(r["dataset"], {
            "name": r["dataset"], "rows": _int(r.get("dataset_rows")),
            "scale": _int(r.get("scale")), "epochs": _int(r.get("epochs")),
            "seed": _int(r.get("seed")),
            "field_type": field_type if isinstance(field_type, str) else None,
        })  # fmt: skip
        label = r.get("dataset_label")
        if isinstance(label, str) and label:  # own data: its label, columns and bytes
            seen[r["dataset"]] |= {"label": label, "columns": _int(r.get("dataset_columns")),
                                   "bytes": _int(r.get("dataset_bytes"))}  # fmt: skip
    for name, entry in seen.items():
        if name in profiles:
            p = profiles[name]
            entry["profile"] = {**p, "text": profile_text(p, p.get("recommendation"))}
    return list(seen.values())


def server_settings(questdb: dict[str, Any]) -> dict[str, str]:
    """The server's non-default settings that shape a run (not its ports and paths)."""
    return {
        p["property_path"]: str(p["value"])
        for p in questdb.get("non_default_parameters") or []
        if not _PLACE.search(p.get("property_path", ""))
    }


def versions(env: dict[str, Any]) -> dict[str, Any]:
    installed = {p["name"]: p.get("installed") or p.get("locked") for p in env.get("packages", [])}
    questdb = env.get("questdb", {})
    servers = [str(s.get("label")) for s in env.get("servers") or []]
    return {
        "questdb_server": questdb.get("version"),
        # A run of several servers (the server axis): each one's label, oldest first.
        **({"questdb_servers": servers} if len(servers) > 1 else {}),
        "questdb_build": questdb.get("build"),
        "questdb_mode": questdb.get("mode"),
        "questdb_settings": server_settings(questdb),
        "python": (env.get("python") or {}).get("version"),
        "java": (env.get("java") or {}).get("version"),
        **{name: installed.get(name) for name in PACKAGES},
    }


def build_document(results: Path, label: str | None = None) -> dict[str, Any]:
    """The archive document of a finished results folder (summary.csv and environment.json)."""
    import pandas as pd  # only when building

    from ingestbench.results.summary import read_summary
    from ingestbench.results.summary.servers import comparison

    results = Path(results)
    summary_path, env_path = results / "summary.csv", results / "environment.json"
    for path, what in ((summary_path, "summary"), (env_path, "environment record")):
        if not path.is_file():
            raise ArchiveError(
                f"{path} does not exist: {results} holds no finished run's {what}; run the "
                f"workflow (make run) to the end, then archive its results folder."
            )
    env = load_json(env_path, "environment record", ArchiveError)
    rows = read_summary(summary_path, unsupported=True).to_dict("records")
    if not rows:
        raise ArchiveError(f"{summary_path} has no rows; run the workflow to the end first.")
    several = len({r["server"] for r in rows if isinstance(r.get("server"), str)}) > 1
    # Each dataset's profile and recommendation (a run from before them has none).
    profiles_path = results / "profiles.json"
    profiles = load_json(profiles_path, "profiles", ArchiveError) if profiles_path.is_file() else {}
    workflow = env.get("workflow", {})
    commit = workflow.get("git_commit") or "unknown"
    machine = {**env.get("machine", {})}
    machine["id"] = machine_id(machine)
    date = env.get("timestamp_utc") or "1970-01-01T00:00:00Z"
    label = slug(label or workflow.get("config_hash") or "run")
    doc = {
        "schema_version": ARCHIVE_VERSION,
        "kind": KIND,
        "id": f"{date[:10]}_{machine['id']}_{commit[:7]}_{label}",
        "label": label,
        "date_utc": date,
        "machine": machine,
        "versions": versions(env),
        "workflow": {
            "git_commit": commit,
            "git_dirty": workflow.get("git_dirty"),
            "config_hash": workflow.get("config_hash"),
            "config": workflow.get("config"),
        },
        "ilp_protocol_version": env.get("ilp_protocol_version"),
        "datasets": dataset_entries(rows, profiles),
        "variants": [variant_entry(r, several) for r in rows],
    }
    if servers := comparison(pd.DataFrame(rows)):  # a config of several servers
        doc["servers"] = servers
    if parts := experiment_parts(results, workflow.get("config") or {}):
        doc["experiments"] = parts
    if series := series_entries(results, rows):  # a run with readers only
        doc["series"] = series
    if pinning := env.get("pinning"):  # server and client on cores of their own
        doc["pinning"] = pinning
    check(doc, summary_path)
    return doc


def experiment_parts(results: Path, config: dict[str, Any]) -> dict[str, Any]:
    """Each experiment's part of the document, by its `archive` hook, from the files its summary
    read (an experiment the run's config had, whose files are all there)."""
    from ingestbench.workflow import experiments

    parts = {}
    for key, inputs in experiments.summary_inputs(config, str(results)).items():
        entry = experiments.by_key(key)
        paths = [Path(p) for p in inputs]
        if entry.archive and paths and all(p.is_file() for p in paths):
            parts[key] = experiments.hook(entry.archive)(paths)
    return parts


def check(doc: Any, where: Path | str) -> dict[str, Any]:
    """`doc` if it is an archive document this ingestbench reads; else one sentence why not."""
    version = doc.get("schema_version") if isinstance(doc, dict) else None
    if isinstance(doc, dict) and isinstance(version, int) and version not in READABLE:
        newer = version > max(READABLE)
        raise ArchiveError(
            f"the archive document {where} has schema_version {version}, but this ingestbench "
            f"reads {', '.join(map(str, READABLE))}; "
            + ("update ingestbench to read it." if newer else "rebuild it with make archive.")
        )
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schema()).iter_errors(doc)
    )
    if error is not None:
        at = "/".join(str(p) for p in error.absolute_path) or "the top level"
        raise ArchiveError(
            f"the archive document {where} does not match {SCHEMA_PATH.name} (at {at}: "
            f"{error.message}); fix or remove it."
        )
    return doc


def document_path(doc: dict[str, Any], archive: Path) -> Path:
    return Path(archive) / f"{doc['id']}.json"


def write_document(results: Path, archive: Path, label: str | None = None) -> Path:
    """Archive `results` as `archive/<id>.json` (atomically); its path."""
    doc = build_document(results, label)
    path = document_path(doc, archive)
    write_json_atomic(path, doc)
    return path


def read_document(path: Path) -> dict[str, Any]:
    """One archive document, checked; else ArchiveError saying how to fix or remove it."""
    path = Path(path)
    doc = load_json(path, "archive document", ArchiveError,
                    fix=f"restore it (git checkout -- {path}) or remove it (git rm {path})",
                    missing=f"restore it (git checkout -- {path})")  # fmt: skip
    return check(doc, path)


def read_archive(archive: Path) -> list[dict[str, Any]]:
    """Every valid document under `archive`, oldest first. A document is untrusted input (it may
    come by pull request): one that cannot be read or fails the schema is left out with a
    warning naming it and the fix, and the others are still read."""
    docs, seen = [], set()
    for path in sorted(Path(archive).glob("*.json")):
        try:
            doc = read_document(path)
        except ArchiveError as exc:
            log.warning("skipped an archive document: %s", exc)
            continue
        if doc["id"] in seen:
            log.warning("skipped the archive document %s: its id %s is another document's; "
                        "remove one of the two.", path, doc["id"])  # fmt: skip
            continue
        seen.add(doc["id"])
        docs.append(doc)
    return sorted(docs, key=lambda d: (d["date_utc"], d["id"]))
