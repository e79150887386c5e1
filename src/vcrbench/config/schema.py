"""The run configuration's JSON schema: loading it, filling defaults, coercing command-line
strings, and explaining a violation in one line that names the key and the allowed values."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from vcrbench.errors import VcrbenchError

SCHEMA_PATH = Path(__file__).resolve().parents[3] / "schemas" / "config.schema.yaml"


def load_schema(path: str | Path | None = None) -> dict[str, Any]:
    """The config JSON schema (YAML file) as a dict, with its ``#/$defs/...`` references inlined
    (so that defaults inside a shared definition are filled wherever it is used)."""
    with open(path or SCHEMA_PATH, encoding="utf-8") as handle:
        schema = yaml.safe_load(handle)
    return _inline_refs(schema, schema.get("$defs", {}))


def _inline_refs(node: Any, definitions: Mapping[str, Any]) -> Any:
    """``node`` with every ``{"$ref": "#/$defs/x", ...}`` replaced by ``x`` (its siblings win)."""
    if isinstance(node, list):
        return [_inline_refs(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: _inline_refs(value, definitions) for key, value in node.items()}
    ref = node.pop("$ref", None)
    if ref is None:
        return node
    prefix = "#/$defs/"
    if not ref.startswith(prefix) or ref[len(prefix):] not in definitions:
        raise VcrbenchError(f"config schema: unresolvable reference {ref!r}")
    return {**_inline_refs(copy.deepcopy(definitions[ref[len(prefix):]]), definitions), **node}


def _key_path(path: Any) -> str:
    parts: list[str] = []
    for part in path:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        else:
            parts.append(("." if parts else "") + str(part))
    return "".join(parts) or "<top level>"


def _subschema(schema: Mapping[str, Any], path: Any) -> Mapping[str, Any]:
    node: Mapping[str, Any] = schema
    for part in path:
        if isinstance(part, int):
            node = node.get("items", {})
        else:
            node = node.get("properties", {}).get(part, {})
    return node


def explain(error: jsonschema.ValidationError, schema: Mapping[str, Any]) -> str:
    key = _key_path(error.absolute_path)
    if error.validator == "additionalProperties":
        allowed = sorted(_subschema(schema, error.absolute_path).get("properties", {}))
        unexpected = sorted(set(error.instance) - set(allowed))
        names = ", ".join(repr(u) for u in unexpected)
        where = "" if key == "<top level>" else f" under '{key}'"
        return f"unknown key {names}{where}; allowed keys: {', '.join(allowed)}"
    if error.validator == "enum":
        allowed = ", ".join(str(v) for v in error.validator_value)
        return f"'{key}' is {error.instance!r}; allowed values: {allowed}"
    if error.validator == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        return f"'{key}' must be of type {expected}, got {error.instance!r}"
    if error.validator in ("minimum", "maximum"):
        word = "at least" if error.validator == "minimum" else "at most"
        return f"'{key}' must be {word} {error.validator_value}, got {error.instance!r}"
    if error.validator == "anyOf":
        allowed = "; ".join(_describe(branch) for branch in error.validator_value)
        return f"'{key}' is {error.instance!r}; allowed: {allowed}"
    if error.validator == "required":
        return f"'{key}': {error.message}"
    return f"'{key}': {error.message}"


def _describe(branch: Mapping[str, Any]) -> str:
    """One ``anyOf`` branch in words: its values, or its type with its bounds."""
    if "enum" in branch:
        return ", ".join(str(v) for v in branch["enum"])
    kind = branch.get("type")
    if kind in ("number", "integer"):
        noun = "an integer" if kind == "integer" else "a number"
        low = (f"> {branch['exclusiveMinimum']}" if "exclusiveMinimum" in branch
               else f">= {branch['minimum']}" if "minimum" in branch else None)
        high = (f"< {branch['exclusiveMaximum']}" if "exclusiveMaximum" in branch
                else f"<= {branch['maximum']}" if "maximum" in branch else None)
        return " ".join([noun, " and ".join(b for b in (low, high) if b)]).strip()
    return {"null": "null", "boolean": "true or false", "array": "a list",
            "string": "a string", "object": "a mapping"}.get(kind, str(kind))


def _types(schema: Mapping[str, Any]) -> list[str]:
    """The JSON types a schema node accepts (its ``type``, else those of its ``anyOf``)."""
    if "type" in schema:
        types = schema["type"]
        return [types] if isinstance(types, str) else list(types)
    return [t for branch in schema.get("anyOf", []) for t in _types(branch)]


def _coerce_scalar(value: Any, schema: Mapping[str, Any]) -> Any:
    """Turn a command-line string (``--config sampling='{n: 200}'`` gives ``'200'``) into the
    integer, number, boolean or null its schema asks for; anything else is left unchanged."""
    if not isinstance(value, str):
        return value
    types = _types(schema)
    text = value.strip()
    if "null" in types and text.lower() in ("null", "none", "~", ""):
        return None
    if "integer" in types and re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    if "number" in types:
        try:
            return float(text)
        except ValueError:
            pass
    if "boolean" in types and text.lower() in ("true", "false"):
        return text.lower() == "true"
    return value


def fill_defaults(instance: Any, schema: Mapping[str, Any]) -> Any:
    """Recursively insert schema defaults for missing keys and coerce command-line strings."""
    if isinstance(instance, dict) and schema.get("type") == "object":
        for name, sub in schema.get("properties", {}).items():
            if name not in instance and "default" in sub:
                instance[name] = copy.deepcopy(sub["default"])
            if name in instance:
                instance[name] = fill_defaults(instance[name], sub)
    elif isinstance(instance, list) and isinstance(schema.get("items"), Mapping):
        instance = [fill_defaults(item, schema["items"]) for item in instance]
    return _coerce_scalar(instance, schema)


def schema_errors(config: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    """Every violation of ``schema`` by ``config``, explained, in key order."""
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.absolute_path)))
    return [explain(error, schema) for error in errors]
