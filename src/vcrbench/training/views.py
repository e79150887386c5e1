"""The views of a training batch: what the model sees of each image, for fine-tuning and for
training from scratch alike.

A batch's images are ``(B, H, W, 3)`` uint8. Its *views* are named images aligned with it
(:class:`Views`): :data:`INPUT` (the image as cropped and flipped, and for the ``standard``
fine-tuning corrupted on a fraction of the batch), AugMix's two views (:data:`AUGMIX_VIEWS`)
and REVa's PGD counterpart (:data:`ADVERSARIAL`). The losses (:mod:`vcrbench.training.losses`)
read the logits by these names.

Both training paths make a batch's views with the functions here:

- :func:`pad_crop_flip`: random crops from the zero-padded image and horizontal flips (AugMix's
  CIFAR crop), on any device;
- :class:`AugMixViews`: the two AugMix views of a batch, image ``p`` of view ``v`` drawn from
  the generator of ``key(p, v)`` (``p`` the image's place in the epoch's order), made for the
  whole batch at once (:func:`vcrbench.training.augmix_batch.augmix_views`);
- :func:`operation_pool`: the operations AugMix's chains draw from (AugMix's nine, and REVa's
  targeted corruptions at fixed parameters).

What differs between the paths is the recipe: the keys of the draws (a fine-tuning entry's
``(seed, name, epoch, …)``, a from-scratch recipe's ``(seed, epoch, …)``), which crop (the
fine-tuning geometry also has ``resized``) and how the counterparts are cropped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch

from vcrbench.errors import VcrbenchError
from vcrbench.training.augmix import AUGMIX_OPS, CorruptionOp, draw_augmix
from vcrbench.training.augmix_batch import augmix_views
from vcrbench.training.spec import AugMixSettings

#: The view whose accuracy and loss the training log reports (split into clean and corrupted
#: images by the fine-tuning log).
INPUT = "input"
#: The two AugMix views of AugMix's and REVa's consistency loss, and REVa's PGD counterpart.
AUGMIX_VIEWS = ("augmix1", "augmix2")
ADVERSARIAL = "adversarial"


@dataclass(frozen=True)
class Views:
    """The views of one batch.

    Attributes:
        images: view name -> ``(B, H, W, 3)`` uint8 images, row ``i`` made from image ``i``;
            always has :data:`INPUT`.
        corrupted: ``(B,)`` bool, the images whose :data:`INPUT` view is corrupted (for the
            training log's clean / corrupted split).
    """

    images: dict[str, np.ndarray]
    corrupted: np.ndarray


class Augmentation(Protocol):
    """Makes the views of a batch: ``(images, epoch, positions, device) -> Views``, where
    ``positions`` are the images' places in the epoch's order (the key of their draws)."""

    def __call__(self, images: np.ndarray, epoch: int, positions: range,
                 device: torch.device) -> Views: ...


def pad_crop_flip(images: torch.Tensor, dx: torch.Tensor, dy: torch.Tensor, flip: torch.Tensor,
                  padding: int) -> torch.Tensor:
    """Random crops from zero-padded images and horizontal flips, on any device.

    Args:
        images: (B, H, W, C) uint8.
        dx, dy: (B,) int64 offsets of the crop in the padded image, in [0, 2 * padding].
        flip: (B,) bool.
        padding: zero padding (px) on every side; 0 for no crop.
    Returns:
        (B, H, W, C) uint8.
    """
    if padding:
        b, h, w, _ = images.shape
        padded = torch.nn.functional.pad(images, (0, 0, padding, padding, padding, padding))
        rows = dy[:, None] + torch.arange(h, device=images.device)
        cols = dx[:, None] + torch.arange(w, device=images.device)
        batch = torch.arange(b, device=images.device)[:, None, None]
        images = padded[batch, rows[:, :, None], cols[:, None, :]]
    return torch.where(flip[:, None, None, None], images.flip(2), images)


def operation_pool(targeted: tuple[str, ...], augmix_ops: bool, side: int,
                   severity: int | None = None, domain_fraction: float | None = None,
                   what: str = "training") -> tuple[tuple[str, ...], dict[str, CorruptionOp]]:
    """The operations of AugMix's chains and the corruption operations among them: AugMix's
    nine (unless ``augmix_ops`` is false), then the ``targeted`` corruptions at a fixed point
    for images of ``side`` px (:meth:`~vcrbench.training.augmix.CorruptionOp.at`: a fraction
    of the domain when ``domain_fraction`` is given, else ImageNet-C severity ``severity``,
    CIFAR-10-C's at 32 px). An empty pool is an error naming ``what``."""
    corruptions = {name: CorruptionOp.at(name, severity, domain_fraction, side=side)
                   for name in targeted}
    pool = (AUGMIX_OPS if augmix_ops else ()) + tuple(corruptions)
    if not pool:
        raise VcrbenchError(f"{what}: the AugMix pool is empty (no targeted corruption and "
                            "reva.augmix_ops false)")
    return pool, corruptions


@dataclass(frozen=True)
class AugMixViews:
    """The two AugMix views of a batch (AugMix, Hendrycks et al. 2020, §3).

    Attributes:
        pool: the operation names a chain draws from (:func:`operation_pool`).
        corruptions: corruption name -> operation, for the names of ``pool`` that are
            corruptions.
        settings: AugMix's width, depth, severity, α.
        key: ``(position, view) -> SeedSequence`` of the draws of view ``view`` (0 or 1) of
            the image at ``position`` of the epoch's order; picklable (a module-level function
            or a partial of one) so that :class:`~vcrbench.training.view_workers.ViewWorkers`
            can make the views in other processes.
    """

    pool: tuple[str, ...]
    corruptions: Mapping[str, CorruptionOp]
    settings: AugMixSettings
    key: Callable[[int, int], np.random.SeedSequence]

    def __call__(self, images: torch.Tensor, positions: range) -> list[torch.Tensor]:
        """Views of ``images`` (B, H, W, 3) uint8 at epoch ``positions``: two (B, H, W, 3)
        uint8 tensors on the images' device; a view does not depend on the rest of the batch."""
        chw = images.permute(0, 3, 1, 2)
        views = []
        for v in range(len(AUGMIX_VIEWS)):
            draws = [draw_augmix(np.random.default_rng(self.key(p, v)), self.pool,
                                 self.settings) for p in positions]
            views.append(augmix_views(chw, draws, self.corruptions).permute(0, 2, 3, 1))
        return views
