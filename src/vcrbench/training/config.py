"""The ``finetune`` section of a run configuration: checks that a JSON schema cannot express."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vcrbench.corruptions import CORRUPTIONS
from vcrbench.data.config import check_dataset
from vcrbench.errors import VcrbenchError
from vcrbench.models.registry import parse_model_name


def check_finetune(config: Mapping[str, Any], train_keys: Mapping[str, str] | None = None) -> None:
    """Fine-tuning entries: unique names, a loadable non-fine-tuned base, labelled training
    images, a known augmentation, and every ``finetuned:<name>`` model naming an entry.

    ``train_keys``: entry name -> the config key that sets its training images, for entries
    generated from another section (e.g. ``overlap.train``), so that messages name the key the
    user wrote.
    """
    train_keys = train_keys or {}
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
            key = train_keys.get(entry["name"], f"finetune[{i}].train")
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
        check_method(config, entry, where)
    for i, name in enumerate(config["models"]):
        spec = parse_model_name(name)
        if spec.kind == "finetuned" and spec.target not in names:
            raise VcrbenchError(
                f"config: models[{i}] {name!r} names no finetune entry (entries: "
                f"{', '.join(names) or 'none'}); add one with name: {spec.target}"
            )


def check_native_finetune(config: Mapping[str, Any],
                          train_keys: Mapping[str, str] | None = None) -> None:
    """Fine-tuning entries of a run at native size or on CIFAR labels (``dataset.size:
    native``, e.g. 32 px CIFAR-10): the base is a model trained here (``trained:<name>`` of a
    train entry, which classifies the run's label space at its image side), and the training
    images are labelled in the run's label space, at its native side, none of them (compared
    by file: class-folder ids repeat across splits) an evaluation image.

    ``train_keys``: entry name -> the config key that sets its training images (as in
    :func:`check_finetune`). Raises :class:`VcrbenchError` naming the entry, the key and what
    to use instead, before any job.
    """
    from vcrbench.data.datasets import (
        NATIVE,
        dataset_side,
        label_space,
        list_entries_from_config,
    )
    from vcrbench.training.train_config import TRAINED_PREFIX

    train_keys = train_keys or {}
    dataset = config["dataset"]
    space, side = label_space(dataset), dataset_side(dataset)
    run = f"{space.name} at size {dataset['size']} ({side} px)"
    trained = [entry["name"] for entry in config.get("train", [])]
    evaluated: set[str] | None = None
    checked: dict[str, None] = {}
    for i, entry in enumerate(config["finetune"]):
        where = f"config: finetune[{i}] ({entry['name']})"
        base = entry["base"]
        target = base[len(TRAINED_PREFIX):] if base.startswith(TRAINED_PREFIX) else None
        if target is None:
            raise VcrbenchError(
                f"{where}.base {base!r} is not a model trained here, but the run's dataset is "
                f"{run}; fine-tuning there starts from a model trained in that label space at "
                f"that size: set base: trained:<name> of a train entry (entries: "
                f"{', '.join(trained) or 'none'})")
        if target not in trained:
            raise VcrbenchError(
                f"{where}.base {base!r} names no train entry (entries: "
                f"{', '.join(trained) or 'none'}); name one, or add a train entry with name: "
                f"{target} (a checkpoint path is not accepted here: the workflow trains the "
                "base first)")
        reva = entry.get("reva") or {}
        if entry.get("method") == "reva" and reva.get("targeted", "auto") != "auto" and (
                reva.get("domain_fraction") is None):
            from vcrbench.corruptions import imagenet_c_samples

            for name in reva["targeted"]:
                try:
                    imagenet_c_samples(name, side)
                except (KeyError, VcrbenchError) as error:
                    raise VcrbenchError(f"{where}.reva.targeted: {name!r} at {side} px: {error}; "
                                        "set reva.domain_fraction or leave it out") from None
        key = train_keys.get(entry["name"], f"finetune[{i}].train")
        data = entry["train"]
        check_dataset(data, key)
        data_space = label_space(data)
        if data["source"] == "builtin":
            raise VcrbenchError(
                f"{where}: {key} is the builtin photographs, which have no labels and cannot "
                f"train a model; set {key} to labelled {space.name} images (e.g. source: "
                f"imagefolder with classes: {space.name}, size: native)")
        if data_space != space:
            raise VcrbenchError(
                f"{where}: {key} has {data_space.name} labels ({data_space.classes} classes) "
                f"but the run's dataset and {base} have {space.name} labels ({space.classes}); "
                f"fine-tune on labelled {space.name} images (e.g. source: imagefolder with "
                f"classes: {space.name}, or source: {space.name} with split: train)")
        data_side = dataset_side(data)
        if data.get("size") != NATIVE or data_side != side:
            raise VcrbenchError(
                f"{where}: {key} has {data_side} px images but {base} takes the run's {side} px "
                f"images; set {key}.size: native on {side} px images")
        identity = repr(sorted(data.items()))
        if identity in checked:
            continue
        checked[identity] = None
        if evaluated is None:
            evaluated = {e.path for e in list_entries_from_config(dataset)}
        shared = sorted(e.path for e in list_entries_from_config(data) if e.path in evaluated)
        if shared:
            raise VcrbenchError(
                f"{where}: {key} shares {len(shared)} images with the run's dataset (e.g. "
                f"{shared[0]}); fine-tune on other images (e.g. the training split) than those "
                "evaluated")


def check_method(config: Mapping[str, Any], entry: Mapping[str, Any], where: str) -> None:
    """An entry's ``method`` and its settings (``augmix``, ``reva``, ``geometry``,
    ``clip_grad_norm``; ``auto`` values resolved for its training images)."""
    from vcrbench.training.spec import (
        augmix_severity,
        regime_of,
        resolve_clip,
        resolve_geometry,
        resolve_pgd,
    )

    method = entry.get("method", "standard")
    regime = regime_of(entry["train"])
    try:
        resolve_geometry(entry.get("geometry") or {}, method, regime)
        resolve_clip(entry.get("clip_grad_norm", "auto"), method, regime)
        augmix_severity((entry.get("augmix") or {}).get("severity", "auto"), regime)
        resolve_pgd((entry.get("reva") or {}).get("pgd") or {}, regime)
    except VcrbenchError as error:
        raise VcrbenchError(f"{where}: {error}") from None
    if method == "standard":
        return
    if entry["augmentation"]["corruption"] is not None:
        raise VcrbenchError(
            f"{where}: augmentation.corruption is for method standard; method {method} makes "
            "its own views (AugMix, PGD), so remove augmentation.corruption (reva.targeted "
            "adds corruptions to REVa's AugMix operations)"
        )
    if method != "reva":
        return
    reva = entry["reva"]
    targeted = reva["targeted"]
    if targeted == "auto":
        if not config.get("reva", {}).get("enabled"):
            raise VcrbenchError(
                f"{where}.reva.targeted is auto, which reads the non-robust corruptions of REVa "
                "part 1 (reva/groups), but reva.enabled is false; enable it or give "
                "reva.targeted as a list of corruptions"
            )
        return
    for name in targeted:
        if name not in CORRUPTIONS:
            raise VcrbenchError(
                f"{where}.reva.targeted: {name!r} is not a known corruption; known: "
                f"{', '.join(CORRUPTIONS)}"
            )
        if reva["domain_fraction"] is None and CORRUPTIONS[name].imagenet_c_severities is None:
            raise VcrbenchError(
                f"{where}.reva.targeted: {name} has no ImageNet-C severities, so "
                f"reva.severity cannot place it; set reva.domain_fraction (0-1 of its domain) "
                "or leave it out"
            )
    if not reva["augmix_ops"] and not targeted:
        raise VcrbenchError(f"{where}.reva: augmix_ops is false and nothing is targeted")


def check_comparison_geometry(finetuned: Mapping[str, Mapping[str, Any]]) -> None:
    """REVa's compared fine-tuning entries (label -> entry) crop and flip their training
    images alike (``geometry`` with ``auto`` resolved; the PGD counterpart's and the clipping
    may differ by method): ``auto`` gives ``standard`` none and the AugMix methods the authors'
    crops, so a Standard entry compared with them needs its ``geometry`` set."""
    from vcrbench.training.spec import regime_of, resolve_geometry

    resolved = {}
    for label, entry in finetuned.items():
        try:
            geometry = resolve_geometry(entry.get("geometry") or {}, entry["method"],
                                        regime_of(entry["train"]))
        except VcrbenchError as error:
            raise VcrbenchError(f"config: finetune {entry['name']}: {error}") from None
        resolved[label] = {k: geometry[k] for k in ("crop", "padding", "scale", "flip")}
    if len({repr(v) for v in resolved.values()}) > 1:
        raise VcrbenchError(
            "config: reva.comparison compares methods trained alike, but their finetune entries "
            "crop and flip the training images differently (geometry, auto resolved): "
            + "; ".join(f"{label}: crop {_crop_text(v)}, flip {v['flip']}"
                        for label, v in resolved.items())
            + "; set geometry on the entries that differ (e.g. the standard entry's geometry: "
            "{crop: resized, flip: true}, as the AugMix methods' auto on ImageNet)")


def _crop_text(geometry: Mapping[str, Any]) -> str:
    crop = geometry["crop"]
    if crop == "pad":
        return f"pad ({geometry['padding']} px)"
    if crop == "resized":
        return f"resized (scale {geometry['scale'][0]:g}-{geometry['scale'][1]:g})"
    return crop
