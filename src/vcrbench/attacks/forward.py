"""The differentiable path from images to logits that every attack follows."""

from __future__ import annotations

from collections.abc import Callable

import torch

from vcrbench.models.preprocess import apply_preprocessing

#: (B, 3, H, W) float images in [0, 1] -> (B, classes) logits, differentiable.
Forward = Callable[[torch.Tensor], torch.Tensor]


def forward_of(model) -> Forward:
    """A loaded model (:class:`~vcrbench.models.registry.LoadedModel`) as a :data:`Forward`:
    its own preprocessing (resize, normalisation), then its module, in eval mode."""
    model.module.eval()

    def forward(x: torch.Tensor) -> torch.Tensor:
        return model.module(apply_preprocessing(model.preprocessing, x))

    return forward
