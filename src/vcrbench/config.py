"""Run configuration: JSON-schema validation with defaults, then checks against the registries.

Every problem is reported as one :class:`VcrbenchError` that names the key, what was wrong and
the allowed values, before Snakemake schedules any job.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from vcrbench.errors import VcrbenchError

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "schemas" / "config.schema.yaml"


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


def _explain(error: jsonschema.ValidationError, schema: Mapping[str, Any]) -> str:
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
    if error.validator == "required":
        return f"'{key}': {error.message}"
    return f"'{key}': {error.message}"


def _coerce_scalar(value: Any, schema: Mapping[str, Any]) -> Any:
    """Turn a command-line string (``--config sampling='{n: 200}'`` gives ``'200'``) into the
    integer, number, boolean or null its schema asks for; anything else is left unchanged."""
    if not isinstance(value, str):
        return value
    types = schema.get("type", [])
    types = [types] if isinstance(types, str) else list(types)
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


def _fill_defaults(instance: Any, schema: Mapping[str, Any]) -> Any:
    """Recursively insert schema defaults for missing keys and coerce command-line strings."""
    if isinstance(instance, dict) and schema.get("type") == "object":
        for name, sub in schema.get("properties", {}).items():
            if name not in instance and "default" in sub:
                instance[name] = copy.deepcopy(sub["default"])
            if name in instance:
                instance[name] = _fill_defaults(instance[name], sub)
    elif isinstance(instance, list) and isinstance(schema.get("items"), Mapping):
        instance = [_fill_defaults(item, schema["items"]) for item in instance]
    return _coerce_scalar(instance, schema)


def validate_config(config: Mapping[str, Any], schema_path: str | Path | None = None) -> dict:
    """Validate a run configuration and return a copy with every default filled in.

    Raises :class:`VcrbenchError` naming the first problem (key, value, allowed values).
    """
    schema = load_schema(schema_path)
    filled = _fill_defaults(copy.deepcopy(dict(config)), schema)
    if isinstance(filled.get("finetune"), list) and isinstance(filled.get("overlap"), dict):
        generated = overlap_finetune_entries(filled["overlap"])
        items = schema["properties"]["finetune"]["items"]
        filled["finetune"] = filled["finetune"] + [_fill_defaults(e, items) for e in generated]
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(filled), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        lines = [_explain(error, schema) for error in errors]
        raise VcrbenchError("config: " + "\nconfig: ".join(lines))
    check_semantics(filled)
    return filled


def check_semantics(config: Mapping[str, Any]) -> None:
    """Checks that a JSON schema cannot express: registry names, dataset paths, shard layout."""
    from vcrbench.corruptions import CORRUPTIONS
    from vcrbench.models import parse_model_name

    known = list(CORRUPTIONS)
    for i, name in enumerate(config["corruptions"]):
        if name not in CORRUPTIONS:
            raise VcrbenchError(
                f"config: corruptions[{i}] {name!r} is not a known corruption; "
                f"known: {', '.join(known)}"
            )
    if config["sampling"]["mode"] == "imagenet-c":
        for name in config["corruptions"]:
            if CORRUPTIONS[name].imagenet_c_severities is None:
                with_c = [n for n, c in CORRUPTIONS.items() if c.imagenet_c_severities is not None]
                raise VcrbenchError(
                    f"config: sampling.mode is imagenet-c but corruption {name!r} has no "
                    f"ImageNet-C severities; use sampling.mode: uniform or only: "
                    f"{', '.join(with_c)}"
                )
    if config["sampling"]["imagenet_c_n"] and config["sampling"]["mode"] != "uniform":
        raise VcrbenchError(
            "config: sampling.imagenet_c_n adds an ImageNet-C severity sample next to the uniform "
            "one; with sampling.mode: imagenet-c the main sample already is that, so set "
            "imagenet_c_n: 0 (or mode: uniform)"
        )
    for i, name in enumerate(config["models"]):
        try:
            parse_model_name(name)
        except VcrbenchError as error:
            raise VcrbenchError(f"config: models[{i}]: {error}") from None
    slugs = [model_slug(name) for name in evaluated_models(config)]
    if len(set(slugs)) != len(slugs):
        raise VcrbenchError(f"config: models map to clashing folder names {slugs}; rename one")
    check_dataset(config["dataset"], "dataset")
    check_human(config)
    check_finetune(config)
    check_overlap(config)


def check_dataset(dataset: Mapping[str, Any], key: str) -> None:
    """A dataset block (``dataset`` or a fine-tuning ``train``): a folder where one is needed."""
    if dataset["source"] in ("imagefolder", "imagenet-val"):
        if not dataset["path"]:
            raise VcrbenchError(
                f"config: {key}.source is {dataset['source']} but {key}.path is not set; "
                "give the folder of images"
            )
        if not Path(dataset["path"]).is_dir():
            raise VcrbenchError(f"config: {key}.path {dataset['path']!r} is not a folder")
    if dataset["categories16_only"] and dataset["exclude_categories16"]:
        raise VcrbenchError(
            f"config: {key}.categories16_only and {key}.exclude_categories16 exclude each other; "
            "set one of them"
        )


def check_finetune(config: Mapping[str, Any]) -> None:
    """Fine-tuning entries: unique names, a loadable non-fine-tuned base, a known augmentation,
    and every ``finetuned:<name>`` model naming an entry."""
    from vcrbench.corruptions import CORRUPTIONS
    from vcrbench.models import parse_model_name

    names = [entry["name"] for entry in config["finetune"]]
    for i, entry in enumerate(config["finetune"]):
        where = f"config: finetune[{i}] ({entry['name']})"
        if names.count(entry["name"]) > 1:
            raise VcrbenchError(f"{where}: the name is used by another entry; names must differ")
        try:
            base = parse_model_name(entry["base"])
        except VcrbenchError as error:
            raise VcrbenchError(f"{where}.base: {error}") from None
        if base.kind == "finetuned":
            raise VcrbenchError(
                f"{where}.base {entry['base']!r}: fine-tuning starts from a registry model, not "
                "from another fine-tuned one"
            )
        check_dataset(entry["train"], f"finetune[{i}].train")
        if entry["train"]["source"] == "builtin":
            key = ("overlap.train" if entry["name"].startswith(OVERLAP_PREFIX)
                   else f"finetune[{i}].train")
            raise VcrbenchError(
                f"{where}: {key} is the builtin photographs, which have no ImageNet labels and "
                f"cannot train a model; set {key} to labelled images (source: imagefolder with "
                "WNID folders, or imagenet-val with its labels)"
            )
        corruption = entry["augmentation"]["corruption"]
        if corruption is not None and corruption not in CORRUPTIONS:
            raise VcrbenchError(
                f"{where}.augmentation.corruption {corruption!r} is not a known corruption; "
                f"known: {', '.join(CORRUPTIONS)}"
            )
    for i, name in enumerate(config["models"]):
        spec = parse_model_name(name)
        if spec.kind == "finetuned" and spec.target not in names:
            raise VcrbenchError(
                f"config: models[{i}] {name!r} names no finetune entry (entries: "
                f"{', '.join(names) or 'none'}); add one with name: {spec.target}"
            )


def evaluated_models(config: Mapping[str, Any]) -> list[str]:
    """The models a run evaluates: ``models``, then each fine-tuning entry's base and
    ``finetuned:<name>`` (in entry order), then the overlap report's CE baseline; no repeats."""
    models = list(config["models"])
    extra = [name for entry in config["finetune"]
             for name in (entry["base"], f"finetuned:{entry['name']}")]
    if config["overlap"]["candidates"]:
        extra.append(config["overlap"]["baseline"] or config["overlap"]["base"])
    for name in extra:
        if name not in models:
            models.append(name)
    return models


#: Prefix of the fine-tuning entries the overlap report generates.
OVERLAP_PREFIX = "overlap-"


def overlap_finetune_entries(overlap: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The fine-tuning entries of the overlap report (before defaults): ``overlap-standard``
    (unless ``standard: base``) and ``overlap-<c>`` per candidate, from ``overlap.finetune``."""
    if not overlap.get("candidates"):
        return []
    template = copy.deepcopy(dict(overlap.get("finetune") or {}))
    for key in ("name", "base", "train"):
        if key in template:
            raise VcrbenchError(
                f"config: overlap.finetune.{key} is set by the overlap report itself (use "
                f"overlap.{key if key != 'name' else 'candidates'})"
            )
    augmentation = dict(template.pop("augmentation", None) or {})
    if "corruption" in augmentation:
        raise VcrbenchError(
            "config: overlap.finetune.augmentation.corruption is the candidate itself; remove it"
        )
    roles = (["standard"] if overlap.get("standard", "finetuned") == "finetuned" else [])
    roles += list(overlap["candidates"])
    return [
        {
            "name": f"{OVERLAP_PREFIX}{role}",
            "base": overlap.get("base", "efficientnet-lite0"),
            "train": copy.deepcopy(overlap.get("train", {})),
            "augmentation": {**augmentation, "corruption": None if role == "standard" else role},
            **copy.deepcopy(template),
        }
        for role in roles
    ]


def check_overlap(config: Mapping[str, Any]) -> None:
    """The overlap report: at least two candidates among the run's corruptions, registry models."""
    from vcrbench.models import parse_model_name

    overlap = config["overlap"]
    if not overlap["candidates"]:
        return
    if len(overlap["candidates"]) < 2:
        raise VcrbenchError("config: overlap.candidates needs at least two corruptions")
    for name in overlap["candidates"]:
        if name not in config["corruptions"]:
            raise VcrbenchError(
                f"config: overlap.candidates: {name!r} is not one of the run's corruptions "
                f"({', '.join(config['corruptions'])}); add it to corruptions"
            )
    for key in ("base", "baseline"):
        if overlap[key] is None:
            continue
        try:
            spec = parse_model_name(overlap[key])
        except VcrbenchError as error:
            raise VcrbenchError(f"config: overlap.{key}: {error}") from None
        if spec.kind == "finetuned":
            raise VcrbenchError(f"config: overlap.{key} must be a registry model, not "
                                f"{overlap[key]!r}")


def check_human(config: Mapping[str, Any]) -> None:
    """Human data sets: known format and corruptions, an existing path, one data set each."""
    from vcrbench.human_sources import human_assignments

    seen = {}
    for i, entry in enumerate(config["human"]):
        where = f"config: human[{i}]"
        if entry["corruption"] not in config["corruptions"]:
            raise VcrbenchError(
                f"{where}.corruption {entry['corruption']!r} is not one of the run's corruptions "
                f"({', '.join(config['corruptions'])}); add it to corruptions"
            )
        if entry["corruption"] in seen:
            raise VcrbenchError(
                f"{where}: corruption {entry['corruption']!r} already has human data "
                f"(human[{seen[entry['corruption']]}]); merge the two data sets"
            )
        seen[entry["corruption"]] = i
        for name in entry["transfer_to"] or []:
            if name not in config["corruptions"]:
                raise VcrbenchError(
                    f"{where}.transfer_to: {name!r} is not one of the run's corruptions "
                    f"({', '.join(config['corruptions'])})"
                )
        if not Path(entry["path"]).exists():
            raise VcrbenchError(
                f"{where}.path {entry['path']!r} does not exist (relative paths are relative to "
                "the folder snakemake runs in)"
            )
    human_assignments(config["human"], config["corruptions"])
    discrimination = config.get("human_discrimination")
    if discrimination and not Path(discrimination).is_file():
        raise VcrbenchError(f"config: human_discrimination {discrimination!r} is not a file")


def model_slug(name: str) -> str:
    """A file-system and wildcard friendly folder name for a model string.

    ``torchvision:resnet50`` -> ``torchvision-resnet50``;
    ``file:my/model.py`` -> ``file-my-model.py``.
    """
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")
    return slug or "model"


def shard_count(n: int, shard_size: int) -> int:
    """Number of shards for N samples of one corruption."""
    return -(-int(n) // int(shard_size))


def shard_range(shard: int, n: int, shard_size: int) -> range:
    """Sample ids of one shard: ``[shard * shard_size, min(n, (shard + 1) * shard_size))``."""
    if not 0 <= shard < shard_count(n, shard_size):
        raise VcrbenchError(f"shard {shard} does not exist for n={n}, shard_size={shard_size}")
    return range(shard * shard_size, min(n, (shard + 1) * shard_size))
