"""Blur corruptions: Gaussian, defocus, motion and glass blur (ImageNet-C); box and median blur
(Albumentations).

Each function takes ``(B, 3, H, W)`` float images in ``[0, 1]`` and returns the same. Every sample
is filtered on its own with a kernel built from its own parameters (see ``kernels``), so kernels
of different sizes never meet in one batch operation. Box and median blur are batched instead:
each sample's odd ``ksize`` gives its own filter matrices (box) or window counts (median), sized
by the image and the domain's largest kernel (:data:`BOX_KSIZE_MAX`, :data:`MEDIAN_KSIZE_MAX`),
so their operations do not depend on the batch or its values. Median blur is an 8-bit operation
(as in Albumentations): exact integer threshold decomposition in torch on CUDA
(:func:`median_filter`), OpenCV per sample on the CPU (the same bytes, about 100x faster there).
Box and median blur draw nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import torch

from vcrbench.corruptions.generators import torch_generator
from vcrbench.corruptions.kernels import (
    border_index,
    fft_filter2d,
    gaussian_taps,
    imagenet_c_disk,
    motion_taps,
    round_int,
    separable_filter,
    shift_sum,
)
from vcrbench.errors import VcrbenchError

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


#: Albumentations ``Blur``'s largest kernel (the registry's ``ksize`` domain ends here): the box
#: filter matrices are built from this many taps whatever the batch holds.
BOX_KSIZE_MAX = 51
#: Albumentations ``MedianBlur``'s largest kernel (the registry's ``ksize`` domain ends here).
MEDIAN_KSIZE_MAX = 201


def odd_sizes(values: np.ndarray, largest: int, name: str) -> np.ndarray:
    """Each sample's odd kernel size (``kernels.odd_size`` of each value), int64 ``(B,)``.

    A value whose kernel exceeds ``largest`` (the registry's domain) is a ``VcrbenchError``.
    """
    values = np.asarray(values, dtype=np.float64)
    sizes = 2 * np.floor((np.maximum(values, 1.0) - 1.0) / 2.0 + 0.5).astype(np.int64) + 1
    if sizes.size and int(sizes.max()) > largest:
        raise VcrbenchError(f"{name}: ksize {float(values.max())} gives a {int(sizes.max())} px "
                            f"kernel, above the domain's {largest}; use ksize <= {largest}")
    return sizes


@functools.lru_cache(maxsize=16)
def _reflect101_tap_counts(n: int, largest: int, device: str) -> torch.Tensor:
    """``(2 R + 1, n, n)`` float32 on ``device``, ``R = largest``: ``[t + R, i, j]`` is 1 where tap
    ``t`` of output ``i`` reads input ``j`` under ``BORDER_REFLECT_101``
    (``kernels.border_index``); kept for the next batch of the same size."""
    source = border_index(n, largest, "reflect101")
    taps = np.arange(2 * largest + 1)[:, None]
    rows = np.arange(n)[None, :]
    counts = np.zeros((2 * largest + 1, n, n), dtype=np.float32)
    counts[taps, rows, source[rows + taps]] = 1.0
    return torch.from_numpy(counts).to(device)


def box_matrices(n: int, radius: torch.Tensor, largest: int,
                 dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Each sample's ``(n, n)`` box filter matrix along an axis of length ``n``: ``(B, n, n)``
    of ``dtype``, ``(M @ x)[i]`` the mean of ``x`` over taps ``i - r .. i + r`` reflected at the
    borders (``BORDER_REFLECT_101``, any ``n``), ``r`` = ``radius`` ``(B,)`` ``<= largest``.

    The counts of each input in each window are summed over the taps within ``r`` (small
    integers, exact in float32 in any order), then divided by ``2 r + 1``.
    """
    counts = _reflect101_tap_counts(n, largest, str(radius.device))
    offsets = torch.arange(-largest, largest + 1, device=radius.device).abs()
    used = (offsets.view(1, -1) <= radius.view(-1, 1)).to(torch.float32)
    window = (used @ counts.view(2 * largest + 1, n * n)).view(-1, n, n).to(dtype)
    return window / (2 * radius + 1).to(dtype).view(-1, 1, 1)


def box_blur(images: torch.Tensor, params: dict[str, np.ndarray],
             seeds: Sequence[int]) -> torch.Tensor:
    """Albumentations ``Blur``: ``cv2.blur`` with an odd ``ksize`` (``BORDER_REFLECT_101``).

    Batched: each sample's ``ksize`` (odd, up to :data:`BOX_KSIZE_MAX`) gives its row and column
    filter matrices (:func:`box_matrices`, borders folded in), applied as batched matrix
    products, columns then rows; ``ksize`` 1 returns the image itself.
    """
    b, c, h, w = images.shape
    sizes = odd_sizes(params["ksize"], BOX_KSIZE_MAX, "blur")
    radius = torch.from_numpy(sizes // 2).to(images.device)
    largest = BOX_KSIZE_MAX // 2
    along_w = box_matrices(w, radius, largest, images.dtype).transpose(1, 2)
    along_h = box_matrices(h, radius, largest, images.dtype)
    rows = torch.bmm(images.reshape(b, c * h, w), along_w).view(b, c, h, w)
    out = torch.stack([torch.bmm(along_h, rows[:, i]) for i in range(c)], dim=1)
    return _keep_identity(out.clamp_(0.0, 1.0), images, sizes)


def _keep_identity(out: torch.Tensor, images: torch.Tensor, sizes: np.ndarray) -> torch.Tensor:
    """``out`` with the samples whose kernel is 1 replaced by their input (in place; which ones
    is known on the host from the parameters, so nothing waits for the device)."""
    identity = torch.from_numpy(np.flatnonzero(sizes == 1)).to(images.device)
    return out.index_copy_(0, identity, images.index_select(0, identity))


#: Grey levels thresholded at once by :func:`median_filter` (its temporaries are ``(B, chunk, 3,
#: H, W)`` int32): 255 levels in 16 chunks, the same for every batch.
MEDIAN_LEVEL_CHUNK = 16


def _replicate_window_sums(values: torch.Tensor, radius: torch.Tensor, dim: int) -> torch.Tensor:
    """Sums over ``2 r + 1`` taps along ``dim`` (3 or 4) of integer ``(B, L, C, H, W)``, per-sample
    radius ``r`` (``(B,)`` int64, any size), border replicated (``BORDER_REPLICATE``), int32.

    A window ``[i - r, i + r]`` is the cumulative sum over its part inside the axis plus the
    edge values times the number of taps past each edge, so no padding depends on ``r``.
    """
    n = values.shape[dim]
    sums = torch.nn.functional.pad(torch.cumsum(values, dim=dim, dtype=torch.int32),
                                   (0, 0, 1, 0) if dim == 3 else (1, 0))
    i = torch.arange(n, device=values.device)
    r = radius.view(-1, 1)
    view = (-1, 1, 1, n, 1) if dim == 3 else (-1, 1, 1, 1, n)
    shape = list(values.shape)
    out = sums.gather(dim, ((i + r).clamp(max=n - 1) + 1).view(view).expand(shape))
    out -= sums.gather(dim, (i - r).clamp(min=0).view(view).expand(shape))
    before = (r - i).clamp(min=0).to(torch.int32).view(view)
    after = (i + r - (n - 1)).clamp(min=0).to(torch.int32).view(view)
    out += before * values.narrow(dim, 0, 1)
    out += after * values.narrow(dim, n - 1, 1)
    return out


def median_filter(pixels: torch.Tensor, sizes: torch.Tensor) -> torch.Tensor:
    """``cv2.medianBlur`` of each sample, exactly: ``(B, C, H, W)`` uint8, odd ``sizes`` ``(B,)``.

    Threshold decomposition: the median of a window is ``>= t`` exactly when at least
    ``(k^2 + 1) / 2`` of its ``k^2`` pixels are, so the median is the number of levels
    ``t = 1 .. 255`` for which that count (a box sum of the indicator ``pixel >= t``,
    :func:`_replicate_window_sums` over rows then columns, exact in int32) reaches
    ``(k^2 + 1) / 2``. Integer arithmetic only: the bytes do not depend on the device or the
    batch; the work is 255 box sums a sample whatever ``k`` (its operations do not depend on the
    batch: levels in chunks of :data:`MEDIAN_LEVEL_CHUNK`).
    """
    radius = sizes // 2
    half = ((sizes * sizes + 1) // 2).to(torch.int32).view(-1, 1, 1, 1, 1)
    levels = pixels.unsqueeze(1)
    median = torch.zeros(pixels.shape, dtype=torch.int32, device=pixels.device)
    for start in range(1, 256, MEDIAN_LEVEL_CHUNK):
        t = torch.arange(start, min(start + MEDIAN_LEVEL_CHUNK, 256), device=pixels.device)
        above = (levels >= t.to(torch.uint8).view(1, -1, 1, 1, 1)).to(torch.int16)
        counts = _replicate_window_sums(_replicate_window_sums(above, radius, 3), radius, 4)
        median += (counts >= half).sum(dim=1, dtype=torch.int32)
    return median.to(torch.uint8)


def _median_opencv(pixels: torch.Tensor, sizes: np.ndarray) -> torch.Tensor:
    """``cv2.medianBlur`` of each sample of CPU ``(B, C, H, W)`` uint8 (OpenCV's O(1) histogram
    median; the same bytes as :func:`median_filter`)."""
    import cv2

    hwc = pixels.permute(0, 2, 3, 1).contiguous().numpy()
    out = hwc.copy()
    for i, k in enumerate(sizes):
        if k > 1:
            cv2.medianBlur(hwc[i], int(k), dst=out[i])
    return torch.from_numpy(out).permute(0, 3, 1, 2)


def median_blur(images: torch.Tensor, params: dict[str, np.ndarray],
                seeds: Sequence[int]) -> torch.Tensor:
    """Albumentations ``MedianBlur``: ``cv2.medianBlur`` with an odd ``ksize`` on 8-bit pixels.

    The input is rounded to 8 bits (Albumentations' ``uint8_io``) and each sample filtered with
    its own ``ksize`` (odd, up to :data:`MEDIAN_KSIZE_MAX`; border replicated, exact median);
    ``ksize`` 1 returns the image itself. On CUDA the batch is filtered at once by
    :func:`median_filter` (integer threshold decomposition); on the CPU by OpenCV, sample by
    sample (its median is 100x faster there), which gives the same bytes (tested).
    """
    sizes = odd_sizes(params["ksize"], MEDIAN_KSIZE_MAX, "median_blur")
    pixels = images.clamp(0.0, 1.0).mul_(255.0).round_().to(torch.uint8)
    if images.device.type == "cpu":
        filtered = _median_opencv(pixels, sizes)
    else:
        filtered = median_filter(pixels, torch.from_numpy(sizes).to(images.device))
    return _keep_identity(filtered.to(images.dtype).div_(255.0), images, sizes)
