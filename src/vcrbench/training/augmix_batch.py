"""AugMix views of a whole batch at once, each image with its own draws.

:func:`augmix_views` gives, for a batch ``(B, 3, H, W)`` uint8 and one
:class:`~vcrbench.training.augmix.AugMixDraw` per image, the same views as
:func:`~vcrbench.training.augmix.augmix_view` image by image (the reference; tests compare the
two), without a Python loop over the images' pixels: every chain step applies each operation
once to all the images that drew it. The point operations (autocontrast, equalize, posterize,
solarize) are torchvision's or their exact vectorised form; the geometric ones build each
image's inverse affine matrix as torchvision does and sample one batched grid (torchvision's
grid convention, bilinear, zero padding around ``image − fill``); REVa's corruptions are called
once per operation on all the images that drew it (corruptions do not depend on the batch).

Training from scratch at 32 px makes two views of every training image per step, so this is
what keeps AugMix's and REVa's augmentation a small part of an epoch on a CPU
(``benchmarks/bench_augmix_views.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import torch
from torchvision.transforms import functional as TF
from torchvision.transforms.functional import _get_inverse_affine_matrix

from vcrbench.training.augmix import (
    AUGMIX_OPS,
    GEOMETRIC_OPS,
    AugMixDraw,
    Step,
    _level,
    mixing_weights,
)


def _inverse_matrix(step: Step, height: int, width: int) -> list[float]:
    """The inverse affine matrix torchvision builds for one geometric step of
    :func:`~vcrbench.training.augmix.apply_augmix_op` (centre, translation and shear as there)."""
    op, level, sign = step.op, step.level, step.sign
    if op == "rotate":
        return _get_inverse_affine_matrix([0.0, 0.0], -sign * _level(level, 30), [0.0, 0.0], 1.0,
                                          [0.0, 0.0])
    if op in ("shear_x", "shear_y"):
        degrees = math.degrees(math.atan(sign * _level(level, 0.3)))
        shear = [degrees, 0.0] if op == "shear_x" else [0.0, degrees]
        return _get_inverse_affine_matrix([-width * 0.5, -height * 0.5], 0.0, [0.0, 0.0], 1.0,
                                          shear)
    side = width if op == "translate_x" else height
    pixels = float(sign * int(_level(level, side / 3)))
    translate = [pixels, 0.0] if op == "translate_x" else [0.0, pixels]
    return _get_inverse_affine_matrix([0.0, 0.0], 0.0, translate, 1.0, [0.0, 0.0])


def _affine_grid(matrices: torch.Tensor, height: int, width: int) -> torch.Tensor:
    """Sampling grids ``(n, H, W, 2)`` of inverse affine matrices ``(n, 2, 3)`` in torchvision's
    convention (pixel centres, normalised by the half sides, ``align_corners=False``)."""
    base = torch.empty(1, height, width, 3, dtype=matrices.dtype)
    base[..., 0].copy_(torch.linspace(-width * 0.5 + 0.5, width * 0.5 - 0.5, steps=width))
    base[..., 1].copy_(torch.linspace(-height * 0.5 + 0.5, height * 0.5 - 0.5,
                                      steps=height).unsqueeze_(-1))
    base[..., 2].fill_(1)
    scale = torch.tensor([0.5 * width, 0.5 * height], dtype=matrices.dtype)
    rescaled = matrices.transpose(1, 2) / scale
    grid = base.view(1, height * width, 3).expand(len(matrices), -1, -1).bmm(rescaled)
    return grid.view(len(matrices), height, width, 2)


def geometric(images: torch.Tensor, steps: Sequence[Step], fill: int = 0) -> torch.Tensor:
    """The geometric AugMix operations of ``steps`` (one per image) on ``(n, 3, H, W)`` uint8:
    bilinear, the uncovered area blended towards grey level ``fill``."""
    height, width = images.shape[-2:]
    matrices = torch.tensor([_inverse_matrix(s, height, width) for s in steps],
                            dtype=torch.float32).view(-1, 2, 3)
    grid = _affine_grid(matrices, height, width).to(images.device)
    shifted = images.to(torch.float32) - float(fill)
    out = torch.nn.functional.grid_sample(shifted, grid, mode="bilinear", padding_mode="zeros",
                                          align_corners=False) + float(fill)
    return out.round_().clamp_(0, 255).to(torch.uint8)


def _per_image(values: Sequence[int], images: torch.Tensor) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.uint8, device=images.device).view(-1, 1, 1, 1)


def equalize(images: torch.Tensor) -> torch.Tensor:
    """torchvision's histogram equalisation of every channel of ``(n, C, H, W)`` uint8 at once:
    with ``h`` a channel's histogram and ``step = ⌊(H·W − h[max]) / 255⌋`` (the pixels below
    its brightest level), level ``v`` becomes ``min(⌊(Σ_{u<v} h[u] + ⌊step/2⌋) / step⌋, 255)``;
    a channel with ``step = 0`` stays as it is."""
    n, channels, height, width = images.shape
    flat = images.reshape(n * channels, height * width).to(torch.int64)
    hist = torch.zeros(n * channels, 256, dtype=torch.int64, device=images.device)
    hist.scatter_add_(1, flat, torch.ones_like(flat))
    brightest = hist.gather(1, flat.max(1, keepdim=True).values)
    step = (height * width - brightest) // 255
    cumulative = torch.cumsum(hist, 1)
    lut = (cumulative + step // 2) // step.clamp(min=1)
    lut = torch.nn.functional.pad(lut, [1, 0])[:, :-1].clamp(0, 255)
    out = torch.where(step > 0, lut.gather(1, flat), flat)
    return out.to(torch.uint8).view(n, channels, height, width)


def point(images: torch.Tensor, op: str, steps: Sequence[Step]) -> torch.Tensor:
    """One point operation of :data:`~vcrbench.training.augmix.AUGMIX_OPS` on ``(n, 3, H, W)``
    uint8, each image at its own step's level."""
    if op == "autocontrast":
        return TF.autocontrast(images)
    if op == "equalize":
        return equalize(images)
    if op == "posterize":
        # torchvision: x & -(2 ** (8 - bits)), bits = 4 - int(level · 4 / 10)
        masks = [(0xFF << (8 - (4 - int(_level(s.level, 4))))) & 0xFF for s in steps]
        return images & _per_image(masks, images)
    if op == "solarize":
        thresholds = torch.tensor([256 - int(_level(s.level, 256)) for s in steps],
                                  device=images.device).view(-1, 1, 1, 1)
        return torch.where(images.to(torch.int32) >= thresholds, 255 - images, images)
    raise ValueError(f"unknown AugMix operation {op!r}")


def apply_steps(images: torch.Tensor, steps: Sequence[Step],
                corruptions: Mapping[str, Callable], fill: int = 0) -> torch.Tensor:
    """Step ``steps[i]`` on image ``i`` of ``(n, 3, H, W)`` uint8, one call per operation."""
    out = images.clone()
    by_op: dict[str, list[int]] = {}
    for i, step in enumerate(steps):
        # the geometric operations share one grid: one call for all of them
        by_op.setdefault("geometric" if step.op in GEOMETRIC_OPS else step.op, []).append(i)
    for op, rows in by_op.items():
        index = torch.tensor(rows, device=images.device)
        chosen = [steps[i] for i in rows]
        if op in corruptions:
            out[index] = corruptions[op].batch(images[index], chosen)
        elif op == "geometric":
            out[index] = geometric(images[index], chosen, fill)
        elif op in AUGMIX_OPS:
            out[index] = point(images[index], op, chosen)
        else:
            raise ValueError(f"unknown AugMix operation {op!r}")
    return out


def augmix_views(images: torch.Tensor, draws: Sequence[AugMixDraw],
                 corruptions: Mapping[str, Callable] | None = None, fill: int = 0
                 ) -> torch.Tensor:
    """AugMix views of ``(B, 3, H, W)`` uint8 images, image ``i`` with ``draws[i]``: ``(B, 3,
    H, W)`` uint8, equal to :func:`~vcrbench.training.augmix.augmix_view` image by image."""
    if len(draws) != len(images):
        raise ValueError(f"{len(images)} images but {len(draws)} draws")
    corruptions = corruptions or {}
    if not len(images):
        return images.clone()
    weights = torch.from_numpy(np.stack([mixing_weights(d) for d in draws])).to(images.device)
    width = weights.shape[1] - 1
    mixed = images.to(torch.float64) * weights[:, 0].view(-1, 1, 1, 1)
    for c in range(width):
        chain = images.clone()
        depth = max(len(d.chains[c]) for d in draws)
        for d in range(depth):
            rows = [i for i, draw in enumerate(draws) if len(draw.chains[c]) > d]
            index = torch.tensor(rows, device=images.device)
            chain[index] = apply_steps(chain[index], [draws[i].chains[c][d] for i in rows],
                                       corruptions, fill)
        mixed += chain.to(torch.float64) * weights[:, c + 1].view(-1, 1, 1, 1)
    return mixed.round_().clamp_(0, 255).to(torch.uint8)
