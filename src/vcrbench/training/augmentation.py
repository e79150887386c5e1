"""Augmentations of a training batch: which views of its images the model sees.

An augmentation turns the batch's prepared images (``(B, H, W, 3)`` uint8) into named *views*
(:class:`Views`), each ``(B, H, W, 3)`` uint8 and aligned with the batch; the epoch loop feeds
every view to the model and hands the logits per view to the loss (:mod:`vcrbench.training.
losses`). The view ``input`` is the one whose accuracy the training log reports. Every random
draw is keyed by ``(seed, entry, epoch, position of the image in the epoch)``, so a view is the
same after a restart and whatever the batch size.

:class:`CorruptionAugmentation` (VCR paper §4.3, NOC §3.2): the first ``round(fraction · B)``
images of each batch (a random subset, since the order is random) are corrupted with their own
parameters drawn over the corruption's whole domain (``linear``: U(C) as in the paper, or
``visual``) and their own pixel-noise seed; the corrupted uint8 image is what the model sees.

:class:`AugMixAugmentation` (methods ``augmix``, ``reva_minus``, ``reva``): the clean image as
``input``, two AugMix views (:data:`AUGMIX_VIEWS`, :mod:`vcrbench.training.augmix`; view ``v``
of the image at position ``p`` keyed by ``(seed, entry, epoch, p, v)``) and, for REVa, its PGD
counterpart as :data:`ADVERSARIAL` (:mod:`vcrbench.training.adversarial`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch

from vcrbench.core.seeding import EPOCH_AUGMIX, EPOCH_NOISE, EPOCH_PARAMETERS, seed_of
from vcrbench.training.spec import TrainingSpec, epoch_order

#: The view whose accuracy and loss the training log splits into clean and corrupted images.
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


def corrupted_count(batch: int, fraction: float) -> int:
    """How many images of a batch of ``batch`` are corrupted: ``round(fraction · batch)``,
    half rounded up (so 0.5 of an odd batch corrupts the larger half)."""
    return min(batch, int(math.floor(fraction * batch + 0.5)))


def augmentation_draws(spec: TrainingSpec, epoch: int, positions: range
                       ) -> tuple[dict[str, np.ndarray], list[int]]:
    """Parameters (name -> (k,) float64) and pixel-noise seeds of the images at ``positions``
    (their places in the epoch's order) for the augmentation corruption."""
    from vcrbench.corruptions import get_corruption
    from vcrbench.corruptions.sampling import sample_parameters

    names = list(get_corruption(spec.corruption).parameters)
    points = [
        sample_parameters(
            spec.corruption, np.random.default_rng(spec.key(epoch, EPOCH_PARAMETERS, p)),
            spec.spacing,
        )
        for p in positions
    ]
    seeds = [seed_of(spec.key(epoch, EPOCH_NOISE, p)) for p in positions]
    params = {n: np.array([point[n] for point in points], np.float64) for n in names}
    return params, seeds


@dataclass(frozen=True)
class CorruptionAugmentation:
    """The fine-tuning entry's corruption on a fraction of each batch (module docstring); no
    image is changed when the entry has no augmentation corruption."""

    spec: TrainingSpec

    def __call__(self, images: np.ndarray, epoch: int, positions: range,
                 device: torch.device) -> Views:
        from vcrbench.corruptions import corrupt_uint8

        spec = self.spec
        k = corrupted_count(len(images), spec.fraction) if spec.corruption else 0
        if k:
            params, seeds = augmentation_draws(spec, epoch, positions[:k])
            images[:k] = corrupt_uint8(spec.corruption, images[:k], params, seeds, device)
        corrupted = np.zeros(len(images), bool)
        corrupted[:k] = True
        return Views({INPUT: images}, corrupted)


@dataclass(frozen=True)
class AugMixAugmentation:
    """The clean image, two AugMix views and (with ``adversarial``) the PGD counterpart.

    Attributes:
        spec: the entry (its ``augmix`` settings, key and order).
        pool: the operation names a chain draws from (AugMix's nine, and REVa's corruptions).
        corruptions: corruption name -> :class:`~vcrbench.training.augmix.CorruptionOp` for
            the names of ``pool`` that are corruptions.
        adversarial: ``(N, H, W, 3)`` uint8 counterparts aligned with the training index, or
            None (no adversarial view).
    """

    spec: TrainingSpec
    pool: tuple[str, ...]
    corruptions: dict
    adversarial: np.ndarray | None = None

    def __call__(self, images: np.ndarray, epoch: int, positions: range,
                 device: torch.device) -> Views:
        from vcrbench.training.augmix import augmix_view, draw_augmix

        views = {INPUT: images}
        for v, name in enumerate(AUGMIX_VIEWS):
            out = np.empty_like(images)
            for i, position in enumerate(positions):
                rng = np.random.default_rng(self.spec.key(epoch, EPOCH_AUGMIX, position, v))
                draw = draw_augmix(rng, self.pool, self.spec.augmix)
                image = torch.from_numpy(images[i]).to(device).permute(2, 0, 1)
                out[i] = augmix_view(image, draw, self.corruptions).permute(1, 2, 0).cpu().numpy()
            views[name] = out
        if self.adversarial is not None:
            order = epoch_order(len(self.adversarial), self.spec, epoch)
            views[ADVERSARIAL] = self.adversarial[order[positions.start:positions.stop]]
        return Views(views, np.zeros(len(images), bool))
