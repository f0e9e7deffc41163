"""Load config.yaml, validate it against schemas/config.schema.yaml and fill in defaults; then,
for the package's own functions, the same settings as frozen objects (`Settings`).

May import: errors, schema, variants.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import yaml

from ingestbench import CHECKOUT
from ingestbench.errors import UserError
from ingestbench.schema import SCHEMA_PATH, first_error, load_schema
from ingestbench.variants import PROTOCOL_2_METHODS, as_list

# Keys every run file has at its top level and no config has: Snakemake's --configfile takes every
# path after it, so a target typed there arrives merged into the config.
RESULT_FILE_KEYS = frozenset({"schema_version", "dataset", "variant"})


class ConfigError(UserError):
    pass


def validate_config(config: dict[str, Any], schema_path: Path = SCHEMA_PATH) -> dict[str, Any]:
    """Validate in place, filling defaults; raise ConfigError naming the offending key."""
    if config.keys() >= RESULT_FILE_KEYS:
        raise ConfigError(
            "the config looks like a run file (it has "
            + ", ".join(sorted(RESULT_FILE_KEYS))
            + "): --configfile reads every path after it as a config; put targets before "
            "--configfile."
        )
    refuse_typed_secrets(config)
    questdb_given = config.get("questdb") if isinstance(config.get("questdb"), Mapping) else {}
    if questdb_given.get("versions") is not None and "version" in questdb_given:
        raise ConfigError(
            "invalid config at 'questdb': version and versions are both set; keep versions "
            "(every version it lists is a server of its own) and remove version."
        )
    error = first_error(config, load_schema(schema_path))
    if error is not None:
        raise ConfigError(
            f"invalid config at '{error[0]}': {error[1]}; "
            f"fix that key in your config file (its keys and values: docs/configuration.md)."
        )
    questdb = config["questdb"]
    secured = [k for k in ("auth", "tls_roots") if questdb[k]] + (["tls"] if questdb["tls"] else [])
    if secured and questdb["mode"] != "external":
        raise ConfigError(
            f"invalid config at 'questdb': {', '.join(secured)} reach a server you run "
            f"(mode: external), and the workflow's own servers are open; set mode: external "
            f"or remove them."
        )
    check_server_axis(questdb)
    labels = [d["label"] for d in config["datasets"]]
    if len(set(labels)) != len(labels):
        raise ConfigError(f"invalid config at 'datasets': labels must be unique, got {labels}.")
    for i, spec in enumerate(config["variants"]):
        unknown = set(spec.get("datasets", [])) - set(labels)
        if unknown:
            raise ConfigError(
                f"invalid config at 'variants[{i}].datasets': unknown dataset label(s) "
                f"{sorted(unknown)}; use one of {labels} (a --configfile is merged over "
                "config.yaml, and its lists replace config.yaml's: a config with datasets of "
                "its own needs variants of its own)."
            )
        needs_2 = sorted(set(as_list(spec["method"])) & set(PROTOCOL_2_METHODS))
        if needs_2 and config["ilp_protocol_version"] < 2:
            raise ConfigError(
                f"invalid config at 'variants[{i}].method': {', '.join(needs_2)} writes ILP "
                f"protocol 2 (binary doubles), and ilp_protocol_version is "
                f"{config['ilp_protocol_version']}; set it to 2 or drop that method."
            )
    return config


def check_server_axis(questdb: dict[str, Any]) -> None:
    """The axis of servers: one version key, unique settings names, an embedded server only."""
    if questdb["versions"] is not None:
        questdb.pop("version", None)  # filled by the schema; `versions` says which
    names = [s["name"] for s in questdb["settings"]]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(
            f"invalid config at 'questdb.settings': the name {twice[0]} names two sets; give "
            f"each set a name of its own (it labels its servers)."
        )
    if questdb["mode"] == "external" and (questdb["versions"] is not None or names):
        raise ConfigError(
            "invalid config at 'questdb': versions and settings choose the servers the workflow "
            "starts, and mode external uses yours as it runs; remove them or set mode: embedded."
        )


#: Keys of `questdb.auth` blocks where a secret itself was typed instead of its variable's name.
SECRET_KEYS = ("password", "token", "secret", "private_key")
#: The secret is never part of the sentence: it would land in the terminal and Snakemake's log.
SECRET_IN_CONFIG = (
    "invalid config at 'questdb.auth.{block}.{key}': a secret goes in an environment variable, "
    "never in the config file (which runs copy into logs and records): export it and name the "
    "variable in questdb.auth.{block}.{key}_env instead (the value is not shown)."
)


def refuse_typed_secrets(config: Mapping[str, Any]) -> None:
    """Refuse a secret typed into the config, before the schema's messages could quote it."""
    questdb = config.get("questdb")
    auth = questdb.get("auth") if isinstance(questdb, Mapping) else None
    for block, keys in auth.items() if isinstance(auth, Mapping) else ():
        for key in keys if isinstance(keys, Mapping) else ():
            if key in SECRET_KEYS:
                raise ConfigError(SECRET_IN_CONFIG.format(block=block, key=key))


#: `questdb.auth` keys that hold no secret: names of variables, the user, the public key.
PUBLIC_AUTH_KEYS = frozenset({"username", "token_x", "token_y"})


def masked_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The config as a record may hold it: any `questdb.auth` value but the names of variables,
    the user and the public key masked (a validated config has none; this is the backstop)."""
    out = json.loads(json.dumps(config))
    auth = (out.get("questdb") or {}).get("auth")
    for block in (auth or {}).values():
        for key in list(block) if isinstance(block, dict) else ():
            if not key.endswith("_env") and key not in PUBLIC_AUTH_KEYS:
                block[key] = "****"
    return out


#: The Snakefile's `configfile:`; a --configfile is merged over it.
DEFAULT_CONFIG = CHECKOUT / "config.yaml"


def read_config_file(path: Path) -> dict[str, Any]:
    try:
        config = yaml.safe_load(Path(path).read_text()) or {}
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}.") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(
            f"config file {path} is not valid YAML{where}: {problem}; fix the file there (a "
            f"value with ': ' or '#' in it goes in quotes)."
        ) from None
    if not isinstance(config, dict):
        raise ConfigError(f"config file {path} is not a mapping of keys to values.")
    return config


def merge_config(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """`over` merged into `base` as Snakemake merges a --configfile over the Snakefile's config:
    mappings key by key, recursively; anything else (lists included) replaced whole."""
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            merge_config(base[key], value)
        else:
            base[key] = json.loads(json.dumps(value))
    return base


def load_config(path: Path, validate: bool = True) -> dict[str, Any]:
    """The config the workflow runs with `--configfile path`: config.yaml, with `path` merged
    over it (just config.yaml when `path` is it), validated and filled with defaults (or, not
    `validate`, as read: ingestbench.preflight validates it with the rest)."""
    config = read_config_file(DEFAULT_CONFIG)
    if Path(path).resolve() != DEFAULT_CONFIG.resolve():
        merge_config(config, read_config_file(path))
    return validate_config(config) if validate else config


def readers_off(section: Any) -> bool:
    """No reader count and no pinned cores: the run is what it was before readers existed."""
    return not section or (not section.get("counts") and not section.get("pin_cores"))


# ------------------------------------------------------------------------ the config as objects
# Built from a validated config, so code takes named values, not dict keys. No field has a default
# of its own: the schema owns every default (validate_config fills them in). Snakemake keeps
# using the dict `config`; the package's functions take these.


@dataclass(frozen=True)
class QuestDBSettings:
    """The server each job ingests into: embedded (started per job) or external."""

    mode: str
    version: str
    jar: str | None
    java: str | None
    cache_dir: str | None
    keep_data: bool
    startup_timeout_s: float
    shutdown_grace_s: float
    pools: Mapping[str, int | None]  # the server's thread pools (a variant's workers: the client's)
    worker_idle: str
    host: str
    http_port: int
    ilp_port: int
    pg_port: int
    copy_root: str | None
    tls: bool
    tls_roots: str | None
    tls_verify: bool
    auth: Mapping[str, Any] | None  # names of environment variables, never secrets
    table_prefix: str
    keep_tables: bool
    # The server's own properties (QuestDB's names): a job's one settings set (rule_inputs gives
    # each server's jobs a block of one version and at most one set); a whole config's: none.
    properties: Mapping[str, Any]

    @property
    def external(self) -> bool:
        return self.mode == "external"

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> QuestDBSettings:
        """The `questdb` block of a config that validate_config() has checked and filled, or of
        one server's jobs (workflow.rule_inputs); a config of several versions: its first."""
        block = config["questdb"]
        one_server = "versions" not in block
        sets = block.get("settings") or [] if one_server else []
        version = block.get("version") or (block.get("versions") or [None])[0]
        return _known(cls, {**block, "version": version, "properties": {
            k: v for s in sets[:1] for k, v in s.items() if k != "name"}})  # fmt: skip


@dataclass(frozen=True)
class ValidationSettings:
    """The `validation` keys an ingestion reads (the validation rule takes its own slice)."""

    rel_tolerance: float  # the checks of every repeat against its source
    export_piece_rows: int | None  # rows per /exp call of the table's export


@dataclass(frozen=True)
class GuardSettings:
    repeat_deadline_s: float | None  # None: server.deadline.default_limit_s of the rows
    exclusive: bool  # refuse to start while another run is active


@dataclass(frozen=True)
class ReadersSettings:
    """The `readers` section, for a variant that runs with readers (ingestbench.readers)."""

    counts: tuple[int, ...]  # the reader counts, each its own set of repeats (0: sampler alone)
    rate_per_s: float | None  # per reader; None: as fast as it can
    sample_interval_s: float
    idle_s: float  # seconds of the same queries against the finished table, per count above 0
    pin_cores: Mapping[str, list[int]] | None  # server, client, readers: the cores of each

    @classmethod
    def from_config(cls, section: Mapping[str, Any] | None) -> ReadersSettings | None:
        """None where the job is given no section (no readers and no pinned cores)."""
        if readers_off(section):
            return None
        return cls(counts=tuple(section["counts"]), rate_per_s=section["rate_per_s"],
                   sample_interval_s=section["sample_interval_s"], idle_s=section["idle_s"],
                   pin_cores=section["pin_cores"])  # fmt: skip


@dataclass(frozen=True)
class Settings:
    """What an ingestion runs under: built from its job's config (`job_config`), or from a whole
    validated config by hand; the datasets and variants are the plan's (datasets.plan)."""

    repeats: int
    rows_cap: int | None
    table: str
    ilp_protocol_version: int
    warmup_rows: int
    questdb: QuestDBSettings
    validation: ValidationSettings
    guards: GuardSettings
    readers: ReadersSettings | None  # None: no readers beside this job's repeats

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Settings:
        """From a config dict that validate_config() has checked and filled with defaults."""
        return cls(
            repeats=config["repeats"],
            rows_cap=config["rows_cap"],  # None where the job's method is not a row loop
            table=config["table"],
            ilp_protocol_version=config["ilp_protocol_version"],
            warmup_rows=config["warmup_rows"],
            questdb=QuestDBSettings.from_config(config),
            validation=_known(ValidationSettings, config["validation"]),
            guards=_known(GuardSettings, config["guards"]),
            readers=ReadersSettings.from_config(config.get("readers")),
        )


def _known(cls: Any, values: Mapping[str, Any]) -> Any:
    """cls from the keys it declares (keys a newer schema adds are left to their readers)."""
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in values.items() if k in names})
