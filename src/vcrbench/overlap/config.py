"""The ``overlap`` section of a run configuration: the models the overlap report needs.

Roles: ``standard`` (the base fine-tuned without augmentation, ``overlap-standard``, or the
base itself with ``standard: base``) and one model per candidate corruption ``c``
(``finetuned:overlap-<c>``, fine-tuned with ``c`` as augmentation); the CE baseline is
``baseline`` or else the base. The fine-tuning entries of those models are generated here from
``overlap.finetune`` (:func:`overlap_finetune_entries`) and join the run's ``finetune`` list;
:func:`roles` is the one mapping from role to model that the config checks and the workflow
rules both use.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from vcrbench.errors import VcrbenchError
from vcrbench.models.registry import parse_model_name

#: Prefix of the fine-tuning entries the overlap report generates.
OVERLAP_PREFIX = "overlap-"
#: The role of the model trained without augmentation.
STANDARD = "standard"


def _trained_roles(overlap: Mapping[str, Any]) -> list[str]:
    """The roles whose model is fine-tuned here: ``standard`` (unless ``standard: base``), then
    every candidate."""
    candidates = list(overlap["candidates"] or [])
    if not candidates:
        return []
    return ([STANDARD] if overlap["standard"] == "finetuned" else []) + candidates


def roles(overlap: Mapping[str, Any]) -> dict[str, str]:
    """Role (``standard`` or a candidate) -> model name; empty without candidates."""
    trained = _trained_roles(overlap)
    if not trained:
        return {}
    models = {STANDARD: overlap["base"]}
    models.update({role: f"finetuned:{OVERLAP_PREFIX}{role}" for role in trained})
    return models


def baseline(overlap: Mapping[str, Any]) -> str:
    """The model whose errors are the CE baseline: ``baseline``, else ``base``."""
    return overlap["baseline"] or overlap["base"]


def report_models(overlap: Mapping[str, Any]) -> list[str]:
    """Every model the overlap report reads (the roles', then the baseline), no repeats; none
    without candidates."""
    if not overlap["candidates"]:
        return []
    return list(dict.fromkeys([*roles(overlap).values(), baseline(overlap)]))


def overlap_finetune_entries(overlap: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The fine-tuning entries of the overlap report (before defaults): ``overlap-standard``
    (unless ``standard: base``) and ``overlap-<c>`` per candidate, from ``overlap.finetune``."""
    trained = _trained_roles(overlap)
    if not trained:
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
    return [
        {
            "name": f"{OVERLAP_PREFIX}{role}",
            "base": overlap["base"],
            "train": copy.deepcopy(overlap.get("train", {})),
            "augmentation": {**augmentation, "corruption": None if role == STANDARD else role},
            **copy.deepcopy(template),
        }
        for role in trained
    ]


def check_native_overlap(config: Mapping[str, Any], space: str, size: Any) -> None:
    """The overlap report on a run at native size or on CIFAR labels (e.g. 32 px CIFAR-10):
    its generated models are fine-tuned from a model trained here, so ``overlap.base`` is
    ``trained:<name>`` of a train entry; the CE baseline (``overlap.baseline``, the papers'
    AlexNet, an ImageNet model) is null (= the base) or a model trained here too; accuracy is
    over the data set's own classes (``classes: 1000`` means the whole label space there; the
    16 categories are ImageNet's)."""
    overlap = config["overlap"]
    if not overlap["candidates"]:
        return
    trained = [entry["name"] for entry in config.get("train", [])]
    entries = f"train entries: {', '.join(trained) or 'none'}"
    where = f"the dataset is {space} at size {size}"
    for key in ("base", "baseline"):
        model = overlap[key]
        if model is None:
            continue
        target = model.partition(":")[2] if model.startswith("trained:") else None
        if target is None:
            extra = (" (the papers' CE baseline is AlexNet, an ImageNet model; on these images "
                     "the baseline is a model trained here, or null for overlap.base)"
                     if key == "baseline" else "")
            raise VcrbenchError(
                f"config: overlap.{key} is {model!r}, a model of ImageNet's 1000 classes, but "
                f"{where}{extra}; set overlap.{key}: trained:<name> of a train entry "
                f"({entries})")
        if target not in trained:
            raise VcrbenchError(f"config: overlap.{key} {model!r} names no train entry "
                                f"({entries}); name one")
    if overlap["classes"] == 16:
        raise VcrbenchError(
            f"config: overlap.classes is 16, ImageNet's 16 categories, but {where}; use "
            "classes: 1000 (accuracy over the data set's own classes)")


def check_overlap(config: Mapping[str, Any]) -> None:
    """The overlap report: at least two candidates among the run's corruptions, registry models."""
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
