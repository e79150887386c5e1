"""Pixel-noise corruptions: Gaussian, shot (Poisson), impulse (salt and pepper), uniform.

All work on ``(B, 3, H, W)`` float images in ``[0, 1]`` and return the same, clipped. The noise
of a sample is drawn on the images' device from that sample's seed only, with the counter-based
generator :mod:`vcrbench.core.philox` (one stream id per corruption, below), batched: no loop
over the samples, and a sample's noise does not depend on its batch, its place in it, the batch
size or the thread count. Element ``i`` of the noise is element ``i`` in C order of the sample's
``(3, H, W)``. Uniforms are float32 on a 24-bit grid (``philox.uniform``), normals float32
Box–Muller (``philox.normal``: the same integers on every device, the last bits of
``log``/``cos``/``sin`` may differ between CPU and CUDA), Poisson draws int64 from float64 rates
(``philox.poisson``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from vcrbench.core import philox

#: Philox stream ids, one per corruption (the draws of one corruption never share words).
GAUSSIAN_STREAM = 1  # gaussian_noise: the standard normals
UNIFORM_STREAM = 2  # uniform_noise: the uniforms
IMPULSE_STREAM = 3  # impulse_noise: the uniform that decides salt, pepper or neither
SHOT_STREAM = 4  # shot_noise: the Poisson photon counts


def _per_sample(values: np.ndarray, like: torch.Tensor,
                dtype: torch.dtype | None = None) -> torch.Tensor:
    """``(B,)`` float64 parameters as a ``(B, 1, 1, 1)`` tensor on the images' device (in
    ``dtype``, default the images')."""
    return torch.as_tensor(np.asarray(values, dtype=np.float64),
                           dtype=dtype or like.dtype).to(like.device).view(-1, 1, 1, 1)


def gaussian_noise(images: torch.Tensor, params: dict[str, np.ndarray],
                   seeds: Sequence[int]) -> torch.Tensor:
    """``clip(x + sigma * n)``, ``n ~ N(0, 1)`` i.i.d. per pixel and channel (ImageNet-C).

    Noise: ``philox.normal`` float32 of shape ``(3, H, W)``, stream :data:`GAUSSIAN_STREAM`.
    """
    noise = philox.normal(seeds, images.shape[1:], GAUSSIAN_STREAM, device=images.device)
    noise = noise.to(images.dtype)
    noise *= _per_sample(params["sigma"], images)
    return noise.add_(images).clamp_(0.0, 1.0)


def uniform_noise(images: torch.Tensor, params: dict[str, np.ndarray],
                  seeds: Sequence[int]) -> torch.Tensor:
    """``clip(x + u)``, ``u ~ U[-width, width)`` i.i.d. per pixel and channel (Geirhos 2018).

    Noise: ``philox.uniform`` float32 ``v`` of shape ``(3, H, W)`` (stream
    :data:`UNIFORM_STREAM`), mapped to ``(2 v - 1) width``.
    """
    u = philox.uniform(seeds, images.shape[1:], UNIFORM_STREAM, device=images.device)
    u = u.to(images.dtype)
    u.mul_(2.0).sub_(1.0).mul_(_per_sample(params["width"], images))
    return u.add_(images).clamp_(0.0, 1.0)


def impulse_noise(images: torch.Tensor, params: dict[str, np.ndarray],
                  seeds: Sequence[int]) -> torch.Tensor:
    """Salt and pepper per pixel *and channel* (ImageNet-C via ``skimage.util.random_noise``).

    Each value is replaced with probability ``amount``, by 1 or 0 with equal odds. Noise:
    ``philox.uniform`` float32 ``u`` of shape ``(3, H, W)`` (stream :data:`IMPULSE_STREAM`);
    ``u < amount / 2`` is salt, ``amount / 2 <= u < amount`` pepper (the same distribution as
    skimage's two independent draws).
    """
    u = philox.uniform(seeds, images.shape[1:], IMPULSE_STREAM, device=images.device)
    amount = _per_sample(params["amount"], images, torch.float32)
    out = images.masked_fill(u < amount, 0.0)
    return out.masked_fill_(u < amount * 0.5, 1.0)


#: noise_scale under which shot noise is below 1/39 grey level (see ``shot_noise``).
SHOT_NOISE_NEGLIGIBLE = 1e-4


def shot_noise(images: torch.Tensor, params: dict[str, np.ndarray],
               seeds: Sequence[int]) -> torch.Tensor:
    """Poisson photon noise: ``clip(poisson(x * lam) / lam)`` with ``lam = 1 / noise_scale^2``.

    ``noise_scale`` is the noise standard deviation at a white pixel (``sqrt(x / lam)`` at value
    ``x``); 0 is the clean image. Noise: ``philox.poisson`` of the float64 rates ``x * lam`` of
    the sample's ``(3, H, W)`` image (negative ones as 0), stream :data:`SHOT_STREAM`.
    Below ``SHOT_NOISE_NEGLIGIBLE`` the image is returned unchanged (its rates are drawn as 0):
    the noise is under 1/39 grey level (its uint8 rounding is the clean image with probability
    1 − 1e−80), and rates that large (above 1e8) would only cost time.
    """
    scale = _per_sample(params["noise_scale"], images, torch.float64)
    negligible = scale < SHOT_NOISE_NEGLIGIBLE
    lam = torch.where(negligible, 1.0, scale.square().reciprocal())
    rates = (images * lam.masked_fill(negligible, 0.0)).clamp_(min=0.0)  # float64
    counts = philox.poisson(seeds, rates, SHOT_STREAM, check=False)
    noisy = (counts / lam).to(images.dtype).clamp_(0.0, 1.0)
    return torch.where(negligible, images.clamp(0.0, 1.0), noisy)
