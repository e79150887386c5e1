"""Colour corruptions: brightness (ImageNet-C), HueSaturationValue and ColorJitter
(Albumentations), on float RGB in ``[0, 1]``.

The Albumentations transforms are defined on 8-bit images with OpenCV's 8-bit HSV (hue in
steps of 2 degrees) and round to 8 bits after every step; here they run in float without the
intermediate rounding, which is what the 8-bit versions approximate. HSV follows
``skimage.color.rgb2hsv`` / ``hsv2rgb`` (hue in turns, ``[0, 1)``).

All three run on the whole batch at once with per-sample parameters broadcast. The only random
draw is ColorJitter's order of its four steps: one Philox permutation per sample
(:func:`jitter_orders`, stream :data:`JITTER_ORDER_STREAM`, keyed by the sample's seed), applied
batched by :func:`color_jitter_batch`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from vcrbench.core import philox

#: OpenCV's ``COLOR_RGB2GRAY`` weights (used by Albumentations' contrast and saturation).
GRAY_WEIGHTS = (0.299, 0.587, 0.114)


def rgb_to_hsv(rgb: torch.Tensor) -> torch.Tensor:
    """``(..., 3, H, W)`` RGB to HSV like skimage: h in turns ``[0, 1)``, s and v in ``[0, 1]``.

    Hue ``(g - b) / d``, ``2 + (b - r) / d`` or ``4 + (r - g) / d`` (``d = max - min``) where the
    maximum is r, g or b (b before g before r), 0 for grey pixels; ``s = d / v`` (0 where grey).
    """
    return torch.stack(rgb_to_hsv_planes(rgb), dim=-3)


def rgb_to_hsv_planes(rgb: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """:func:`rgb_to_hsv` as three ``(..., H, W)`` planes ``(h, s, v)`` (no stacking copy)."""
    r, g, b = rgb.unbind(-3)
    v = torch.maximum(torch.maximum(r, g), b)
    delta = v - torch.minimum(torch.minimum(r, g), b)
    gray = delta == 0
    s = delta / v.masked_fill(v == 0, 1.0)  # exactly +0 where grey (0 / positive)
    is_b, is_g = b == v, g == v
    h = torch.where(is_b, r - g, torch.where(is_g, b - r, g - b))
    h /= delta.masked_fill_(gray, 1.0)
    h = torch.where(is_b, h + 4.0, torch.where(is_g, h + 2.0, h))
    h = torch.remainder(h / 6.0, 1.0).masked_fill_(gray, 0.0)
    return h, s, v


#: skimage's ``hsv2rgb``: which of ``(v, p, q, t)`` R, G and B take in each hue sector 0 .. 5.
_SECTOR_CHANNELS = ((0, 3, 1), (2, 0, 1), (1, 0, 3), (1, 2, 0), (3, 1, 0), (0, 1, 2))


def hsv_to_rgb(hsv: torch.Tensor) -> torch.Tensor:
    """Inverse of ``rgb_to_hsv`` (skimage's ``hsv2rgb``): each channel is one of ``v``,
    ``p = v (1 - s)``, ``q = v (1 - f s)``, ``t = v (1 - (1 - f) s)`` by hue sector."""
    return hsv_planes_to_rgb(*hsv.unbind(-3))


def hsv_planes_to_rgb(h: torch.Tensor, s: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """:func:`hsv_to_rgb` of three ``(..., H, W)`` planes, ``(..., 3, H, W)``: one gather from
    the stacked ``(v, p, q, t)`` by each channel's index in the sector's row of
    :data:`_SECTOR_CHANNELS` (looked up with ``index_select``, much faster on the CPU than
    indexing the table by a tensor)."""
    h6 = h * 6.0
    sector = torch.floor(h6)
    f = h6 - sector
    sector = torch.remainder(sector, 6.0)
    p = v * (1.0 - s)
    q = v * (1.0 - f * s)
    t = v * (1.0 - (1.0 - f) * s)
    candidates = torch.stack((v, p, q, t), dim=-3)
    table = torch.tensor(_SECTOR_CHANNELS, dtype=torch.int64, device=h.device).t().contiguous()
    sector = sector.to(torch.int64).reshape(-1)
    index = torch.empty((3, sector.numel()), dtype=torch.int64, device=h.device)
    for channel in range(3):
        torch.index_select(table[channel], 0, sector, out=index[channel])
    return candidates.gather(-3, index.view(3, *h.shape).movedim(0, -3))


def _gray(rgb: torch.Tensor) -> torch.Tensor:
    """Luma ``0.299 R + 0.587 G + 0.114 B`` of ``(3, H, W)``, shape ``(1, H, W)``."""
    wr, wg, wb = GRAY_WEIGHTS
    return (rgb[0] * wr + rgb[1] * wg + rgb[2] * wb).unsqueeze(0)


def brightness(images: torch.Tensor, params: dict[str, np.ndarray],
               seeds: Sequence[int]) -> torch.Tensor:
    """ImageNet-C brightness: ``V <- clip(V + shift)`` in HSV, hue and saturation kept.

    Since ``hsv2rgb`` is linear in V this is ``rgb * V' / V`` (grey ``V'`` where ``V = 0``),
    which equals skimage's round trip up to float round-off.
    """
    shift = torch.as_tensor(params["shift"], dtype=images.dtype).to(images.device)
    shift = shift.view(-1, 1, 1, 1)
    v = images.amax(dim=1, keepdim=True)
    v_new = (v + shift).clamp(max=1.0)
    scale = v_new / torch.where(v > 0, v, torch.ones_like(v))
    out = torch.where(v > 0, images * scale, v_new.expand_as(images))
    return out.clamp(0.0, 1.0)


def shift_hsv_one(image: torch.Tensor, hue_shift: float, sat_shift: float,
                  val_shift: float) -> torch.Tensor:
    """Albumentations ``shift_hsv`` in float; shifts in its 8-bit units.

    Hue: ``hue_shift`` of 180 units per turn, wrapping; saturation and value: ``x / 255`` added
    and clipped; grey pixels (S = 0) stay grey.
    """
    if hue_shift == 0 and sat_shift == 0 and val_shift == 0:
        return image
    hsv = rgb_to_hsv(image)
    h, s, v = hsv.unbind(0)
    h = torch.remainder(h + hue_shift / 180.0, 1.0)
    s = torch.where(s == 0, s, (s + sat_shift / 255.0).clamp(0.0, 1.0))
    v = (v + val_shift / 255.0).clamp(0.0, 1.0)
    return hsv_to_rgb(torch.stack((h, s, v)))


def _per_sample(values: np.ndarray, images: torch.Tensor) -> torch.Tensor:
    """One parameter's ``(B,)`` values as a ``(B, 1, 1)`` tensor of the images' dtype and device
    (float64 values rounded once to the images' dtype)."""
    return torch.as_tensor(np.asarray(values, dtype=np.float64)).to(
        images.device, images.dtype).view(-1, 1, 1)


def hue_saturation_value(images: torch.Tensor, params: dict[str, np.ndarray],
                         seeds: Sequence[int]) -> torch.Tensor:
    """Albumentations ``HueSaturationValue`` with given ``hue_shift, sat_shift, val_shift``
    (:func:`shift_hsv_one`'s arithmetic on the whole batch, shifts broadcast per sample; samples
    whose three shifts are 0 are returned as they are)."""
    hue = _per_sample(np.asarray(params["hue_shift"]) / 180.0, images)
    sat = _per_sample(np.asarray(params["sat_shift"]) / 255.0, images)
    val = _per_sample(np.asarray(params["val_shift"]) / 255.0, images)
    h, s, v = rgb_to_hsv_planes(images)
    h = torch.remainder(h.add_(hue), 1.0)
    s = torch.where(s == 0, s, (s + sat).clamp_(0.0, 1.0))
    v = v.add_(val).clamp_(0.0, 1.0)
    out = hsv_planes_to_rgb(h, s, v)
    clean = ((hue == 0) & (sat == 0) & (val == 0)).unsqueeze(1)
    return torch.where(clean, images, out, out=out).clamp_(0.0, 1.0)


def adjust_brightness(image: torch.Tensor, factor: float) -> torch.Tensor:
    """``clip(x * factor)`` (Albumentations ``adjust_brightness_torchvision``)."""
    return (image * factor).clamp(0.0, 1.0)


def adjust_contrast(image: torch.Tensor, factor: float) -> torch.Tensor:
    """Blend with the mean luma of the image: ``clip(x * f + mean * (1 - f))``."""
    mean = _gray(image).mean()
    return (image * factor + mean * (1.0 - factor)).clamp(0.0, 1.0)


def adjust_saturation(image: torch.Tensor, factor: float) -> torch.Tensor:
    """Blend with the per-pixel luma: ``clip(x * f + gray * (1 - f))``."""
    return (image * factor + _gray(image) * (1.0 - factor)).clamp(0.0, 1.0)


def adjust_hue(image: torch.Tensor, factor: float) -> torch.Tensor:
    """Rotate the hue by ``factor`` turns (``[-0.5, 0.5]``)."""
    if factor == 0:
        return image
    hsv = rgb_to_hsv(image)
    h, s, v = hsv.unbind(0)
    return hsv_to_rgb(torch.stack((torch.remainder(h + factor, 1.0), s, v))).clamp(0.0, 1.0)


#: ColorJitter's four steps, indexed as Albumentations' ``order``.
JITTER_STEPS = (adjust_brightness, adjust_contrast, adjust_saturation, adjust_hue)
JITTER_PARAMETERS = ("brightness", "contrast", "saturation", "hue")


#: Philox stream (``vcrbench.core.philox``) of ColorJitter's order of steps: one permutation of
#: the four steps per sample (``philox.permutation``, 8 words).
JITTER_ORDER_STREAM = 1
#: A slot of :func:`color_jitter_batch` that applies no step (after :data:`JITTER_STEPS`' indices).
_NO_STEP = len(JITTER_STEPS)


def jitter_orders(seeds: Sequence[int] | torch.Tensor,
                  device: torch.device | str | None = None) -> torch.Tensor:
    """Each sample's order of the four steps, ``(B, 4)`` int64: a uniformly random permutation
    from its seed (``philox.permutation``, stream :data:`JITTER_ORDER_STREAM`)."""
    return philox.permutation(seeds, 4, JITTER_ORDER_STREAM, device=device)


def color_jitter_one(image: torch.Tensor, factors: dict[str, float],
                     order: Sequence[int]) -> torch.Tensor:
    """Albumentations ``ColorJitter.apply`` on one image with given factors and order (the
    per-sample reference of :func:`color_jitter_batch`)."""
    out = image
    for k in order:
        out = JITTER_STEPS[k](out, factors[JITTER_PARAMETERS[k]])
    return out


def _blend_step(images: torch.Tensor, kind: int, factor: torch.Tensor) -> torch.Tensor:
    """In place in ``images`` (samples that all take the same step): brightness (``kind`` 0),
    contrast (1) or saturation (2), ``clip(x f + a (1 - f))`` with ``a`` 0, the sample's mean
    luma or the pixel's luma (:func:`adjust_brightness`, :func:`adjust_contrast`,
    :func:`adjust_saturation`, the same arithmetic); ``factor`` ``(n, 1, 1, 1)``."""
    if kind == 0:
        return images.mul_(factor).clamp_(0.0, 1.0)
    anchor = _gray_batch(images)
    if kind == 1:
        anchor = anchor.mean(dim=(1, 2, 3), keepdim=True)
    return images.mul_(factor).add_(anchor.mul_(1.0 - factor)).clamp_(0.0, 1.0)


def _gray_batch(images: torch.Tensor) -> torch.Tensor:
    """:func:`_gray` of each sample of ``(B, 3, H, W)``: ``(B, 1, H, W)``."""
    wr, wg, wb = GRAY_WEIGHTS
    return (images[:, 0] * wr + images[:, 1] * wg + images[:, 2] * wb).unsqueeze(1)


def _steps_by_slot(images: torch.Tensor, factors: torch.Tensor, kinds: np.ndarray) -> None:
    """In place in ``images``: slot by slot (``kinds`` ``(B, slots)`` host ints, a step of
    :data:`JITTER_STEPS` 0 .. 2, or :data:`_NO_STEP`), each step applied to the samples that
    take it there (gathered, stepped, put back), so that no work is spent on samples without
    a step; every (slot, step) pair runs, empty or not, so the operations do not depend on the
    batch. Skipping a sample is exact: its values are in ``[0, 1]``, which the factor 1 of an
    empty step would leave as they are."""
    for slot in range(kinds.shape[1]):
        for kind in range(_NO_STEP):
            index = torch.from_numpy(np.flatnonzero(kinds[:, slot] == kind)).to(images.device)
            factor = factors.index_select(0, index)[:, kind].view(-1, 1, 1, 1)
            images.index_copy_(0, index, _blend_step(images.index_select(0, index), kind,
                                                     factor))


def color_jitter_batch(images: torch.Tensor, factors: torch.Tensor,
                       orders: torch.Tensor | np.ndarray) -> torch.Tensor:
    """:func:`color_jitter_one` of every sample at once: ``factors`` ``(B, 4)`` (in
    :data:`JITTER_PARAMETERS` order, images' dtype), ``orders`` ``(B, 4)`` permutations (read
    on the host), images in ``[0, 1]``.

    Each sample's hue step (the costly HSV round trip) runs once, for the whole batch, between
    three slots of the steps before it and three of the steps after it (:func:`_steps_by_slot`;
    slots past a sample's own steps apply none); a hue factor of 0 returns its input unchanged.
    """
    orders = np.asarray(orders.cpu() if isinstance(orders, torch.Tensor) else orders)
    hue_at = np.argmax(orders == 3, axis=1)[:, None]
    slots = np.arange(3)[None, :]
    before = np.where(slots < hue_at, orders[:, :3], _NO_STEP)
    after_at = hue_at + 1 + slots
    after = np.where(after_at <= 3, np.take_along_axis(orders, np.minimum(after_at, 3), 1),
                     _NO_STEP)
    out = images.clone()
    _steps_by_slot(out, factors, before)
    hue = factors[:, 3].view(-1, 1, 1)
    h, s, v = rgb_to_hsv_planes(out)
    rotated = hsv_planes_to_rgb(torch.remainder(h.add_(hue), 1.0), s, v)
    out = torch.where((hue == 0).unsqueeze(1), out, rotated.clamp_(0.0, 1.0))
    _steps_by_slot(out, factors, after)
    return out


def color_jitter(images: torch.Tensor, params: dict[str, np.ndarray],
                 seeds: Sequence[int]) -> torch.Tensor:
    """Albumentations ``ColorJitter`` with given factors; the order is drawn from the seed
    (:func:`jitter_orders`) and applied batched (:func:`color_jitter_batch`)."""
    factors = np.stack([np.asarray(params[name], dtype=np.float64)
                        for name in JITTER_PARAMETERS], axis=1)
    factors = torch.from_numpy(factors).to(images.device, images.dtype)
    return color_jitter_batch(images, factors, jitter_orders(seeds))  # on the host
