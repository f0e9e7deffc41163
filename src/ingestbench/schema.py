"""The config's schema (schemas/config.schema.yaml), the one home of every default: loaded once,
checked with a validator that fills the defaults in, and its errors as a key and a message.

The config (ingestbench.config) and a dataset given on its own (ingestbench.tsbs, as
`ingestbench generate` gives one) are both checked here, so they take the same defaults.

May import: catalogue, variants (the delivery paths' names).
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import yaml

from ingestbench import CHECKOUT, catalogue, variants

SCHEMA_PATH = CHECKOUT / "schemas" / "config.schema.yaml"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader, where libyaml is there


@functools.cache
def load_schema(path: Path = SCHEMA_PATH) -> dict[str, Any]:
    """The schema, parsed once, with the method catalogue's enums (callers must not change it)."""
    schema = yaml.load(Path(path).read_text(), Loader=_LOADER)  # noqa: S506 (a safe loader)
    defs = schema.get("$defs", {})
    if "method" in defs:
        defs["method"]["enum"] = list(catalogue.METHOD_NAMES)
    if "dtype_method" in defs:
        dtype_methods = catalogue.names(dtype_matrix=True)
        defs["dtype_method"]["enum"] = list(dtype_methods)
        matrix = schema["properties"]["dtype_matrix"]["properties"]
        matrix["methods"]["default"] = list(dtype_methods)
    if "delivery_path" in defs:
        paths = variants.delivery_path_names()
        defs["delivery_path"]["enum"] = list(paths)
        schema["properties"]["delivery"]["properties"]["paths"]["default"] = list(paths)
    return schema


#: Where the schema defines a TSBS `datasets[]` entry and an own dataset's.
TSBS_DATASET = "tsbs_dataset"
OWN_DATASET = "own_dataset"


def dataset_schema() -> dict[str, Any]:
    """The schema of one TSBS `datasets[]` entry; its `label` (the config's handle) is optional
    here."""
    schema = load_schema()
    entry = copy.deepcopy(schema["$defs"][TSBS_DATASET])
    entry["required"] = [k for k in entry["required"] if k != "label"]
    return {**entry, "$defs": schema.get("$defs", {})}


def own_dataset_schema() -> dict[str, Any]:
    """The schema of one own `datasets[]` entry, its defaults filled in by `first_error`."""
    schema = load_schema()
    return {**copy.deepcopy(schema["$defs"][OWN_DATASET]), "$defs": schema.get("$defs", {})}


def questdb_defaults() -> dict[str, Any]:
    """{key: default} of the `questdb` block, as the schema gives them (code that starts a
    server without a config takes these, so the schema stays the one home of defaults)."""
    properties = load_schema()["properties"]["questdb"]["properties"]
    return {k: v["default"] for k, v in properties.items() if "default" in v}


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
    if error is None:
        return None
    error = _one_branch(error)
    return _path(error), _masked(error, _message(error))


#: Where the config holds credentials: errors there never quote a value.
SECRET_SECTION = ("questdb", "auth")


def _masked(error, message: str) -> str:
    """`message` without any value of the credentials block it is about (a secret typed where
    the name of its variable goes would otherwise be printed and logged), nor a value that
    looks like credentials in an address."""
    userinfo = isinstance(error.instance, str) and "@" in error.instance  # user:password@host
    if tuple(error.absolute_path)[:2] != SECRET_SECTION and not userinfo:
        return message
    for value in _strings(error.instance):  # jsonschema quotes a value as its repr
        message = message.replace(repr(value), "'****'")
    return message


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _branches(error) -> list[tuple[list[str], list[str] | None]] | None:
    """A oneOf of object shapes on a mapping: each shape's (required keys, allowed keys or
    None when any key goes); None when the oneOf is of anything else."""
    shapes = error.validator_value
    if error.validator != "oneOf" or not isinstance(error.instance, dict):
        return None
    if not all(isinstance(b, dict) and "$ref" not in b for b in shapes):
        return None
    return [(list(b.get("required", [])),
             list(b.get("properties", {})) if b.get("additionalProperties") is False else None)
            for b in shapes]  # fmt: skip


def _fitting(error) -> list[int]:
    """The shapes of a oneOf whose keys the mapping has, and no other."""
    keys = set(error.instance)
    return [i for i, (req, allowed) in enumerate(_branches(error) or [])
            if keys >= set(req) and (allowed is None or keys <= set(allowed))]  # fmt: skip


def _one_branch(error):
    """For a oneOf of shapes where the mapping's keys pick one, that shape's own error (a bad
    value inside it), instead of "not valid under any of the given schemas"."""
    import jsonschema

    while _branches(error) is not None and len(fit := _fitting(error)) == 1:
        inner = [e for e in error.context or () if e.schema_path[0] == fit[0]]
        if not inner:
            break
        error = jsonschema.exceptions.best_match(inner)
    return error


def _shape_message(error) -> str | None:
    """Which keys a oneOf of shapes wants and which are wrong, naming them."""
    shapes = _branches(error)
    if shapes is None:
        return None
    keys = set(error.instance)
    if all(allowed is None for _, allowed in shapes):  # shapes that differ by a required key
        keys_of = " or ".join(" and ".join(map(repr, req)) for req, _ in shapes)
        return f"give {keys_of}, not both" if _fitting(error) else f"{keys_of} is missing"
    alternatives = " or ".join("{" + ", ".join(allowed) + "}" for _, allowed in shapes)
    if len(_fitting(error)) > 1:
        return f"give only one of {alternatives}"
    # The shape nearest the mapping: the most keys in common, then the fewest missing.
    req, allowed = max(shapes, key=lambda s: (len(keys & set(s[1] if s[1] is not None else s[0])),
                                              -len(set(s[0]) - keys)))  # fmt: skip
    wrong = sorted(keys - set(allowed)) if allowed is not None else []
    missing = [k for k in req if k not in keys]
    said = []
    if wrong:
        said.append(f"{', '.join(map(repr, wrong))} is not a key here")
    if missing:
        said.append(f"{' and '.join(map(repr, missing))} is missing")
    return f"{'; '.join(said)} (it takes {alternatives})"


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
    hint = error.schema.get("x-hint") if isinstance(error.schema, dict) else None
    if hint and error.validator == "pattern":
        return f"{error.instance!r} {hint}"
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = list(error.schema.get("properties", {}))
        wrong = [k for k in error.instance if k not in known]
        return (f"{', '.join(map(repr, wrong))} is not a key here{nearest(wrong[0], known)} "
                f"(its keys: {', '.join(known)})" + (f"; {hint}" if hint else ""))  # fmt: skip
    shape = _shape_message(error)
    if shape is not None:
        return shape + (f"; {hint}" if hint else "")
    if error.validator == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        return f"{' and '.join(map(repr, missing))} is missing" + (f"; {hint}" if hint else "")
    enums = [e for e in [error, *(error.context or ())] if e.validator == "enum"]
    if not enums:
        return error.message + (f"; {hint}" if hint else "")
    deepest = max(enums, key=lambda e: len(e.absolute_path))  # the bad item of a list
    allowed = ", ".join(map(str, deepest.validator_value))
    refused = deepest.schema.get("x-refused", {})  # a value left out on purpose, and why
    if isinstance(deepest.instance, str) and deepest.instance in refused:
        return f"{deepest.instance!r} is refused: {refused[deepest.instance]}; use one of {allowed}"
    instead = deepest.schema.get("x-instead", {})  # a value meant elsewhere: where it goes
    if isinstance(deepest.instance, str) and deepest.instance in instead:
        return f"{deepest.instance!r} is not one of {allowed}: {instead[deepest.instance]}"
    near = nearest(deepest.instance, [str(v) for v in deepest.validator_value])
    return f"{deepest.instance!r} is not one of {allowed}{near}"


def nearest(value: Any, choices: list[str]) -> str:
    """The words ` (did you mean 'x'?)` for the choice closest to a mistyped `value`, or "" where
    none is close."""
    import difflib

    if not isinstance(value, str):
        return ""
    close = difflib.get_close_matches(value, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
