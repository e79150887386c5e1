"""Fine-tuned checkpoints as a model source: ``finetuned:<name>`` is the checkpoint of kind
``finetuned`` (:mod:`vcrbench.models.checkpoints`, the format of both kinds of checkpoint) in
``<models_dir>/<name>/checkpoint.pt``; :func:`vcrbench.models.registry.load_model` builds its
base model and loads the weights (the training package writes these files)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vcrbench.models.checkpoints import KINDS, VERSION, checkpoint_path
from vcrbench.models.checkpoints import read_checkpoint as _read

__all__ = ["FORMAT", "VERSION", "checkpoint_path", "read_checkpoint"]

FORMAT = KINDS["finetuned"].format


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """A fine-tuned checkpoint dict, checked for its format; a clear error for anything else."""
    return _read(path, "finetuned")
