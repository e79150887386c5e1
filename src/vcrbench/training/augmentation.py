"""Augmentations of a training batch: which views of its images the model sees.

An augmentation turns the batch's prepared images (``(B, H, W, 3)`` uint8) into named *views*
(:class:`~vcrbench.training.views.Views`), each ``(B, H, W, 3)`` uint8 and aligned with the
batch; the epoch loop feeds every view to the model and hands the logits per view to the loss
(:mod:`vcrbench.training.losses`). The view ``input`` is the one whose accuracy the training
log reports. Every random draw is keyed by ``(seed, entry, epoch, position of the image in the
epoch)``, so a view is the same after a restart and whatever the batch size.

:class:`CorruptionAugmentation` (VCR paper §4.3, NOC §3.2): the first ``round(fraction · B)``
images of each batch (a random subset, since the order is random) are corrupted with their own
parameters drawn over the corruption's whole domain (``linear``: U(C) as in the paper, or
``visual``) and their own pixel-noise seed; the corrupted uint8 image is what the model sees.
On images of side ``s`` other than 224 px the parameters are drawn as for 224 px and their
pixel lengths moved to ``s`` exactly as the evaluation's samples are
(:func:`~vcrbench.corruptions.sampling.scale_point`), so training and evaluation corrupt a
32 px image alike.

:class:`AugMixAugmentation` (methods ``augmix``, ``reva_minus``, ``reva``): the clean image as
``input``, two AugMix views (:class:`~vcrbench.training.views.AugMixViews`, the builder
training from scratch uses too; view ``v`` of the image at position ``p`` keyed by ``(seed,
entry, epoch, p, v)``) and, for REVa, its PGD counterpart as ``adversarial``
(:mod:`vcrbench.training.adversarial`). The view names and :class:`~vcrbench.training.views.
Views` are :mod:`vcrbench.training.views`'.

Crops and flips (``finetune[].geometry``, :func:`geometry_draws`, :func:`crop_flip`) come
first: the epoch loop crops and flips each batch image before its views are made, so the clean
view and the views made from it (AugMix's, the corrupted one) share one crop and flip, as in
AugMix's and the REVa authors' pipelines; the PGD counterpart is left as crafted, given the
same crop and flip, or its own (``geometry.adversarial``). Image ``p`` of epoch ``e`` draws
from the generator keyed by ``(seed, entry, e, EPOCH_GEOMETRY, p)`` (its counterpart's own
draws: ``EPOCH_ADVERSARIAL_GEOMETRY``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import numpy as np
import torch

from vcrbench.core.seeding import (
    EPOCH_ADVERSARIAL_GEOMETRY,
    EPOCH_AUGMIX,
    EPOCH_GEOMETRY,
    EPOCH_NOISE,
    EPOCH_PARAMETERS,
    seed_of,
)
from vcrbench.corruptions import corrupt_uint8, get_corruption
from vcrbench.corruptions.sampling import REFERENCE_SIDE, sample_parameters, scale_point
from vcrbench.errors import VcrbenchError
from vcrbench.training.spec import TrainingSpec, epoch_order
from vcrbench.training.views import (
    ADVERSARIAL,
    AUGMIX_VIEWS,
    INPUT,
    AugMixViews,
    Views,
    pad_crop_flip,
)


@dataclass(frozen=True)
class GeometryDraws:
    """Crops and flips of a batch, (B,) int64 / bool arrays in pixels of the image.

    ``top``, ``left``, ``height``, ``width``: the crop box (``pad``: its corner in the image
    zero-padded by ``crop_padding``, offsets in [0, 2 · padding], the size the image's;
    ``resized``: a box inside the image, resized back to the image's size; ``none``: the whole
    image). ``flip``: mirrored left-right after the crop.
    """

    top: np.ndarray
    left: np.ndarray
    height: np.ndarray
    width: np.ndarray
    flip: np.ndarray


def resized_crop_box(rng: np.random.Generator, height: int, width: int,
                     scale: tuple[float, float],
                     ratio: tuple[float, float] = (3 / 4, 4 / 3)) -> tuple[int, int, int, int]:
    """A random crop box ``(top, left, h, w)`` of an image of ``height`` x ``width`` px as
    torchvision's RandomResizedCrop draws it: up to 10 tries of an area fraction ~ U(scale)
    and a log-uniform aspect ratio (w / h) in ``ratio``, else the central crop of the largest
    box whose ratio lies in ``ratio``."""
    area = height * width
    log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
    for _ in range(10):
        target = area * rng.uniform(scale[0], scale[1])
        aspect = math.exp(rng.uniform(*log_ratio))
        w = int(round(math.sqrt(target * aspect)))
        h = int(round(math.sqrt(target / aspect)))
        if 0 < w <= width and 0 < h <= height:
            return int(rng.integers(0, height - h + 1)), int(rng.integers(0, width - w + 1)), h, w
    in_ratio = width / height
    if in_ratio < ratio[0]:
        w, h = width, int(round(width / ratio[0]))
    elif in_ratio > ratio[1]:
        h, w = height, int(round(height * ratio[1]))
    else:
        w, h = width, height
    return (height - h) // 2, (width - w) // 2, h, w


def geometry_draws(spec: TrainingSpec, epoch: int, positions: range, height: int, width: int,
                   stream: int = EPOCH_GEOMETRY) -> GeometryDraws:
    """The crops and flips of the images at ``positions`` of epoch ``epoch`` (module
    docstring), for images of ``height`` x ``width`` px; per image, one generator: the flip
    (U(0, 1) < 0.5, drawn whether used or not), then the crop."""
    rows = []
    for position in positions:
        rng = np.random.default_rng(spec.key(epoch, stream, position))
        flip = bool(rng.random() < 0.5) and spec.flip
        if spec.crop == "pad":
            span = 2 * spec.crop_padding + 1
            box = (int(rng.integers(0, span)), int(rng.integers(0, span)), height, width)
        elif spec.crop == "resized":
            box = resized_crop_box(rng, height, width, spec.crop_scale)
        else:
            box = (0, 0, height, width)
        rows.append((*box, flip))
    columns = list(zip(*rows, strict=True)) if rows else [()] * 5
    return GeometryDraws(*(np.asarray(c, np.int64) for c in columns[:4]),
                         np.asarray(columns[4], bool))


def crop_flip(images: np.ndarray, draws: GeometryDraws, spec: TrainingSpec,
              device: torch.device) -> np.ndarray:
    """``(B, H, W, 3)`` uint8 images cropped and flipped by ``draws`` (:func:`geometry_draws`):
    ``pad`` crops from the zero-padded image; ``resized`` resizes the box back to ``H x W``
    bilinearly with antialiasing (torch's, as torchvision's tensor RandomResizedCrop), rounded
    to uint8. Returns a new ``(B, H, W, 3)`` uint8 array."""
    if not len(images):
        return images
    x = torch.from_numpy(np.ascontiguousarray(images)).to(device)
    flip = torch.from_numpy(draws.flip).to(device)
    if spec.crop == "pad":
        out = pad_crop_flip(x, torch.from_numpy(draws.left).to(device),
                      torch.from_numpy(draws.top).to(device), flip, spec.crop_padding)
    else:
        _, h, w, _ = x.shape
        if spec.crop == "resized":
            crops = []
            for i in range(len(x)):
                top, left, ch, cw = (int(v[i]) for v in (draws.top, draws.left,
                                                          draws.height, draws.width))
                box = x[i, top:top + ch, left:left + cw].permute(2, 0, 1)[None].float()
                if (ch, cw) != (h, w):
                    box = torch.nn.functional.interpolate(box, size=(h, w), mode="bilinear",
                                                          align_corners=False, antialias=True)
                crops.append(box.round_().clamp_(0, 255).to(torch.uint8)[0].permute(1, 2, 0))
            x = torch.stack(crops)
        out = torch.where(flip[:, None, None, None], x.flip(2), x)
    return out.cpu().numpy()


def square_side(images: np.ndarray) -> int:
    """The side (px) of a batch of square ``(B, s, s, 3)`` images; an error for others (the
    corruptions' pixel lengths scale with one side)."""
    if images.ndim != 4 or images.shape[1] != images.shape[2]:
        raise VcrbenchError(f"training images must be square (B, s, s, 3), got {images.shape}")
    return int(images.shape[1])


def corrupted_count(batch: int, fraction: float) -> int:
    """How many images of a batch of ``batch`` are corrupted: ``round(fraction · batch)``,
    half rounded up (so 0.5 of an odd batch corrupts the larger half)."""
    return min(batch, int(math.floor(fraction * batch + 0.5)))


def augmentation_draws(spec: TrainingSpec, epoch: int, positions: range,
                       side: int = 224) -> tuple[dict[str, np.ndarray], list[int]]:
    """Parameters (name -> (k,) float64) and pixel-noise seeds of the images at ``positions``
    (their places in the epoch's order) for the augmentation corruption, on images of ``side``
    px: each point drawn as for a 224 px image, then its pixel lengths moved to ``side`` as
    the evaluation's samples are (:func:`vcrbench.corruptions.sampling.scale_point`; nothing
    changes at 224)."""
    corruption = get_corruption(spec.corruption)
    names = list(corruption.parameters)
    points = [
        sample_parameters(
            spec.corruption, np.random.default_rng(spec.key(epoch, EPOCH_PARAMETERS, p)),
            spec.spacing,
        )
        for p in positions
    ]
    if side != REFERENCE_SIDE:
        points = [scale_point(corruption, point, side) for point in points]
    seeds = [seed_of(spec.key(epoch, EPOCH_NOISE, p)) for p in positions]
    params = {n: np.array([point[n] for point in points], np.float64) for n in names}
    return params, seeds


@dataclass(frozen=True)
class CorruptionAugmentation:
    """The fine-tuning entry's corruption on a fraction of each batch (module docstring); no
    image is changed when the entry has no augmentation corruption. The parameters are drawn
    for the batch's image side (square ``(B, s, s, 3)`` images; :func:`augmentation_draws`)."""

    spec: TrainingSpec

    def __call__(self, images: np.ndarray, epoch: int, positions: range,
                 device: torch.device) -> Views:
        spec = self.spec
        k = corrupted_count(len(images), spec.fraction) if spec.corruption else 0
        if k:
            params, seeds = augmentation_draws(spec, epoch, positions[:k],
                                               side=square_side(images))
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
        x = torch.from_numpy(np.ascontiguousarray(images)).to(device)
        made = AugMixViews(self.pool, self.corruptions, self.spec.augmix,
                           partial(self.spec.key, epoch, EPOCH_AUGMIX))(x, positions)
        views = {INPUT: images}
        views.update((name, np.ascontiguousarray(view.cpu().numpy()))
                     for name, view in zip(AUGMIX_VIEWS, made, strict=True))
        if self.adversarial is not None:
            order = epoch_order(len(self.adversarial), self.spec, epoch)
            adversarial = self.adversarial[order[positions.start:positions.stop]]
            geometry = self.spec.adversarial_geometry
            if geometry != "none" and self.spec.geometric:
                stream = EPOCH_GEOMETRY if geometry == "same" else EPOCH_ADVERSARIAL_GEOMETRY
                _, height, width, _ = adversarial.shape
                adversarial = crop_flip(adversarial, geometry_draws(
                    self.spec, epoch, positions, height, width, stream), self.spec, device)
            views[ADVERSARIAL] = adversarial
        return Views(views, np.zeros(len(images), bool))
