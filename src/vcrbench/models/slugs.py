"""Folder names of models: a model string made safe for file systems and Snakemake wildcards
(``results/<run>/models/<slug>/``, the text embeddings of an ``openclip:`` model, the
predictions of every model)."""

from __future__ import annotations

import re


def model_slug(name: str) -> str:
    """A file-system and wildcard friendly folder name for a model string.

    ``torchvision:resnet50`` -> ``torchvision-resnet50``;
    ``file:my/model.py`` -> ``file-my-model.py``.
    """
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")
    return slug or "model"
