"""Filter kernels, border handling and the filtering primitives of the blur corruptions.

Every filter here works on *one* sample at a time, with a kernel built on the CPU in float64
from that sample's own parameters, so a sample's output never depends on the other samples of
its batch (different kernel sizes cannot leak into each other, and the floating-point operations
of one sample are the same whatever the batch). Images are ``(3, H, W)`` float tensors on any
device; kernels are moved to the image's device and dtype.

Border modes follow the peers: ``"replicate"`` is scipy's / skimage's ``mode="nearest"`` and
OpenCV's ``BORDER_REPLICATE``; ``"reflect101"`` is OpenCV's default ``BORDER_REFLECT_101``
(``gfedcb|abcdefgh|gfedcba``), extended periodically when the border is wider than the image.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import torch

BORDER_MODES = ("replicate", "reflect101")


def border_index(n: int, pad: int, mode: str) -> np.ndarray:
    """Source indices in ``[0, n)`` of positions ``-pad … n - 1 + pad`` of a padded axis."""
    i = np.arange(-pad, n + pad)
    if mode == "replicate":
        return np.clip(i, 0, n - 1)
    if mode == "reflect101":
        if n == 1:
            return np.zeros_like(i)
        period = 2 * n - 2
        m = np.mod(i, period)
        return np.where(m >= n, period - m, m)
    raise ValueError(f"unknown border mode {mode!r}; use one of {BORDER_MODES}")


def gaussian_taps(sigma: float, truncate: float = 4.0) -> np.ndarray:
    """scipy.ndimage's 1-D Gaussian: radius ``int(truncate * sigma + 0.5)``, normalised, float64.

    ``sigma <= 0`` (or so small that the radius is 0) gives the identity ``[1.0]``.
    """
    radius = int(truncate * sigma + 0.5) if sigma > 0 else 0
    if radius == 0:
        return np.ones(1)
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    phi = np.exp(-0.5 / (sigma * sigma) * x * x)
    return phi / phi.sum()


def odd_size(value: float) -> int:
    """An odd kernel size from a continuous value: the nearest odd integer ``>= 1``."""
    return 2 * int(math.floor((max(value, 1.0) - 1.0) / 2.0 + 0.5)) + 1


def round_int(value: float) -> int:
    """Round half up (a continuous parameter to an integer one, independent of numpy's rules)."""
    return int(math.floor(value + 0.5))


def filter_matrix(n: int, taps: np.ndarray, mode: str) -> np.ndarray:
    """The ``(n, n)`` matrix of a 1-D correlation with centred ``taps`` and a border mode.

    ``(M @ x)[i] = sum_t taps[t] * x[border(i + t - r)]`` with ``r = len(taps) // 2``: the border
    handling is folded into the matrix, so any kernel length works on any axis length.
    """
    r = len(taps) // 2
    src = border_index(n, r, mode)  # padded position -> source index
    rows = np.repeat(np.arange(n), len(taps))
    cols = src[rows + np.tile(np.arange(len(taps)), n)]
    weights = np.tile(taps, n)
    return np.bincount(rows * n + cols, weights, minlength=n * n).reshape(n, n)


def separable_filter(image: torch.Tensor, taps_h: np.ndarray, taps_w: np.ndarray,
                     mode: str) -> torch.Tensor:
    """Filter a ``(C, H, W)`` image along H then W with 1-D taps (as two matrix products)."""
    _, h, w = image.shape
    out = image
    if len(taps_h) > 1:
        mh = torch.from_numpy(filter_matrix(h, taps_h, mode)).to(image.device, image.dtype)
        out = torch.matmul(mh, out)
    if len(taps_w) > 1:
        mw = torch.from_numpy(filter_matrix(w, taps_w, mode).T.copy()).to(image.device,
                                                                          image.dtype)
        out = torch.matmul(out, mw)
    return out


def pad_image(image: torch.Tensor, pad_h: int | tuple[int, int], pad_w: int | tuple[int, int],
              mode: str) -> torch.Tensor:
    """Pad a ``(C, H, W)`` image by ``pad_h`` rows and ``pad_w`` columns (each an int for both
    sides, or a ``(before, after)`` pair)."""
    _, h, w = image.shape
    (top, bottom) = (pad_h, pad_h) if isinstance(pad_h, int) else pad_h
    (left, right) = (pad_w, pad_w) if isinstance(pad_w, int) else pad_w
    out = image
    if top or bottom:
        rows = torch.from_numpy(border_index(h, max(top, bottom), mode)[
            max(top, bottom) - top : max(top, bottom) + h + bottom]).to(image.device)
        out = out.index_select(1, rows)
    if left or right:
        cols = torch.from_numpy(border_index(w, max(left, right), mode)[
            max(left, right) - left : max(left, right) + w + right]).to(image.device)
        out = out.index_select(2, cols)
    return out


def next_fast_size(n: int) -> int:
    """The smallest 5-smooth integer ``>= n`` (a fast FFT length)."""
    best = 1 << max(0, (n - 1).bit_length())
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            m = p35
            while m < n:
                m *= 2
            best = min(best, m)
            p35 *= 3
        p5 *= 5
    return best


def fft_filter2d(image: torch.Tensor, kernel: np.ndarray, mode: str) -> torch.Tensor:
    """2-D correlation of a ``(C, H, W)`` image with a centred odd ``(K, K)`` kernel, via FFT.

    The image is padded by the kernel radius with the border mode and circularly convolved at a
    fast FFT length ``>= H + 2r``, which leaves the central ``H x W`` window exact (no
    wrap-around). Accuracy: float32 FFT round-off, about 1e-6 of the image range.
    """
    _, h, w = image.shape
    r = kernel.shape[0] // 2
    padded = pad_image(image, r, r, mode)
    nh, nw = next_fast_size(h + 2 * r), next_fast_size(w + 2 * r)
    # correlation == convolution with the flipped kernel; place its centre at index (0, 0)
    k = np.zeros((nh, nw))
    flipped = kernel[::-1, ::-1]
    k[: 2 * r + 1, : 2 * r + 1] = flipped
    k = np.roll(k, (-r, -r), axis=(0, 1))
    k_f = torch.fft.rfft2(torch.from_numpy(k).to(image.device, image.dtype))
    x_f = torch.fft.rfft2(padded, s=(nh, nw))
    out = torch.fft.irfft2(x_f * k_f, s=(nh, nw))
    return out[:, r : r + h, r : r + w]


def shift_sum(image: torch.Tensor, taps: list[tuple[int, int, float]]) -> torch.Tensor:
    """``sum_i w_i * image[clamp(y - dy_i), clamp(x - dx_i)]`` over ``taps = [(dy, dx, w)]``.

    Edge pixels are replicated (ImageNet-C's ``shift``). Taps are summed in the given order.
    """
    _, h, w = image.shape
    dys, dxs = [0] + [t[0] for t in taps], [0] + [t[1] for t in taps]
    top, bottom, left, right = max(dys), max(-d for d in dys), max(dxs), max(-d for d in dxs)
    padded = pad_image(image, (top, bottom), (left, right), "replicate")
    out = torch.zeros_like(image)
    for dy, dx, weight in taps:
        out.add_(padded[:, top - dy : top - dy + h, left - dx : left - dx + w], alpha=weight)
    return out


def imagenet_c_disk(radius: float, alias_blur: float) -> np.ndarray:
    """ImageNet-C's defocus kernel: an aliased disk smoothed by a small Gaussian, float64.

    As ``imagecorruptions.disk``: a ``17 x 17`` support for ``radius <= 8`` (3 x 3 anti-alias
    Gaussian), else ``2 ceil(radius) + 1`` (5 x 5 Gaussian, ``BORDER_REFLECT_101`` on the kernel
    array, like ``cv2.GaussianBlur``). ImageNet-C only uses integer radii; for them the support
    is identical. ``alias_blur <= 0`` skips the smoothing.
    """
    return _imagenet_c_disk(float(radius), float(alias_blur)).copy()


@lru_cache(maxsize=256)
def _imagenet_c_disk(radius: float, alias_blur: float) -> np.ndarray:
    half = 8 if radius <= 8 else math.ceil(radius)
    coords = np.arange(-half, half + 1)
    xx, yy = np.meshgrid(coords, coords)
    disk = ((xx**2 + yy**2) <= radius**2).astype(np.float32)
    disk /= np.sum(disk)
    disk = disk.astype(np.float64)
    if alias_blur <= 0:
        return disk
    ksize = 3 if radius <= 8 else 5
    g = np.exp(-((np.arange(ksize) - (ksize - 1) / 2) ** 2) / (2 * alias_blur**2))
    g /= g.sum()
    n = disk.shape[0]
    m = filter_matrix(n, g, "reflect101")
    return m @ disk @ m.T


def motion_taps(radius: float, sigma: float, angle: float, height: int,
                width: int) -> list[tuple[int, int, float]]:
    """ImageNet-C's motion-blur taps ``(dy, dx, weight)`` (``imagecorruptions._motion_blur``).

    Kernel width ``2 r + 1`` with ``r = round(radius)``; weights are a one-sided Gaussian
    ``exp(-i^2 / (2 sigma^2))`` over ``i = 0 … 2r`` normalised over all of them; tap ``i`` shifts
    the image by ``(-ceil(i sin a - 0.5), -ceil(i cos a - 0.5))`` (a in degrees). Taps stop at
    the first shift that leaves the image (as ImageNet-C, without renormalising). Taps whose
    weight is below 1e-9 of the total are dropped (under 1e-6 grey levels in all) and taps with
    equal shifts are merged.
    """
    kwidth = 2 * round_int(radius) + 1
    i = np.arange(kwidth, dtype=np.float64)
    if sigma > 0:
        k = np.exp(-(i**2) / (2 * sigma**2)) / (np.sqrt(2 * np.pi) * sigma)
        k = k / np.sum(k)
    else:
        k = (i == 0).astype(np.float64)
    point = (kwidth * np.sin(np.deg2rad(angle)), kwidth * np.cos(np.deg2rad(angle)))
    hypot = math.hypot(point[0], point[1])
    merged: dict[tuple[int, int], float] = {}
    for j in range(kwidth):
        dy = -math.ceil(((j * point[0]) / hypot) - 0.5)
        dx = -math.ceil(((j * point[1]) / hypot) - 0.5)
        if abs(dy) >= height or abs(dx) >= width:
            break
        if k[j] < 1e-9:
            continue
        merged[(dy, dx)] = merged.get((dy, dx), 0.0) + float(k[j])
    return [(dy, dx, wgt) for (dy, dx), wgt in merged.items()]
