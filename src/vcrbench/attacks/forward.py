"""The differentiable path from images to logits that every attack follows."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import torch

from vcrbench.models.preprocess import apply_preprocessing

if TYPE_CHECKING:
    from vcrbench.models.registry import LoadedModel

#: (B, 3, H, W) float images in [0, 1] (the stored size: 224, or 32 for CIFAR) -> (B, classes)
#: logits, differentiable.
Forward = Callable[[torch.Tensor], torch.Tensor]


def forward_of(model: LoadedModel) -> Forward:
    """A loaded model as a :data:`Forward`: its own preprocessing (resize, normalisation), then
    its module, in eval mode (set here). Gradients flow to the input; the attacks take them with
    :func:`torch.autograd.grad`, so none is left on the model's parameters."""
    model.module.eval()

    def forward(x: torch.Tensor) -> torch.Tensor:
        return model.module(apply_preprocessing(model.preprocessing, x))

    return forward
