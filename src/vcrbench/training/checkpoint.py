"""Writing fine-tuning checkpoints (the file format and its reader are
:mod:`vcrbench.models.finetuned`: a fine-tuned model is a model source like any other).

An epoch's checkpoint holds the model's weights and the optimiser state, so that the next epoch
continues from it; the final ``models/<name>/checkpoint.pt`` is the last epoch's without the
optimiser state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from vcrbench.core.files import atomic_write
from vcrbench.models.finetuned import FORMAT, VERSION
from vcrbench.training.spec import TrainingSpec


def epoch_checkpoint(spec: TrainingSpec, epoch: int, module: torch.nn.Module,
                     optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """The checkpoint dict after ``epoch``: every tensor copied to the CPU."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "name": spec.name,
        "base": spec.base,
        "spec": spec.as_dict(),
        "epoch": epoch,
        "state_dict": {k: v.detach().cpu().clone() for k, v in module.state_dict().items()},
        "optimizer": cpu_copy(optimizer.state_dict()),
    }


def cpu_copy(value: Any) -> Any:
    """A copy of a (nested) model or optimiser state with every tensor on the CPU."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().clone()
    if isinstance(value, dict):
        return {k: cpu_copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(cpu_copy(v) for v in value)
    return value


def final_checkpoint(last_epoch: dict[str, Any]) -> dict[str, Any]:
    """The model checkpoint of the last epoch without its optimiser state."""
    return {key: value for key, value in last_epoch.items() if key != "optimizer"}


def save_checkpoint(checkpoint: dict[str, Any], path: str | Path) -> None:
    """Write a checkpoint atomically (a partial file is never left under its final name)."""
    with atomic_write(path) as tmp:
        torch.save(checkpoint, tmp)
