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
    for i, name in enumerate(config["models"]):
        spec = parse_model_name(name)
        if spec.kind == "finetuned" and spec.target not in names:
            raise VcrbenchError(
                f"config: models[{i}] {name!r} names no finetune entry (entries: "
                f"{', '.join(names) or 'none'}); add one with name: {spec.target}"
            )
