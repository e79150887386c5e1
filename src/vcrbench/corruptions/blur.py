"""Blur corruptions: Gaussian, defocus, motion and glass blur (ImageNet-C); box and median blur
(Albumentations).

Each function takes ``(B, 3, H, W)`` float images in ``[0, 1]`` and returns the same. Every sample
is filtered on its own with a kernel built from its own parameters (see ``kernels``), so kernels
of different sizes never meet in one batch operation. Median blur runs OpenCV on the CPU (it is
an 8-bit operation in Albumentations too); everything else runs in torch on the images' device.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from vcrbench.corruptions.generators import torch_generator
from vcrbench.corruptions.kernels import (
    fft_filter2d,
    gaussian_taps,
    imagenet_c_disk,
    motion_taps,
    odd_size,
    round_int,
    separable_filter,
    shift_sum,
)

#: ImageNet-C motion blur draws the direction uniformly from this range (degrees).
MOTION_ANGLE_RANGE = (-45.0, 45.0)

#: Added before ImageNet-C's uint8 truncation in glass blur, so that values that are integers up
#: to float round-off (e.g. at sigma = 0) are not truncated one level down.
_TRUNCATION_SLACK = 1e-4


def gaussian_blur_one(image: torch.Tensor, sigma: float) -> torch.Tensor:
    """skimage ``gaussian(image, sigma)`` per channel: truncate 4, ``mode="nearest"``."""
    taps = gaussian_taps(sigma)
    return separable_filter(image, taps, taps, "replicate")


def gaussian_blur(images: torch.Tensor, params: dict[str, np.ndarray],
                  seeds: Sequence[int]) -> torch.Tensor:
    """ImageNet-C Gaussian blur with standard deviation ``sigma`` (pixels)."""
    sigmas = params["sigma"]
    return torch.stack([gaussian_blur_one(img, float(s)) for img, s in zip(images, sigmas,
                                                                          strict=True)])


def defocus_blur(images: torch.Tensor, params: dict[str, np.ndarray],
                 seeds: Sequence[int]) -> torch.Tensor:
    """ImageNet-C defocus blur: correlation with an anti-aliased disk, ``BORDER_REFLECT_101``.

    ``radius`` (pixels, continuous: the disk is ``x^2 + y^2 <= radius^2`` on the integer grid)
    and ``alias_blur`` (standard deviation of the Gaussian that smooths the disk kernel).
    """
    out = []
    for img, radius, alias in zip(images, params["radius"], params["alias_blur"], strict=True):
        kernel = imagenet_c_disk(float(radius), float(alias))
        if kernel.shape[0] == 1 or np.count_nonzero(kernel > 1e-12) == 1:
            out.append(img)
            continue
        out.append(fft_filter2d(img, kernel, "reflect101"))
    return torch.stack(out).clamp(0.0, 1.0)


def motion_angles(seeds: Sequence[int]) -> list[float]:
    """Each sample's motion direction (degrees): ``U(-45, 45)`` from its seed's first draw."""
    low, high = MOTION_ANGLE_RANGE
    angles = []
    for seed in seeds:
        u = torch.rand((1,), generator=torch_generator(seed), dtype=torch.float64)
        angles.append(low + (high - low) * float(u))
    return angles


def motion_blur_one(image: torch.Tensor, radius: float, sigma: float,
                    angle: float) -> torch.Tensor:
    """ImageNet-C ``_motion_blur`` of one ``(3, H, W)`` image at a given angle (degrees)."""
    _, h, w = image.shape
    return shift_sum(image, motion_taps(radius, sigma, angle, h, w))


def motion_blur(images: torch.Tensor, params: dict[str, np.ndarray],
                seeds: Sequence[int]) -> torch.Tensor:
    """ImageNet-C motion blur; the direction is drawn from the sample's seed (``motion_angles``)."""
    angles = motion_angles(seeds)
    out = [motion_blur_one(img, float(r), float(s), a) for img, r, s, a in
           zip(images, params["radius"], params["sigma"], angles, strict=True)]
    return torch.stack(out).clamp(0.0, 1.0)


def glass_shuffle_map(height: int, width: int, delta: int,
                      offsets: Sequence[np.ndarray]) -> np.ndarray:
    """Where each pixel comes from after ImageNet-C's local pixel shuffling, as a flat index.

    ImageNet-C (``imagecorruptions.glass_blur``) visits ``h = H - delta … delta + 1`` and, inside,
    ``w = W - delta … delta + 1`` (both descending), draws ``dx, dy = randint(-delta, delta)``
    (upper bound exclusive) and runs ``x[h, w], x[h', w'] = x[h', w'], x[h, w]`` on numpy row
    views. That statement is *not* a swap: the second assignment writes back the already
    overwritten view, so it copies ``x[h, w] <- x[h + dy, w + dx]`` and leaves the source alone.
    This function reproduces that sequential algorithm exactly, vectorised: each visited pixel
    is written once, with the *current* value of its source, which is the source's new value if
    the source was visited earlier (a later row, or the same row and a later column), else its
    old value. Chains of such dependencies are resolved by pointer jumping (O(log chain length)
    vectorised rounds) instead of a Python loop per pixel.

    ``offsets[k]`` holds iteration ``k``'s draws in visiting order, shape
    ``(H - 2 delta, W - 2 delta, 2)`` with ``[..., 0] = dx`` and ``[..., 1] = dy``.
    Returns ``m`` of shape ``(H * W,)`` with ``out.flat[p] = x.flat[m[p]]`` after all iterations.
    """
    total = np.arange(height * width)
    rows = np.arange(height - delta, delta, -1)
    cols = np.arange(width - delta, delta, -1)
    if delta <= 0 or rows.size == 0 or cols.size == 0:
        return total
    hh, ww = rows[:, None], cols[None, :]
    targets = (hh * width + ww).ravel()
    for off in offsets:
        off = np.asarray(off)
        dx, dy = off[..., 0], off[..., 1]
        sh, sw = hh + dy, ww + dx
        visited = (sh >= delta + 1) & (sh <= height - delta) & (sw >= delta + 1) & (
            sw <= width - delta)
        earlier = visited & ((dy > 0) | ((dy == 0) & (dx > 0)))
        src = np.arange(height * width)
        src[targets] = (sh * width + sw).ravel()
        pending = np.zeros(height * width, dtype=bool)
        pending[targets] = earlier.ravel()
        idx = targets[earlier.ravel()]
        while idx.size:
            nxt = src[idx]
            new_src, new_pending = src[nxt], pending[nxt]
            src[idx] = new_src
            pending[idx] = new_pending
            idx = idx[new_pending]
        total = total[src]
    return total


def glass_offsets(seed: int, height: int, width: int, delta: int,
                  iterations: int) -> list[np.ndarray]:
    """A sample's shuffle offsets, per iteration ``randint(-delta, delta, (H-2d, W-2d, 2))``."""
    n_h, n_w = height - 2 * delta, width - 2 * delta
    if delta <= 0 or n_h <= 0 or n_w <= 0:
        return []
    gen = torch_generator(seed)
    return [torch.randint(-delta, delta, (n_h, n_w, 2), generator=gen).numpy()
            for _ in range(iterations)]


def glass_blur_one(image: torch.Tensor, sigma: float, delta: int,
                   offsets: Sequence[np.ndarray]) -> torch.Tensor:
    """ImageNet-C glass blur of one image: blur, truncate to uint8, shuffle, blur again."""
    _, h, w = image.shape
    blurred = gaussian_blur_one(image, sigma)
    quantised = torch.floor(blurred * 255.0 + _TRUNCATION_SLACK).clamp(0.0, 255.0) / 255.0
    mapping = glass_shuffle_map(h, w, delta, offsets)
    index = torch.from_numpy(mapping).to(image.device)
    shuffled = quantised.reshape(3, h * w).index_select(1, index).reshape(3, h, w)
    return gaussian_blur_one(shuffled, sigma)


def glass_blur(images: torch.Tensor, params: dict[str, np.ndarray],
               seeds: Sequence[int]) -> torch.Tensor:
    """ImageNet-C glass blur: ``sigma`` (pixels), ``max_delta`` and ``iterations`` (rounded)."""
    _, _, h, w = images.shape
    out = []
    for img, sigma, delta, iters, seed in zip(images, params["sigma"], params["max_delta"],
                                              params["iterations"], seeds, strict=True):
        d, n = round_int(float(delta)), round_int(float(iters))
        out.append(glass_blur_one(img, float(sigma), d, glass_offsets(seed, h, w, d, n)))
    return torch.stack(out).clamp(0.0, 1.0)


def box_blur(images: torch.Tensor, params: dict[str, np.ndarray],
             seeds: Sequence[int]) -> torch.Tensor:
    """Albumentations ``Blur``: ``cv2.blur`` with an odd ``ksize`` (``BORDER_REFLECT_101``)."""
    out = []
    for img, size in zip(images, params["ksize"], strict=True):
        k = odd_size(float(size))
        taps = np.full(k, 1.0 / k)
        out.append(separable_filter(img, taps, taps, "reflect101"))
    return torch.stack(out).clamp(0.0, 1.0)


def median_blur(images: torch.Tensor, params: dict[str, np.ndarray],
                seeds: Sequence[int]) -> torch.Tensor:
    """Albumentations ``MedianBlur``: ``cv2.medianBlur`` with an odd ``ksize`` on 8-bit pixels.

    The input is rounded to 8 bits (Albumentations' ``uint8_io``), filtered by OpenCV on the CPU
    (border replicated, exact median) and moved back. There is no fast exact large-window median
    in torch; OpenCV's is O(1) per pixel in the window size.
    """
    import cv2

    out = []
    for img, size in zip(images, params["ksize"], strict=True):
        k = odd_size(float(size))
        if k == 1:
            out.append(img)
            continue
        pixels = torch.round(img.detach().clamp(0, 1) * 255.0).to("cpu", torch.uint8)
        hwc = np.ascontiguousarray(pixels.permute(1, 2, 0).numpy())
        filtered = cv2.medianBlur(hwc, k)
        back = torch.from_numpy(filtered).permute(2, 0, 1).to(img.device, img.dtype) / 255.0
        out.append(back)
    return torch.stack(out)
