"""Fine-tuned checkpoints as a model source: where ``finetuned:<name>`` is found and how its
file is read and checked (the registry then builds the base model and loads the weights; the
training package writes these files).

A checkpoint is a ``torch.save`` dict (loaded with ``weights_only=True``)::

    format        "vcrbench-finetuned"
    version       1
    name          the finetune entry's name
    base          the registry model it started from (its architecture and preprocessing)
    spec          the training settings (vcrbench.training.spec.TrainingSpec.as_dict())
    epoch         epochs trained so far
    state_dict    the whole model's parameters and buffers
    optimizer     (per-epoch checkpoints only) the optimiser state, to resume

The final ``results/<run>/models/<name>/checkpoint.pt`` has no optimiser state.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch

from vcrbench.errors import VcrbenchError

FORMAT = "vcrbench-finetuned"
VERSION = 1
#: Environment variable naming the models folder when no ``models_dir`` is passed.
MODELS_DIR_VARIABLE = "VCRBENCH_MODELS_DIR"


#: The final file of a model of each kind in ``<models_dir>/<name>/``.
MODEL_FILES = {"finetuned": "checkpoint.pt", "trained": "model.pt"}


def checkpoint_path(target: str, models_dir: str | Path | None, kind: str = "finetuned") -> Path:
    """The checkpoint of ``finetuned:<target>`` (``kind`` trained: of ``trained:<target>``):
    ``target`` itself when it is a ``.pt`` path, else ``<models_dir>/<target>/checkpoint.pt``
    (``model.pt``; ``models_dir`` defaults to ``$VCRBENCH_MODELS_DIR``)."""
    if target.endswith(".pt"):
        path = Path(target).expanduser()
    else:
        folder = models_dir or os.environ.get(MODELS_DIR_VARIABLE)
        if not folder:
            raise VcrbenchError(
                f"{kind}:{target}: no models folder given; inside the workflow it is "
                f"results/<run>/models, elsewhere set {MODELS_DIR_VARIABLE} or use "
                f"{kind}:<path to {MODEL_FILES[kind]}>"
            )
        path = Path(folder) / target / MODEL_FILES[kind]
    if not path.is_file():
        raise VcrbenchError(
            f"{kind}:{target}: no checkpoint at {path}; build it first "
            f"(snakemake {path.as_posix()})"
        )
    return path


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """A checkpoint dict, checked for its format; a clear error for anything else."""
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises many types for damaged or foreign files
        raise VcrbenchError(
            f"{path}: not a readable vcrbench checkpoint ({type(error).__name__}: {error}); "
            "delete it and re-run its fine-tuning"
        ) from None
    if not isinstance(checkpoint, dict) or checkpoint.get("format") != FORMAT:
        raise VcrbenchError(f"{path}: not a vcrbench fine-tuned checkpoint")
    if checkpoint.get("version") != VERSION:
        raise VcrbenchError(
            f"{path}: checkpoint version {checkpoint.get('version')} is not {VERSION}; "
            "re-run its fine-tuning with this vcrbench"
        )
    return checkpoint

