"""The server axis: which QuestDB versions exist, what each has, and the servers a config asks for.

Every fact here was read from the jars (each started once with the workflow's own launch line,
`SHOW PARAMETERS` and a probe of each feature; docs/server.md): a version that lacks what a path
needs makes that path `unsupported` with the reason, never a failure. The catalogue's records
name the features their methods need (`server_features`); this module never names a method.

`servers(config)`: each version of `questdb.versions` (or the one `questdb.version`) with QuestDB's
defaults, and with each named set of `questdb.settings`: a server of its own, labelled
`<version>` or `<version>-<name>`, a level of every output path of the backfill. Light and
without imports of the package: the Snakefile, the preflight and the rules' settings use it.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: Every release Maven Central serves as org.questdb:questdb (its maven-metadata.xml, read when
#: this list was committed): the preflight refuses any other unless its jar is in the cache.
SERVED = [
    "6.0.2",
    "6.0.3",
    "6.0.4",
    "6.0.5",
    "6.2.1",
    "6.5.2",
    "6.5.3",
    "6.5.4",
    "6.5.5",
    "6.6.1",
    "7.0.0",
    "7.0.1",
    "7.2.1",
    "7.3.1",
    "7.3.2",
    "7.3.3",
    "7.3.4",
    "7.3.5",
    "7.3.7",
    "7.3.8",
    "7.3.9",
    "7.3.10",
    "7.4.0",
    "7.4.2",
    "8.1.4",
    "8.2.0",
    "9.0.1",
    "9.0.2",
    "9.0.3",
    "9.1.0",
    "9.1.1",
    "9.2.0",
    "9.2.1",
    "9.2.2",
    "9.2.3",
    "9.3.0",
    "9.3.1",
    "9.3.2",
    "9.3.4",
]

#: The versions started here, whose property names known_properties.tsv holds (SHOW PARAMETERS).
PROBED = ("7.3.10", "7.4.2", "8.1.4", "8.2.0", "9.0.3", "9.1.1", "9.2.3", "9.3.4")

#: The oldest release the workflow runs: ILP over HTTP, which every client path may use.
OLDEST = "7.3.8"


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


@dataclasses.dataclass(frozen=True)
class Feature:
    what: str  # as a sentence names it
    since: str  # the first release that has it (of the probed ones where the exact one is unknown)

    def reason(self, version: str) -> str:
        return f"{self.what} arrived in QuestDB {self.since}; this server runs {version}"


#: What a path may need of its server, by the name a catalogue record gives it.
FEATURES = {
    "ilp_http": Feature("ILP over HTTP", "7.3.8"),
    "read_parquet": Feature("read_parquet()", "8.1.4"),
    # Before 9.1 read_parquet() takes a TIMESTAMP(NANOS) column for microseconds: a TSBS file's
    # 2016 lands in the year 47969 (measured on 8.1.4, 8.2.0 and 9.0.3; 9.1.1 reads it right).
    "parquet_nanos": Feature("read_parquet() of nanosecond timestamps as such", "9.1.1"),
    "ilp_protocol_2": Feature("ILP protocol 2 (binary doubles)", "9.0.1"),
    "wait_wal_table": Feature("wait_wal_table()", "8.1.4"),
    # The readers' and paced ingestion's sampler reads them; 9.2.3 has neither column.
    "tables_row_counts": Feature("tables()' table_row_count and wal_pending_row_count", "9.3.4"),
    "http_auth": Feature("http.user and http.password", "8.1.4"),
    # Before it a DOUBLE is printed (by /exp and /exec) with at most 12 decimals, cut: the
    # validation reads such a server's table over PGWire in binary instead (validate.export).
    "exact_double_text": Feature("every digit of a DOUBLE in the server's text", "9.0.3"),
}


def has(version: str, feature: str) -> bool:
    return version_key(version) >= version_key(FEATURES[feature].since)


def missing(version: str, features: tuple[str, ...]) -> str | None:
    """Why a path needing `features` cannot run on `version` (the first one missing), or None."""
    for name in features:
        if not has(version, name):
            return FEATURES[name].reason(version)
    return None


def highest_ilp_protocol(version: str) -> int:
    return 2 if has(version, "ilp_protocol_2") else 1


# ----------------------------------------------------------------------------- property names


@functools.cache
def _known_table() -> dict[str, tuple[str, str]]:
    """{property: (first, last probed version that knows it)} (known_properties.tsv)."""
    rows = (line.split("\t") for line in (Path(__file__).with_name("known_properties.tsv")
                                          .read_text().splitlines()) if line)  # fmt: skip
    return {name: (first, last) for name, first, last in rows}


def _probed_for(version: str) -> str:
    """The probed version whose names stand for `version`: the newest at or below it."""
    below = [p for p in PROBED if version_key(p) <= version_key(version)]
    return below[-1] if below else PROBED[0]


def known_properties(version: str) -> frozenset[str]:
    probed = version_key(_probed_for(version))
    return frozenset(name for name, (first, last) in _known_table().items()
                     if version_key(first) <= probed <= version_key(last))  # fmt: skip


#: Properties renamed across versions: (the newer name, the first version that has it, the
#: older name, how a value converts). The launch's own query timeout ("10m") goes through it.
RENAMED = (("query.timeout", "9.0.1", "query.timeout.sec", lambda v: str(_seconds(v))),)


def _seconds(value: Any) -> int:
    text = str(value).strip()
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    for unit in ("ms", "s", "m", "h"):
        if text.endswith(unit) and text[: -len(unit)].isdigit():
            return max(1, int(int(text[: -len(unit)]) * units[unit]))
    return int(float(text) / 1000)  # a bare number is milliseconds, as QuestDB reads it


def translated(version: str, properties: Mapping[str, Any]) -> dict[str, str]:
    """`properties` in the names `version` knows: a renamed one under its name there."""
    out = {}
    for name, value in properties.items():
        for newer, since, older, convert in RENAMED:
            if name == newer and version_key(version) < version_key(since):
                name, value = older, convert(value)
        out[name] = str(value).lower() if isinstance(value, bool) else str(value)
    return out


def env_name(prop: str) -> str:
    """The environment variable QuestDB reads a property from (SHOW PARAMETERS' env_var_name)."""
    return "QDB_" + prop.upper().replace(".", "_").replace("-", "_")


def nearest(name: str, candidates: Any, n: int = 3) -> list[str]:
    return difflib.get_close_matches(name, sorted(candidates), n=n, cutoff=0.5)


def nearest_versions(version: str, n: int = 3) -> list[str]:
    """The served releases closest to `version` (by release order)."""
    try:
        key = version_key(version)
    except ValueError:
        return list(SERVED[-n:])
    ordered = sorted(SERVED, key=lambda v: (abs(_ordinal(version_key(v)) - _ordinal(key)), v))
    return sorted(ordered[:n], key=version_key)


def _ordinal(key: tuple[int, ...]) -> int:
    return key[0] * 10_000 + key[1] * 100 + (key[2] if len(key) > 2 else 0)


# ----------------------------------------------------------------------------- the servers


@dataclasses.dataclass(frozen=True)
class Server:
    version: str
    settings_name: str | None  # None: QuestDB's defaults (with the launch's own settings)
    properties: Mapping[str, Any]  # as the config writes them, QuestDB's names

    @property
    def label(self) -> str:
        return self.version if self.settings_name is None else (
            f"{self.version}-{self.settings_name}")  # fmt: skip


def label_of(questdb: Mapping[str, Any] | None) -> str | None:
    """The label of the server a job's `questdb` block names (a run file's settings)."""
    if not questdb or not questdb.get("version"):
        return None
    sets = questdb.get("settings") or []
    return questdb["version"] + (f"-{sets[0]['name']}" if sets else "")


def versions(questdb: Mapping[str, Any]) -> list[str]:
    return list(questdb.get("versions") or [questdb["version"]])


def servers(config: Mapping[str, Any]) -> list[Server]:
    """Every server of the config: each version with its defaults, then with each settings set."""
    questdb = config["questdb"]
    sets = [(None, {})] + [(s["name"], {k: v for k, v in s.items() if k != "name"})
                           for s in questdb.get("settings") or []]  # fmt: skip
    return [Server(v, name, props) for v in versions(questdb) for name, props in sets]


def server_labels(config: Mapping[str, Any]) -> list[str]:
    return [s.label for s in servers(config)]


def by_label(config: Mapping[str, Any], label: str) -> Server:
    found = [s for s in servers(config) if s.label == label]
    if not found:
        raise ValueError(f"no server {label!r} in the config; its servers: {server_labels(config)}")
    return found[0]


def newest_default(config: Mapping[str, Any]) -> str:
    """The label of the newest version's default server: what the summary compares against."""
    return max(versions(config["questdb"]), key=version_key)


def server_questdb(questdb: Mapping[str, Any], server: Server) -> dict[str, Any]:
    """The `questdb` block of one server's jobs: one version, its settings set alone. Without
    `versions` and with `settings` only where a set applies, so the default server's block is
    the one a config of one version has always had."""
    out = {k: v for k, v in questdb.items() if k not in ("versions", "settings")}
    out["version"] = server.version
    if server.settings_name is not None:
        out["settings"] = [{"name": server.settings_name, **server.properties}]
    return out


def launch_properties(version: str | None, questdb_settings: Any) -> dict[str, str]:
    """A job's server properties (its one settings set), in `version`'s names."""
    sets = list(questdb_settings or ())
    props = {k: v for s in sets[:1] for k, v in s.items() if k != "name"}
    return translated(version or PROBED[-1], props)


#: What turns on a reader of a feature beyond a path's own (the config's key, its words, the
#: feature): the readers' and paced ingestion's samplers read tables()' row counts.
SECTION_NEEDS = (
    ("readers.counts", "readers beside ingestion", "tables_row_counts",
     lambda c: bool((c.get("readers") or {}).get("counts"))),
    ("paced", "paced ingestion", "tables_row_counts", lambda c: c.get("paced") is not None),
)  # fmt: skip


def section_problems(config: Mapping[str, Any]) -> list[str]:
    """A section on whose servers a version lacks what it reads: refused, with the reason."""
    if config["questdb"]["mode"] == "external":
        return []
    out = []
    for key, what, feature, on in SECTION_NEEDS:
        lacking = [v for v in versions(config["questdb"]) if not has(v, feature)]
        if on(config) and lacking:
            out.append(
                f"{key}: {what} read {FEATURES[feature].what}, which arrived in QuestDB "
                f"{FEATURES[feature].since}; QuestDB {', '.join(lacking)} lacks them: drop "
                f"{key} or those versions."
            )
    return out


def axis_problems(config: Mapping[str, Any], cached: Any = lambda version: False) -> list[str]:
    """The preflight's sentences on the servers: a version neither served nor `cached` (a jar
    in the cache), a property a version does not know, one property set twice on a server."""
    questdb = config["questdb"]
    if questdb["mode"] == "external" or questdb.get("jar"):
        return []
    out = section_problems(config)
    for version in versions(questdb):
        if version not in SERVED and not cached(version):
            out.append(
                f"questdb.versions: QuestDB {version} is not a release Maven Central serves, and "
                f"its jar is not in the cache; use one of the nearest served ones "
                f"({', '.join(nearest_versions(version))})."
            )
    pools = {
        "shared.worker.count": "shared",
        "line.tcp.writer.worker.count": "line_tcp_writer",
        "line.tcp.io.worker.count": "line_tcp_io",
        "wal.apply.worker.count": "wal_apply",
    }
    for server in servers(config):
        if server.settings_name is None:
            continue
        names = translated(server.version, server.properties)
        known = known_properties(server.version)
        for name in names:
            if name not in known:
                near = nearest(name, known) or ["none close"]
                out.append(
                    f"questdb.settings '{server.settings_name}': QuestDB {server.version} knows "
                    f"no property {name}; the nearest it knows: {', '.join(near)}."
                )
            if questdb["pools"].get(pools.get(name, "")) is not None:
                out.append(
                    f"questdb.settings '{server.settings_name}' sets {name}, which "
                    f"questdb.pools.{pools[name]} sets too; keep one of them."
                )
        if len(names) < len(server.properties):
            out.append(
                f"questdb.settings '{server.settings_name}' sets one property twice on QuestDB "
                f"{server.version} (under its name and an older one); keep one."
            )
    return out
