"""The config's schema (schemas/config.schema.yaml), the one home of every default: loaded once,
checked with a validator that fills the defaults in, and its errors as a key and a message.

The config (ingestbench.config) and a dataset given on its own (ingestbench.tsbs, as
`ingestbench generate` gives one) are both checked here, so they take the same defaults.

May import: nothing.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import yaml

from ingestbench import CHECKOUT

SCHEMA_PATH = CHECKOUT / "schemas" / "config.schema.yaml"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader, where libyaml is there


@functools.cache
def load_schema(path: Path = SCHEMA_PATH) -> dict[str, Any]:
    """The schema, parsed once (callers must not change it)."""
    return yaml.load(Path(path).read_text(), Loader=_LOADER)  # noqa: S506 (a safe loader)


#: Where the schema defines a TSBS `datasets[]` entry (an own dataset's is `own_dataset`).
TSBS_DATASET = "tsbs_dataset"


def dataset_schema() -> dict[str, Any]:
    """The schema of one TSBS `datasets[]` entry; its `label` (the config's handle) is optional
    here."""
    schema = load_schema()
    entry = copy.deepcopy(schema["$defs"][TSBS_DATASET])
    entry["required"] = [k for k in entry["required"] if k != "label"]
    return {**entry, "$defs": schema.get("$defs", {})}


def dataset_defaults() -> dict[str, Any]:
    """{key: default} of a TSBS `datasets[]` entry, as the schema gives them."""
    properties = load_schema()["$defs"][TSBS_DATASET]["properties"]
    return {k: v["default"] for k, v in properties.items() if "default" in v}


def first_error(instance: Any, schema: dict[str, Any]) -> tuple[str, str] | None:
    """Validate `instance` in place, filling defaults (also inside array items); the most
    relevant error as (where, message), or None."""
    import jsonschema

    cls = _with_defaults(jsonschema.validators.validator_for(schema))
    error = jsonschema.exceptions.best_match(cls(schema).iter_errors(instance))
    return None if error is None else (_path(error), _message(error))


@functools.cache
def _with_defaults(validator_class):
    """A validator that fills `default`s in, also inside array items (the jsonschema FAQ recipe)."""
    import jsonschema

    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, sub in properties.items():
                if "default" in sub and name not in instance:
                    instance[name] = json.loads(json.dumps(sub["default"]))
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


def _path(error) -> str:
    parts = []
    for p in error.absolute_path:
        parts.append(f"[{p}]" if isinstance(p, int) else (f".{p}" if parts else str(p)))
    return "".join(parts) or "(top level)"


def _message(error) -> str:
    """The schema's message; for a renamed key its new name (the object's `x-renamed`); for an
    unknown value (also one a oneOf hides) the allowed values, and for one refused on purpose
    the reason (the property's `x-refused`)."""
    renamed = error.schema.get("x-renamed", {}) if error.validator == "additionalProperties" else {}
    old = [k for k in error.instance if k in renamed] if renamed else []
    if old:
        return f"{old[0]!r} is now called {renamed[old[0]]!r} (the same keys inside): rename it"
    enums = [e for e in [error, *(error.context or ())] if e.validator == "enum"]
    if not enums:
        return error.message
    deepest = max(enums, key=lambda e: len(e.absolute_path))  # the bad item of a list
    allowed = ", ".join(map(str, deepest.validator_value))
    refused = deepest.schema.get("x-refused", {})  # a value left out on purpose, and why
    if isinstance(deepest.instance, str) and deepest.instance in refused:
        return f"{deepest.instance!r} is refused: {refused[deepest.instance]}; use one of {allowed}"
    return f"{deepest.instance!r} is not one of {allowed}"
