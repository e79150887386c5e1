"""Pixel-noise corruptions: Gaussian, shot (Poisson), impulse (salt and pepper), uniform.

All work on ``(B, 3, H, W)`` float images in ``[0, 1]`` and return the same, clipped. The noise
of sample ``i`` is drawn on the CPU from that sample's own seed only, with
``corruptions.generators.numpy_generator(seed)``, and then moved to the images' device, so it is
the same on every device and whatever the batch. numpy's generators are used rather than
torch's: its uniforms and (ziggurat) normals are integer and table arithmetic, the same on every
CPU, whereas torch's CPU ``randn`` is a vectorised Box-Muller whose log/sin/cos depend on the
instruction set; numpy's Poisson sampler (which does use libm) is also 3x faster than torch's.
Draws are float32 (float64 for Poisson), one per sample as written below.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from vcrbench.core.threads import SMALL_ITEM
from vcrbench.corruptions.generators import map_per_sample, numpy_generator


def _per_sample(values: np.ndarray, like: torch.Tensor) -> torch.Tensor:
    """``(B,)`` float64 parameters as a ``(B, 1, 1, 1)`` tensor on the images' device/dtype."""
    return torch.as_tensor(values, dtype=like.dtype).to(like.device).view(-1, 1, 1, 1)


def _draw(seeds: Sequence[int], shape: tuple[int, ...], kind: str,
          like: torch.Tensor) -> torch.Tensor:
    """One float32 CPU draw of ``shape`` per sample, stacked and moved to ``like``.

    ``kind`` is ``"random"`` (uniform on [0, 1)) or ``"standard_normal"`` (numpy Generator methods).
    """
    out = np.empty((len(seeds), *shape), dtype=np.float32)

    def fill(i: int, seed: int) -> None:
        getattr(numpy_generator(seed), kind)(shape, dtype=np.float32, out=out[i])

    map_per_sample(fill, seeds, serial=out[0].size < SMALL_ITEM if len(out) else True)
    return torch.from_numpy(out).to(like.device, like.dtype)


def gaussian_noise(images: torch.Tensor, params: dict[str, np.ndarray],
                   seeds: Sequence[int]) -> torch.Tensor:
    """``clip(x + sigma * n)``, ``n ~ N(0, 1)`` i.i.d. per pixel and channel (ImageNet-C).

    Noise: one ``standard_normal((3, H, W))`` per sample.
    """
    noise = _draw(seeds, tuple(images.shape[1:]), "standard_normal", images)
    return (images + noise * _per_sample(params["sigma"], images)).clamp(0.0, 1.0)


def uniform_noise(images: torch.Tensor, params: dict[str, np.ndarray],
                  seeds: Sequence[int]) -> torch.Tensor:
    """``clip(x + u)``, ``u ~ U[-width, width)`` i.i.d. per pixel and channel (Geirhos 2018).

    Noise: one ``random((3, H, W))`` per sample, mapped to ``2 u - 1``.
    """
    u = _draw(seeds, tuple(images.shape[1:]), "random", images)
    return (images + (u * 2.0 - 1.0) * _per_sample(params["width"], images)).clamp(0.0, 1.0)


def impulse_noise(images: torch.Tensor, params: dict[str, np.ndarray],
                  seeds: Sequence[int]) -> torch.Tensor:
    """Salt and pepper per pixel *and channel* (ImageNet-C via ``skimage.util.random_noise``).

    Each value is replaced with probability ``amount``, by 1 or 0 with equal odds. Noise: one
    ``u = random((3, H, W))`` per sample; ``u < amount / 2`` is salt, ``amount / 2 <= u <
    amount`` pepper (the same distribution as skimage's two independent draws).
    """
    u = _draw(seeds, tuple(images.shape[1:]), "random", images)
    amount = _per_sample(params["amount"], images)
    out = torch.where(u < amount, torch.zeros_like(images), images)
    return torch.where(u < amount * 0.5, torch.ones_like(images), out)


#: noise_scale under which shot noise is below 1/39 grey level (see ``shot_noise``).
SHOT_NOISE_NEGLIGIBLE = 1e-4


def shot_noise(images: torch.Tensor, params: dict[str, np.ndarray],
               seeds: Sequence[int]) -> torch.Tensor:
    """Poisson photon noise: ``clip(poisson(x * lam) / lam)`` with ``lam = 1 / noise_scale^2``.

    ``noise_scale`` is the noise standard deviation at a white pixel (``sqrt(x / lam)`` at value
    ``x``); 0 is the clean image. Noise: ``poisson`` on the float64 rates of the sample's
    ``(3, H, W)`` image, on the CPU. Below ``SHOT_NOISE_NEGLIGIBLE`` the image is returned
    unchanged: the noise is under 1/39 grey level (its uint8 rounding is the clean image with
    probability 1 − 1e−80) and numpy's Poisson sampler refuses rates that large.
    """
    out = torch.empty_like(images)
    scales = np.asarray(params["noise_scale"], dtype=np.float64)

    def draw(i: int, seed: int) -> np.ndarray | None:
        scale = float(scales[i])
        if scale < SHOT_NOISE_NEGLIGIBLE:
            return None
        lam = 1.0 / (scale * scale)
        x = images[i].detach().to("cpu", torch.float64).numpy()
        return numpy_generator(seed).poisson(x * lam) / lam

    for i, noisy in enumerate(map_per_sample(draw, seeds,
                                             serial=images[0].numel() < SMALL_ITEM)):
        out[i] = images[i] if noisy is None else torch.from_numpy(noisy).to(images.device,
                                                                           images.dtype)
    return out.clamp(0.0, 1.0)
