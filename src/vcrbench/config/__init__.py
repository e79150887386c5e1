"""Run configuration: JSON-schema validation with defaults, then each section's own checks.

:func:`validate_config` fills every default (:mod:`~vcrbench.config.schema`), adds the
fine-tuning entries that the overlap report generates, validates against the schema and then
runs the checks a schema cannot express: the run-level ones here (corruption and model names,
sampling modes, clashing folder names) and each section's own, next to its package
(:mod:`vcrbench.data.config`, :mod:`vcrbench.human.config`, :mod:`vcrbench.training.config`,
:mod:`vcrbench.overlap.config`, :mod:`vcrbench.reva.config`). Every problem is one
:class:`~vcrbench.errors.VcrbenchError` that names the key, what was wrong and the allowed
values, before Snakemake schedules any job. :func:`read_configs` merges several config files
as Snakemake merges several ``--configfile``s (:func:`merge_configs`), for the commands that
read a run's results through its config.

This package composes the others: it may import every package; none imports it (the workflow
rules and the command line do).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from vcrbench.config.schema import fill_defaults, load_schema, schema_errors
from vcrbench.corruptions import CORRUPTIONS
from vcrbench.corruptions.sets import CORRUPTION_SETS, expand_sets
from vcrbench.data.config import check_dataset
from vcrbench.errors import VcrbenchError
from vcrbench.human.config import check_human
from vcrbench.models.registry import parse_model_name
from vcrbench.models.slugs import model_slug
from vcrbench.overlap.config import (
    OVERLAP_PREFIX,
    baseline,
    check_native_overlap,
    check_overlap,
    overlap_finetune_entries,
)
from vcrbench.reva.config import check_reva, reva_models
from vcrbench.training.config import (
    check_comparison_geometry,
    check_finetune,
    check_native_finetune,
)
from vcrbench.training.train_config import TRAINED_PREFIX, check_train, trained_names

__all__ = ["evaluated_models", "model_slug", "validate_config"]


def merge_configs(base: Mapping[str, Any], overlay: Mapping[str, Any]) -> dict:
    """``overlay`` on a copy of ``base`` as Snakemake merges a later ``--configfile`` over an
    earlier one: mappings key by key, at every depth; any other value (a list too) replaced."""
    out = copy.deepcopy(dict(base))
    for key, value in overlay.items():
        if isinstance(value, Mapping):
            below = out.get(key)
            out[key] = merge_configs(below if isinstance(below, Mapping) else {}, value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def workflow_config(paths: list[str | Path], repo: str | Path = ".") -> dict:
    """The validated config a workflow run with ``--configfile paths`` gets: the repository's
    ``config.yaml`` (beside its Snakefile, in ``repo``) with ``paths`` overlaid in order."""
    repo = Path(repo)
    merged = merge_configs(read_configs([repo / "config.yaml"]), read_configs(list(paths)))
    return validate_config(merged, repo / "schemas" / "config.schema.yaml")


def read_configs(paths: list[str | Path]) -> dict:
    """The config files ``paths`` merged in order (:func:`merge_configs`), not yet validated."""
    merged: dict = {}
    for path in paths:
        try:
            loaded = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        except OSError as error:
            raise VcrbenchError(f"{path}: cannot read this config file ({error})") from None
        if not isinstance(loaded, Mapping):
            raise VcrbenchError(f"{path}: a config file is a YAML mapping of keys to values")
        merged = merge_configs(merged, loaded)
    return merged


def validate_config(config: Mapping[str, Any], schema_path: str | Path | None = None) -> dict:
    """Validate a run configuration and return a copy with every default filled in.

    Raises :class:`VcrbenchError` naming the first problem (key, value, allowed values).
    """
    schema = load_schema(schema_path)
    filled = fill_defaults(copy.deepcopy(dict(config)), schema)
    if isinstance(filled.get("corruptions"), str | list):
        filled["corruptions"] = expand_sets(filled["corruptions"])
    overlap = filled.get("overlap")
    if isinstance(overlap, dict) and isinstance(overlap.get("candidates"), str | list):
        overlap["candidates"] = expand_sets(overlap["candidates"])
    if isinstance(filled.get("finetune"), list) and isinstance(filled.get("overlap"), dict):
        generated = overlap_finetune_entries(filled["overlap"])
        items = schema["properties"]["finetune"]["items"]
        filled["finetune"] = filled["finetune"] + [fill_defaults(e, items) for e in generated]
    errors = schema_errors(filled, schema)
    if errors:
        raise VcrbenchError("config: " + "\nconfig: ".join(errors))
    check_semantics(filled)
    return filled


def check_semantics(config: Mapping[str, Any]) -> None:
    """Checks that a JSON schema cannot express: registry names, dataset paths, sections."""
    known = list(CORRUPTIONS)
    for i, name in enumerate(config["corruptions"]):
        if name not in CORRUPTIONS:
            raise VcrbenchError(
                f"config: corruptions[{i}] {name!r} is not a known corruption; "
                f"known: {', '.join(known)}; or a set: {', '.join(CORRUPTION_SETS)}"
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
    check_label_space(config)
    check_human(config)
    check_finetune(config, train_keys=_generated_train_keys(config))
    check_overlap(config)
    check_reva(config)
    check_comparison_geometry(compared_finetune_entries(config))
    check_train(config)


def _generated_train_keys(config: Mapping[str, Any]) -> dict[str, str]:
    """Entry name -> ``overlap.train`` for the fine-tuning entries the overlap report made."""
    return {entry["name"]: "overlap.train"
            for entry in config["finetune"] if entry["name"].startswith(OVERLAP_PREFIX)}


def compared_finetune_entries(config: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The fine-tuning entries of ``reva.comparison.methods`` (label -> entry); the comparison
    itself is checked by :func:`vcrbench.reva.config.comparison_plan`."""
    entries = {entry["name"]: entry for entry in config["finetune"]}
    compared = {}
    for label, model in config["reva"]["comparison"]["methods"].items():
        kind, _, name = str(model).partition(":")
        if kind == "finetuned" and name in entries:
            compared[label] = entries[name]
    return compared


def check_label_space(config: Mapping[str, Any]) -> None:
    """A run on CIFAR labels or at native size: only what works there (models trained in its
    label space and models fine-tuned from them; no human data, which is in ImageNet's 16
    categories; fine-tuning and the overlap report from a model trained here, on native-size
    images of the run's label space; REVa part 1 on models trained here, its pool a train
    entry's images or reva.train, without part 2's fine-tuned comparison or 16-class
    groups)."""
    from vcrbench.data.datasets import NATIVE, label_space

    dataset = config["dataset"]
    space = label_space(dataset)
    native = dataset["size"] == NATIVE or space.name != "imagenet"
    if native:
        _check_reva_label_space(config, space.name, dataset["size"])
        check_native_overlap(config, space.name, dataset["size"])
        check_native_finetune(config, train_keys=_generated_train_keys(config))
    finetuned = {f"finetuned:{entry['name']}" for entry in config["finetune"]}
    check_model_label_spaces(config, space.name, space.classes, finetuned)
    if space.name != "imagenet":
        if config["human"] or config["human_discrimination"]:
            raise VcrbenchError(
                f"config: human data are answers in ImageNet's 16 categories; the dataset has "
                f"{space.name} labels, so remove human and human_discrimination"
            )


def check_model_label_spaces(config: Mapping[str, Any], space: str, classes: int,
                             finetuned: set[str]) -> None:
    """Every evaluated model answers in the run's label space: on ImageNet labels any registry
    model but RobustBench's CIFAR zoos; on CIFAR labels models trained here, models fine-tuned
    from them and RobustBench entries of that dataset (32 px images, ``dataset.size:
    native``)."""
    from vcrbench.data.datasets import DEFAULT_CROP, NATIVE, dataset_side
    from vcrbench.models.registry import check_runs_on_cpu, check_zoo_geometry, model_label_space

    for name in evaluated_models(config):
        # a fine-tuned entry's base was checked by check_native_finetune (a model trained here)
        if name.startswith(TRAINED_PREFIX) or name in finetuned:
            continue
        try:
            answers = model_label_space(name)
        except VcrbenchError:
            continue  # a name of another section, refused there with its key (check_reva, ...)
        if config["device"] == "cpu":
            check_runs_on_cpu(name)
        if answers == "imagenet" == space and config["dataset"]["size"] != NATIVE:
            check_zoo_geometry(name, config["dataset"].get("crop", DEFAULT_CROP))
        if answers is None or answers == space:
            if answers in ("cifar10", "cifar100") and dataset_side(config["dataset"]) != 32:
                raise VcrbenchError(
                    f"config: model {name!r} takes CIFAR's 32 x 32 images, but the run's images "
                    f"are {dataset_side(config['dataset'])} px; set dataset.size: native")
            continue
        if answers == "imagenet":
            raise VcrbenchError(
                f"config: model {name!r} classifies ImageNet's 1000 classes but the dataset "
                f"has {space} labels ({classes} classes); evaluate models trained here on them "
                "(a train entry, model trained:<name>) or RobustBench's zoo of that dataset "
                f"(robustbench:<name>?dataset={space})")
        raise VcrbenchError(
            f"config: model {name!r} classifies {answers}'s classes but the dataset has {space} "
            f"labels; give it a dataset of {answers} images (source: {answers}, size: native), "
            "or pick a model of this label space")


def _check_reva_label_space(config: Mapping[str, Any], space: str, size) -> None:
    """REVa on a CIFAR or native-size run: part 1 on models trained here, part 2 comparing
    models trained here (fine-tuning runs there, but REVa's fine-tuned pool and compared
    fine-tuned methods are built and checked at 224 px only; no 16-class groups, which need
    ImageNet's categories)."""
    reva = config["reva"]
    if not reva["enabled"]:
        return
    where = f"the dataset is {space} at size {size}"
    if reva["from_finetune"] is not None:
        raise VcrbenchError(
            f"config: reva.from_finetune is set but {where}, where a fine-tuning entry's images "
            "as REVa's pool are not built (224 px only; docs/cifar.md, 'Not built yet'); use "
            "the training images of a train entry (reva.from_train: <name>)")
    finetuned = {label: model for label, model in reva["comparison"]["methods"].items()
                 if isinstance(model, str) and model.startswith("finetuned:")}
    if finetuned:
        raise VcrbenchError(
            f"config: reva.comparison.methods {finetuned} are fine-tuned models but {where}, "
            "where REVa's comparison of fine-tuned methods is not built (224 px only; "
            "docs/cifar.md, 'Not built yet'); compare models trained here (trained:<name>, "
            "train entries of methods standard, augmix, reva_minus, reva)")
    if size == "native" and config["scoring"]["small_images"] != "enlarge":
        raise VcrbenchError(
            f"config: scoring.small_images is {config['scoring']['small_images']} but REVa's "
            "adversarial images are scored on enlargements (the default, enlarge) so far; set "
            "scoring.small_images: enlarge or reva.enabled: false")
    if space != "imagenet" and reva["weak"]["group_by"] == "category16":
        raise VcrbenchError(
            f"config: reva.weak.group_by is category16 but the dataset has {space} labels, "
            "which have no 16-class categories; use class (the paper), pool or auto")


def evaluated_models(config: Mapping[str, Any]) -> list[str]:
    """The models a run evaluates: ``models``, then each train entry's ``trained:<name>``, then
    each fine-tuning entry's base and
    ``finetuned:<name>`` (in entry order), then the overlap report's CE baseline, then the REVa
    ranking model and transfer source; no repeats."""
    models = list(config["models"])
    extra = trained_names(config)
    extra += [name for entry in config["finetune"]
             for name in (entry["base"], f"finetuned:{entry['name']}")]
    if config["overlap"]["candidates"]:
        extra.append(baseline(config["overlap"]))
    extra.extend(reva_models(config))
    for name in extra:
        if name not in models:
            models.append(name)
    return models


