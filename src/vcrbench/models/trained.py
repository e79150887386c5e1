"""Models trained here from scratch as a model source: where ``trained:<name>`` is found and how
its file is read (the training package writes these files: ``vcrbench.training.scratch``).

A file is a ``torch.save`` dict (loaded with ``weights_only=True``)::

    format        "vcrbench-scratch"
    version       1
    recipe        the training settings (ScratchRecipe.as_dict(): architecture, classes, seed,
                  mean, std, ...)
    epoch         epochs trained so far
    log           the per-epoch training rows
    state_dict    the model's parameters and buffers
    data          what it was trained on: label_space, side (px), name
    optimizer     (per-epoch states only) the optimiser state, to resume

The final ``results/<run>/models/<name>/model.pt`` has no optimiser state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from vcrbench.errors import VcrbenchError

FORMAT = "vcrbench-scratch"
VERSION = 1


def read_trained(path: str | Path) -> dict[str, Any]:
    """The checkpoint dict of a from-scratch model or training state, checked for its format."""
    path = Path(path)
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises many types for a damaged file
        raise VcrbenchError(f"cannot read training checkpoint {path} ({error}); delete it "
                            "to train that epoch again") from error
    if not isinstance(checkpoint, dict) or checkpoint.get("format") != FORMAT:
        raise VcrbenchError(f"{path} is not a from-scratch training checkpoint of vcrbench")
    return checkpoint


def load_trained(target: str, models_dir: str | Path | None) -> tuple:
    """``(module, preprocessing, description, classes)`` of ``trained:<target>``, on the CPU:
    the CIFAR architecture of its recipe with the final weights, normalised as in training, at
    the side of its training images."""
    from vcrbench.models.cifar import build_cifar_model
    from vcrbench.models.finetuned import checkpoint_path
    from vcrbench.models.preprocess import Preprocessing

    path = checkpoint_path(target, models_dir, kind="trained")
    checkpoint = read_trained(path)
    recipe = checkpoint["recipe"]
    module = build_cifar_model(recipe["architecture"], int(recipe["classes"]),
                               int(recipe.get("seed", 0)))
    try:
        module.load_state_dict(checkpoint["state_dict"], strict=True)
    except RuntimeError as error:
        raise VcrbenchError(f"{path}: its weights do not fit {recipe['architecture']} ({error}); "
                            "train it again") from None
    data = checkpoint.get("data", {})
    pre = Preprocessing(int(data.get("side", 32)), tuple(recipe["mean"]), tuple(recipe["std"]),
                        "bilinear")
    description = (f"{recipe['architecture']} trained from scratch for {checkpoint['epoch']} "
                   f"epochs on {data.get('label_space', 'unknown data')} ({path})")
    return module.eval(), pre, description, int(recipe["classes"])
