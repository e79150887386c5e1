"""The dataset sections of a run configuration (``dataset`` and a fine-tuning ``train``):
checks that a JSON schema cannot express."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vcrbench.errors import VcrbenchError


def check_dataset(dataset: Mapping[str, Any], key: str) -> None:
    """A dataset block: a folder where the source needs one, and no contradictory filters.

    ``key`` names the block in messages (``dataset``, ``finetune[0].train``).
    """
    source = dataset["source"]
    if source in ("imagefolder", "imagenet-val", "cifar10", "cifar100"):
        if not dataset["path"]:
            what = ("the folder holding cifar-10-batches-py / cifar-100-python"
                    if source.startswith("cifar") else "the folder of images")
            raise VcrbenchError(
                f"config: {key}.source is {source} but {key}.path is not set; give {what}"
            )
        if not Path(dataset["path"]).is_dir():
            raise VcrbenchError(f"config: {key}.path {dataset['path']!r} is not a folder")
    if source.startswith("cifar"):
        from vcrbench.data.cifar import cifar_folder

        folder = cifar_folder(dataset["path"], source)
        if not folder.is_dir():
            raise VcrbenchError(
                f"config: {key}.path {dataset['path']!r} holds no {folder.name} folder; download "
                "the python version from https://www.cs.toronto.edu/~kriz/cifar.html and unpack "
                "it there (tar xzf)"
            )
    if dataset.get("classes", "imagenet") != "imagenet" and source != "imagefolder":
        raise VcrbenchError(
            f"config: {key}.classes is {dataset['classes']} but {key}.source is {source}; "
            "classes is for imagefolder (cifar10 / cifar100 sources know their classes)"
        )
    if (dataset.get("classes", "imagenet") != "imagenet" or source.startswith("cifar")) and (
            dataset["categories16_only"] or dataset["exclude_categories16"]):
        raise VcrbenchError(
            f"config: {key}.categories16_only / exclude_categories16 select ImageNet classes; "
            f"{key} has CIFAR labels, which have no 16-class category"
        )
    if dataset.get("size") == "native" and dataset.get("crop", "res256-crop224") != \
            "res256-crop224":
        raise VcrbenchError(
            f"config: {key}.crop is {dataset['crop']} but {key}.size is native (the images as "
            "they are, never cropped); remove crop or set size: 224")
    if dataset["categories16_only"] and dataset["exclude_categories16"]:
        raise VcrbenchError(
            f"config: {key}.categories16_only and {key}.exclude_categories16 exclude each other; "
            "set one of them"
        )
