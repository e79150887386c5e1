"""The ``train`` section of a run configuration (models trained from random initialisation):
the recipe of an entry, and the checks a JSON schema cannot express."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vcrbench.data.config import check_dataset
from vcrbench.data.datasets import (
    NATIVE,
    dataset_side,
    label_space,
    list_entries_from_config,
)
from vcrbench.errors import VcrbenchError
from vcrbench.models.cifar import input_size
from vcrbench.training.scratch import FAST_RECIPE, SCRATCH_METHODS, ScratchRecipe
from vcrbench.training.spec import AugMixSettings, regime_of

#: Where the unset recipe keys of an entry come from (``preset``).
PRESETS: dict[str, dict[str, Any]] = {
    "augmix": {},
    "fast": {k: v for k, v in FAST_RECIPE.items() if k != "architecture"},
}
TRAINED_PREFIX = "trained:"


def recipe_of_entry(entry: Mapping[str, Any], run_seed: int) -> ScratchRecipe:
    """The :class:`ScratchRecipe` of a validated ``train`` entry: its preset, then its
    ``recipe`` keys, its architecture, method, the classes of its data and its seed (the run's
    seed when the entry's is null)."""
    seed = run_seed if entry["seed"] is None else entry["seed"]
    values = {**PRESETS[entry["preset"]], **entry["recipe"]}
    return ScratchRecipe.from_dict({**values, "architecture": entry["architecture"],
                                    "classes": label_space(entry["data"]).classes,
                                    "method": entry["method"],
                                    "augmix": augmix_settings(entry), "seed": seed})


def augmix_settings(entry: Mapping[str, Any]) -> AugMixSettings | None:
    """The AugMix settings of an ``augmix`` entry (its ``augmix`` keys over AugMix's defaults;
    ``severity: auto`` is 3 on CIFAR data), None for other methods."""
    if entry["method"] != "augmix":
        return None
    return AugMixSettings.from_config(entry.get("augmix") or {}, regime_of(entry["data"]))


def trained_names(config: Mapping[str, Any]) -> list[str]:
    """The model names ``trained:<name>`` of the run's ``train`` entries, in entry order."""
    return [f"{TRAINED_PREFIX}{entry['name']}" for entry in config.get("train", [])]


def check_train(config: Mapping[str, Any]) -> None:
    """``train`` entries: unique names not used by a finetune entry, a built method, labelled
    training images in the run's label space and at its image size (the architecture's input),
    none of them an evaluation image; every ``trained:<name>`` model naming an entry."""
    entries = config.get("train", [])
    names = [entry["name"] for entry in entries]
    finetuned = {entry["name"] for entry in config["finetune"]}
    run_space = label_space(config["dataset"])
    run_side = dataset_side(config["dataset"]) if entries else None
    evaluated = [e.path for e in list_entries_from_config(config["dataset"])] if entries else []
    for i, entry in enumerate(entries):
        where = f"config: train[{i}] ({entry['name']})"
        if names.count(entry["name"]) > 1 or entry["name"] in finetuned:
            raise VcrbenchError(f"{where}: the name is used by another train or finetune entry "
                                "(both write results/<run>/models/<name>/); rename one")
        if entry["method"] not in SCRATCH_METHODS:
            raise VcrbenchError(
                f"{where}.method is {entry['method']}; training from scratch supports "
                f"{', '.join(SCRATCH_METHODS)} so far (REVa's PGD counterparts are built for "
                "fine-tuning only: use a finetune entry, or method: standard / augmix)"
            )
        data = entry["data"]
        check_dataset(data, f"train[{i}].data")
        space = label_space(data)
        if data["source"] == "builtin" or space.name == "imagenet":
            raise VcrbenchError(
                f"{where}.data: the architectures trained here are CIFAR networks; give CIFAR "
                "training images (source: cifar10 / cifar100, or imagefolder with classes: "
                "cifar10)"
            )
        if space != run_space:
            raise VcrbenchError(
                f"{where}.data has {space.name} labels ({space.classes} classes) but the run's "
                f"dataset has {run_space.name} labels ({run_space.classes}); a model is "
                "evaluated in the label space it was trained in"
            )
        side, wanted = dataset_side(data), input_size(entry["architecture"])
        if data["size"] != NATIVE or side != wanted:
            raise VcrbenchError(
                f"{where}: {entry['architecture']} takes {wanted} x {wanted} px images; set "
                f"train[{i}].data.size: native with {wanted} px images (it has {side} px)"
            )
        if run_side != side:
            raise VcrbenchError(
                f"{where}: the model is trained on {side} px images but the run's dataset has "
                f"{run_side} px images; set dataset.size: native on {side} px images"
            )
        try:
            recipe_of_entry(entry, config["seed"])
        except VcrbenchError as error:
            raise VcrbenchError(f"{where}: {error}") from None
        training = {e.path for e in list_entries_from_config(data)}
        shared = [path for path in evaluated if path in training]
        if shared:
            raise VcrbenchError(
                f"{where}.data shares {len(shared)} images with the run's dataset (e.g. "
                f"{shared[0]}); train on other images (e.g. split: train) than those evaluated"
            )
    for i, name in enumerate(config["models"]):
        if name.startswith(TRAINED_PREFIX) and name[len(TRAINED_PREFIX):] not in names:
            raise VcrbenchError(
                f"config: models[{i}] {name!r} names no train entry (entries: "
                f"{', '.join(names) or 'none'}); add one with name: {name[len(TRAINED_PREFIX):]}"
            )
