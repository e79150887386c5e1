"""Models trained here from scratch as a model source: ``trained:<name>`` is the checkpoint of
kind ``trained`` (:mod:`vcrbench.models.checkpoints`, the format of both kinds of checkpoint)
in ``<models_dir>/<name>/model.pt``, built as the CIFAR architecture of its recipe
(:func:`load_trained`; the training package writes these files, ``vcrbench.training.scratch``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vcrbench.errors import VcrbenchError
from vcrbench.models.checkpoints import KINDS, VERSION, checkpoint_path, read_checkpoint
from vcrbench.models.cifar import build_cifar_model
from vcrbench.models.preprocess import Preprocessing

__all__ = ["FORMAT", "VERSION", "load_trained", "read_trained"]

FORMAT = KINDS["trained"].format


def read_trained(path: str | Path) -> dict[str, Any]:
    """The checkpoint dict of a from-scratch model or training state, checked for its format."""
    return read_checkpoint(path, "trained")


def load_trained(target: str, models_dir: str | Path | None) -> tuple:
    """``(module, preprocessing, description, classes)`` of ``trained:<target>``, on the CPU:
    the CIFAR architecture of its recipe with the final weights, normalised as in training, at
    the side of its training images."""
    path = checkpoint_path(target, models_dir, kind="trained")
    checkpoint = read_checkpoint(path, "trained")
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
