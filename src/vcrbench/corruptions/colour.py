"""Colour corruptions: brightness (ImageNet-C), HueSaturationValue and ColorJitter
(Albumentations), on float RGB in ``[0, 1]``.

The Albumentations transforms are defined on 8-bit images with OpenCV's 8-bit HSV (hue in
steps of 2 degrees) and round to 8 bits after every step; here they run in float without the
intermediate rounding, which is what the 8-bit versions approximate. HSV follows
``skimage.color.rgb2hsv`` / ``hsv2rgb`` (hue in turns, ``[0, 1)``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from vcrbench.corruptions.generators import torch_generator

#: OpenCV's ``COLOR_RGB2GRAY`` weights (used by Albumentations' contrast and saturation).
GRAY_WEIGHTS = (0.299, 0.587, 0.114)


def rgb_to_hsv(rgb: torch.Tensor) -> torch.Tensor:
    """``(..., 3, H, W)`` RGB to HSV like skimage: h in turns ``[0, 1)``, s and v in ``[0, 1]``."""
    r, g, b = rgb.unbind(-3)
    v = torch.maximum(torch.maximum(r, g), b)
    delta = v - torch.minimum(torch.minimum(r, g), b)
    gray = delta == 0
    safe = torch.where(gray, torch.ones_like(delta), delta)
    s = torch.where(gray, torch.zeros_like(v), delta / torch.where(v == 0, torch.ones_like(v), v))
    h = (g - b) / safe
    h = torch.where(g == v, 2.0 + (b - r) / safe, h)
    h = torch.where(b == v, 4.0 + (r - g) / safe, h)
    h = torch.remainder(h / 6.0, 1.0)
    h = torch.where(gray, torch.zeros_like(h), h)
    return torch.stack((h, s, v), dim=-3)


def hsv_to_rgb(hsv: torch.Tensor) -> torch.Tensor:
    """Inverse of ``rgb_to_hsv`` (skimage's ``hsv2rgb``)."""
    h, s, v = hsv.unbind(-3)
    h6 = h * 6.0
    sector = torch.floor(h6)
    f = h6 - sector
    sector = torch.remainder(sector, 6.0)
    p = v * (1.0 - s)
    q = v * (1.0 - f * s)
    t = v * (1.0 - (1.0 - f) * s)
    choices = (
        (v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q),
    )
    r, g, b = torch.zeros_like(v), torch.zeros_like(v), torch.zeros_like(v)
    for k, (rk, gk, bk) in enumerate(choices):
        m = sector == k
        r = torch.where(m, rk, r)
        g = torch.where(m, gk, g)
        b = torch.where(m, bk, b)
    return torch.stack((r, g, b), dim=-3)


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


def hue_saturation_value(images: torch.Tensor, params: dict[str, np.ndarray],
                         seeds: Sequence[int]) -> torch.Tensor:
    """Albumentations ``HueSaturationValue`` with given ``hue_shift, sat_shift, val_shift``."""
    out = [shift_hsv_one(img, float(h), float(s), float(v)) for img, h, s, v in
           zip(images, params["hue_shift"], params["sat_shift"], params["val_shift"],
               strict=True)]
    return torch.stack(out).clamp(0.0, 1.0)


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


def jitter_orders(seeds: Sequence[int]) -> list[list[int]]:
    """Each sample's order of the four steps: ``torch.randperm(4)`` from its seed."""
    return [torch.randperm(4, generator=torch_generator(s)).tolist() for s in seeds]


def color_jitter_one(image: torch.Tensor, factors: dict[str, float],
                     order: Sequence[int]) -> torch.Tensor:
    """Albumentations ``ColorJitter.apply`` on one image with given factors and order."""
    out = image
    for k in order:
        out = JITTER_STEPS[k](out, factors[JITTER_PARAMETERS[k]])
    return out


def color_jitter(images: torch.Tensor, params: dict[str, np.ndarray],
                 seeds: Sequence[int]) -> torch.Tensor:
    """Albumentations ``ColorJitter`` with given factors; the order is drawn from the seed."""
    out = []
    for i, order in enumerate(jitter_orders(seeds)):
        factors = {name: float(params[name][i]) for name in JITTER_PARAMETERS}
        out.append(color_jitter_one(images[i], factors, order))
    return torch.stack(out)
