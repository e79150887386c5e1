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
