"""Training losses: the logits of every view of a batch -> one loss per image.

A loss is any callable ``(logits, target) -> (B,)`` with ``logits`` the view name -> ``(B,
1000)`` logits of :class:`vcrbench.training.augmentation.Views` and ``target`` the ``(B,)``
ImageNet labels; the epoch loop minimises the mean over the batch.
"""

from __future__ import annotations

from typing import Protocol

import torch

from vcrbench.training.augmentation import INPUT


class Loss(Protocol):
    def __call__(self, logits: dict[str, torch.Tensor], target: torch.Tensor) -> torch.Tensor: ...


def cross_entropy(logits: dict[str, torch.Tensor], target: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of the :data:`~vcrbench.training.augmentation.INPUT` view, per image."""
    return torch.nn.functional.cross_entropy(logits[INPUT], target, reduction="none")
