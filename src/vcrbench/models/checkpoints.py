"""Checkpoints of the models trained here, fine-tuned (``finetuned:<name>``) and trained from
scratch (``trained:<name>``): one file format (:data:`KINDS`), read by :func:`read_checkpoint`
and written by :mod:`vcrbench.training.checkpoint`, and where a model's file is found
(:func:`checkpoint_path`). :mod:`~vcrbench.models.finetuned` and :mod:`~vcrbench.models.trained`
load the two kinds as models.

A checkpoint is a ``torch.save`` dict (loaded with ``weights_only=True``). Its first keys say
what it is, the rest are its kind's (:data:`KINDS`), in this order::

    format        "vcrbench-finetuned" (kind finetuned) or "vcrbench-scratch" (kind trained)
    version       1
    finetuned:    name, base, spec, epoch, state_dict[, optimizer]
    trained:      recipe, epoch, log, state_dict, data[, optimizer]

    name, base    the finetune entry's name; the registry model it started from (its
                  architecture and preprocessing)
    spec          the fine-tuning settings (vcrbench.training.spec.TrainingSpec.as_dict())
    recipe        the from-scratch settings (vcrbench.training.scratch.ScratchRecipe.as_dict():
                  architecture, classes, seed, mean, std, ...)
    epoch         epochs trained so far
    log           (trained) the per-epoch training rows
    state_dict    the whole model's parameters and buffers, on the CPU
    data          (trained) what it was trained on: label_space, side (px), name
    optimizer     per-epoch checkpoints only: the optimiser state, to resume

The final model, ``results/<run>/models/<name>/checkpoint.pt`` (fine-tuned) or ``model.pt``
(trained), is its last epoch's checkpoint without ``optimizer``. The two kinds keep the format
names and keys their files had before they shared this module (the files are rule outputs that
later rules read), so that every existing file reads as it did and no run retrains.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from vcrbench.errors import VcrbenchError

VERSION = 1
#: Environment variable naming the models folder when no ``models_dir`` is passed.
MODELS_DIR_VARIABLE = "VCRBENCH_MODELS_DIR"


@dataclass(frozen=True)
class CheckpointKind:
    """One kind of checkpoint: its ``format`` value, the final model's file name in
    ``<models_dir>/<name>/``, its keys after ``format`` and ``version`` (without the optional
    ``optimizer``), those a file must have, what it is called in messages and how to remake
    one."""

    format: str
    final_file: str
    keys: tuple[str, ...]
    required: tuple[str, ...]
    what: str
    remedy: str


KINDS = {
    "finetuned": CheckpointKind("vcrbench-finetuned", "checkpoint.pt",
                                ("name", "base", "spec", "epoch", "state_dict"),
                                ("name", "base", "spec", "epoch", "state_dict"),
                                "fine-tuned", "re-run its fine-tuning"),
    # a state written before ``data`` existed has none (read as {})
    "trained": CheckpointKind("vcrbench-scratch", "model.pt",
                              ("recipe", "epoch", "log", "state_dict", "data"),
                              ("recipe", "epoch", "state_dict"),
                              "from-scratch training", "train it again"),
}
#: The final file of a model of each kind in ``<models_dir>/<name>/``.
MODEL_FILES = {kind: spec.final_file for kind, spec in KINDS.items()}


def _kind(kind: str) -> CheckpointKind:
    if kind not in KINDS:
        raise VcrbenchError(f"checkpoint kind {kind!r} is not one of {', '.join(KINDS)}")
    return KINDS[kind]


def checkpoint_path(target: str, models_dir: str | Path | None, kind: str = "finetuned") -> Path:
    """The checkpoint of ``<kind>:<target>``: ``target`` itself when it is a ``.pt`` path,
    else ``<models_dir>/<target>/`` and the kind's final file (:data:`MODEL_FILES`;
    ``models_dir`` defaults to ``$VCRBENCH_MODELS_DIR``)."""
    if target.endswith(".pt"):
        path = Path(target).expanduser()
    else:
        folder = models_dir or os.environ.get(MODELS_DIR_VARIABLE)
        if not folder:
            raise VcrbenchError(
                f"{kind}:{target}: no models folder given; inside the workflow it is "
                f"results/<run>/models, elsewhere set {MODELS_DIR_VARIABLE} or use "
                f"{kind}:<path to {_kind(kind).final_file}>"
            )
        path = Path(folder) / target / _kind(kind).final_file
    if not path.is_file():
        raise VcrbenchError(
            f"{kind}:{target}: no checkpoint at {path}; build it first "
            f"(snakemake {path.as_posix()})"
        )
    return path


def read_checkpoint(path: str | Path, kind: str) -> dict[str, Any]:
    """The checkpoint dict of a file of ``kind`` (:data:`KINDS`), checked for its format,
    version and keys; a clear error for anything else."""
    expected = _kind(kind)
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises many types for damaged or foreign files
        raise VcrbenchError(
            f"cannot read training checkpoint {path}: not a readable vcrbench checkpoint "
            f"({type(error).__name__}: {error}); delete it and {expected.remedy}"
        ) from None
    if not isinstance(checkpoint, dict) or checkpoint.get("format") != expected.format:
        raise VcrbenchError(f"{path}: not a vcrbench {expected.what} checkpoint")
    if checkpoint.get("version") != VERSION:
        raise VcrbenchError(
            f"{path}: checkpoint version {checkpoint.get('version')} is not {VERSION}; "
            f"{expected.remedy} with this vcrbench"
        )
    missing = [key for key in expected.required if key not in checkpoint]
    if missing:
        raise VcrbenchError(f"{path}: the {expected.what} checkpoint lacks {missing}; "
                            f"delete it and {expected.remedy}")
    return checkpoint
