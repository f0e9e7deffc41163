"""Load config.yaml, validate it against schemas/config.schema.yaml and fill in defaults."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from .errors import UserError

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "schemas" / "config.schema.yaml"


# Keys every run file has at its top level and no config has: Snakemake's --configfile takes every
# path after it, so a target typed there arrives merged into the config.
RESULT_FILE_KEYS = frozenset({"schema_version", "dataset", "variant"})


class ConfigError(UserError):
    pass


def _with_defaults(validator_class):
    """A validator that fills `default`s in, also inside array items (the jsonschema FAQ recipe)."""
    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, sub in properties.items():
                if "default" in sub and name not in instance:
                    instance[name] = json.loads(json.dumps(sub["default"]))
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


def _path(error: jsonschema.ValidationError) -> str:
    parts = []
    for p in error.absolute_path:
        parts.append(f"[{p}]" if isinstance(p, int) else (f".{p}" if parts else str(p)))
    return "".join(parts) or "(top level)"


def _message(error: jsonschema.ValidationError) -> str:
    """The schema's message; for an unknown value (also one a oneOf hides) the allowed values."""
    enums = [e for e in [error, *(error.context or ())] if e.validator == "enum"]
    if not enums:
        return error.message
    deepest = max(enums, key=lambda e: len(e.absolute_path))  # the bad item of a list
    allowed = ", ".join(map(str, deepest.validator_value))
    return f"{deepest.instance!r} is not one of {allowed}"


def validate_config(config: dict[str, Any], schema_path: Path = SCHEMA_PATH) -> dict[str, Any]:
    """Validate in place, filling defaults; raise ConfigError naming the offending key."""
    schema = yaml.safe_load(schema_path.read_text())
    cls = _with_defaults(jsonschema.validators.validator_for(schema))
    if config.keys() >= RESULT_FILE_KEYS:
        raise ConfigError(
            "the config looks like a run file (it has "
            + ", ".join(sorted(RESULT_FILE_KEYS))
            + "): --configfile reads every path after it as a config; put targets before "
            "--configfile."
        )
    error = jsonschema.exceptions.best_match(cls(schema).iter_errors(config))
    if error is not None:
        raise ConfigError(
            f"invalid config at '{_path(error)}': {_message(error)}; "
            f"fix that key in your config file (allowed keys and values: {schema_path.name})."
        )
    labels = [d["label"] for d in config["datasets"]]
    if len(set(labels)) != len(labels):
        raise ConfigError(f"invalid config at 'datasets': labels must be unique, got {labels}.")
    for i, spec in enumerate(config["variants"]):
        unknown = set(spec.get("datasets", [])) - set(labels)
        if unknown:
            raise ConfigError(
                f"invalid config at 'variants[{i}].datasets': unknown dataset label(s) "
                f"{sorted(unknown)}; use one of {labels}."
            )
    return config


def load_config(path: Path) -> dict[str, Any]:
    try:
        config = yaml.safe_load(Path(path).read_text()) or {}
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}.") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path} is not valid YAML ({exc}).") from None
    return validate_config(config)


def config_hash(config: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]
