"""Writing checkpoints of both training paths, in the one format of
:mod:`vcrbench.models.checkpoints` (which reads them: a model trained here is a model source
like any other).

An epoch's checkpoint holds the model's weights and the optimiser state, so that the next epoch
continues from it; the final model (``models/<name>/checkpoint.pt`` fine-tuned, ``model.pt``
from scratch) is the last epoch's without the optimiser state (:func:`final_checkpoint`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from vcrbench.core.files import atomic_write
from vcrbench.errors import VcrbenchError
from vcrbench.models.checkpoints import KINDS, VERSION


def new_checkpoint(kind: str, module_state: dict[str, torch.Tensor],
                   optimizer_state: dict[str, Any] | None = None, **fields: Any
                   ) -> dict[str, Any]:
    """A checkpoint dict of ``kind`` (``finetuned`` or ``trained``) in the format's key order:
    ``format``, ``version``, the kind's keys from ``fields`` and ``state_dict`` (a CPU copy of
    ``module_state``), then ``optimizer`` (a CPU copy of ``optimizer_state``) when given.
    ``fields`` must be exactly the kind's other keys."""
    if kind not in KINDS:
        raise VcrbenchError(f"checkpoint kind {kind!r} is not one of {', '.join(KINDS)}")
    spec = KINDS[kind]
    wanted = set(spec.keys) - {"state_dict"}
    if set(fields) != wanted:
        raise VcrbenchError(f"a {spec.what} checkpoint has the keys {sorted(wanted)}, "
                            f"got {sorted(fields)}")
    checkpoint: dict[str, Any] = {"format": spec.format, "version": VERSION}
    for key in spec.keys:
        checkpoint[key] = cpu_copy(module_state) if key == "state_dict" else fields[key]
    if optimizer_state is not None:
        checkpoint["optimizer"] = cpu_copy(optimizer_state)
    return checkpoint


def cpu_copy(value: Any) -> Any:
    """A copy of a (nested) model or optimiser state with every tensor on the CPU (mappings
    become plain dicts)."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().clone()
    if isinstance(value, dict):
        return {k: cpu_copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(cpu_copy(v) for v in value)
    return value


def final_checkpoint(last_epoch: dict[str, Any]) -> dict[str, Any]:
    """The final model's checkpoint: the last epoch's without its optimiser state."""
    return {key: value for key, value in last_epoch.items() if key != "optimizer"}


def save_checkpoint(checkpoint: dict[str, Any], path: str | Path) -> None:
    """Write a checkpoint atomically (a partial file is never left under its final name)."""
    with atomic_write(path) as tmp:
        torch.save(checkpoint, tmp)
