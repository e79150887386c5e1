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
from vcrbench.training.scratch import (
    ADVERSARIAL_METHODS,
    AUGMIX_METHODS,
    FAST_RECIPE,
    ScratchRecipe,
    ScratchReva,
)
from vcrbench.training.spec import AugMixSettings, regime_of, resolve_clip

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
    values["clip_grad_norm"] = resolve_clip(values.get("clip_grad_norm", "auto"),
                                            entry["method"], regime_of(entry["data"]))
    return ScratchRecipe.from_dict({**values, "architecture": entry["architecture"],
                                    "classes": label_space(entry["data"]).classes,
                                    "method": entry["method"],
                                    "augmix": augmix_settings(entry),
                                    "reva": reva_settings(entry), "seed": seed})


def workflow_recipe(entry: Mapping[str, Any], run_seed: int) -> dict[str, Any]:
    """The recipe a ``train_epoch`` job is given (:meth:`ScratchRecipe.as_dict` of
    :func:`recipe_of_entry`), so that a changed setting trains again. A REVa entry's ``reva``
    part also names what else its training reads: the standard entry, the measure that chooses
    ``targeted: auto`` and the PGD settings without the shard size, and with listed targeted
    corruptions their parameter points at the entry's side (so a change of the registry's
    severities trains again; with ``auto`` the groups file that chooses them is an input)
    (:func:`recipe_from_workflow` takes them out again)."""
    from vcrbench.corruptions import imagenet_c_samples

    recipe = recipe_of_entry(entry, run_seed).as_dict()
    if entry["method"] in ADVERSARIAL_METHODS:
        reva = entry["reva"]
        recipe["reva"].update(
            standard=reva["standard"],
            auto_measure=reva["auto_measure"],
            pgd={k: v for k, v in reva["pgd"].items() if k != "shard_size"},
        )
        targeted, severity = recipe["reva"]["targeted"], recipe["reva"]["severity"]
        if targeted != "auto" and targeted:
            side = input_size(entry["architecture"])
            recipe["reva"]["targeted_points"] = {
                name: imagenet_c_samples(name, side)[int(severity) - 1] for name in targeted}
    return recipe


def recipe_from_workflow(values: Mapping[str, Any]) -> tuple[ScratchRecipe, str | None,
                                                               str | None]:
    """``(recipe, standard, auto_measure)`` of a :func:`workflow_recipe` dict: the recipe, and
    for a REVa entry the standard entry's name and the measure of ``targeted: auto`` (None
    otherwise)."""
    values = dict(values)
    standard = measure = None
    if "reva" in values:
        reva = dict(values["reva"])
        standard, measure = reva.pop("standard"), reva.pop("auto_measure")
        reva.pop("pgd")
        reva.pop("targeted_points", None)
        values["reva"] = reva
    return ScratchRecipe.from_dict(values), standard, measure


def augmix_settings(entry: Mapping[str, Any]) -> AugMixSettings | None:
    """The AugMix settings of an entry of an AugMix method (its ``augmix`` keys over AugMix's
    defaults; ``severity: auto`` is 3 on CIFAR data), None for other methods."""
    if entry["method"] not in AUGMIX_METHODS:
        return None
    return AugMixSettings.from_config(entry.get("augmix") or {}, regime_of(entry["data"]))


def reva_settings(entry: Mapping[str, Any]) -> ScratchReva | None:
    """REVa's settings of a ``reva_minus`` / ``reva`` entry (``reva_minus`` targets nothing),
    None for other methods; ``targeted`` may still be ``"auto"``."""
    if entry["method"] not in ADVERSARIAL_METHODS:
        return None
    reva = entry.get("reva") or {}
    targeted = reva.get("targeted", "auto") if entry["method"] == "reva" else ()
    return ScratchReva(targeted=targeted, severity=reva.get("severity", 3),
                       augmix_ops=reva.get("augmix_ops", True), gamma=reva.get("gamma", 0.5))


def pgd_identity(entry: Mapping[str, Any], run_seed: int) -> tuple:
    """What a REVa entry's PGD counterparts depend on: the standard entry, the training images,
    the PGD settings (without the shard size) and the seed. Entries with the same identity
    share one crafting."""
    import json

    pgd = {k: v for k, v in entry["reva"]["pgd"].items() if k != "shard_size"}
    seed = run_seed if entry["seed"] is None else entry["seed"]
    return (entry["reva"]["standard"], json.dumps(entry["data"], sort_keys=True),
            json.dumps(pgd, sort_keys=True), seed)


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
        if entry["method"] in ADVERSARIAL_METHODS:
            check_reva_entry(config, entry, where, side)
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


def check_reva_entry(config: Mapping[str, Any], entry: Mapping[str, Any], where: str,
                     side: int) -> None:
    """A ``reva_minus`` / ``reva`` entry: its standard model is another train entry of method
    standard on the same training images; listed targeted corruptions have CIFAR-10-C (at
    32 px) or ImageNet-C severities at the entry's side; ``targeted: auto`` needs REVa part 1
    to validate the standard model."""
    from vcrbench.corruptions import imagenet_c_samples

    reva = entry["reva"]
    entries = {e["name"]: e for e in config.get("train", [])}
    standard = entries.get(reva["standard"])
    if standard is None or standard is entry:
        raise VcrbenchError(
            f"{where}.reva.standard is {reva['standard']!r}; name the train entry (method "
            f"standard, the same data) whose model crafts the PGD counterparts (entries: "
            f"{', '.join(n for n in entries if n != entry['name']) or 'none'})"
        )
    if standard["method"] != "standard" or standard["data"] != entry["data"]:
        raise VcrbenchError(
            f"{where}.reva.standard {reva['standard']!r} must be trained with method standard "
            "on the same data as this entry (REVa crafts the counterparts of the training "
            "images on the standard model trained on them)"
        )
    if entry["method"] != "reva":
        return
    targeted = reva["targeted"]
    if targeted == "auto":
        model = f"{TRAINED_PREFIX}{reva['standard']}"
        validated = config["reva"]["models"]
        if not config["reva"]["enabled"] or (validated is not None and model not in validated):
            raise VcrbenchError(
                f"{where}.reva.targeted is auto, which reads the non-robust corruptions of "
                f"REVa part 1 of {model}, but part 1 does not validate it (reva.enabled, "
                "reva.models); enable it or list the corruptions in reva.targeted"
            )
        return
    for name in targeted:
        try:
            imagenet_c_samples(name, side)
        except (KeyError, VcrbenchError) as error:
            raise VcrbenchError(f"{where}.reva.targeted: {name!r}: {error}") from None

