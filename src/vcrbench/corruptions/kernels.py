"""Filter kernels, border handling and the filtering primitives of the blur corruptions.

Two kinds of primitives:

- per-sample ones (``separable_filter``, ``shift_sum``, ``motion_taps``, ``imagenet_c_disk``):
  *one* ``(3, H, W)`` sample with a kernel built on the CPU in float64 from its own parameters
  (box blur, snow's streaks, NOC's fields; ``gaussian_taps``, ``filter_matrix``,
  ``imagenet_c_disk`` and ``motion_taps`` are also the references of the batched builders'
  tests);
- batched ones (``gaussian_taps_table``, ``replicate_filter_matrices``, ``banded_filter``,
  ``defocus_kernels``, ``motion_kernels``, ``fft_correlate``): a ``(B, 3, H, W)`` batch on its
  own device, every sample with its own parameters, as tables or matrices whose size comes
  from the image and a bound on the parameters (the corruption's domain), never from the
  values in the batch: taps past a sample's own kernel have zero weight. Each sample's result
  is computed by operations that do not mix samples (elementwise, reductions over its own
  rows, batched matrix products, batched FFTs), so it does not depend on the batch it is in.

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
    """Pad a ``(..., H, W)`` image (or batch) by ``pad_h`` rows and ``pad_w`` columns (each an
    int for both sides, or a ``(before, after)`` pair)."""
    h, w = image.shape[-2:]
    (top, bottom) = (pad_h, pad_h) if isinstance(pad_h, int) else pad_h
    (left, right) = (pad_w, pad_w) if isinstance(pad_w, int) else pad_w
    if image.dim() == 4 and (mode == "replicate" or (
            mode == "reflect101" and max(top, bottom) < h and max(left, right) < w)):
        # torch's "reflect" is BORDER_REFLECT_101 while the border is narrower than the image
        return torch.nn.functional.pad(image, (left, right, top, bottom),
                                       mode="replicate" if mode == "replicate" else "reflect")
    out = image
    if top or bottom:
        rows = torch.from_numpy(border_index(h, max(top, bottom), mode)[
            max(top, bottom) - top : max(top, bottom) + h + bottom]).to(image.device)
        out = out.index_select(-2, rows)
    if left or right:
        cols = torch.from_numpy(border_index(w, max(left, right), mode)[
            max(left, right) - left : max(left, right) + w + right]).to(image.device)
        out = out.index_select(-1, cols)
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


# --------------------------------------------------------------------------- batched builders


def gaussian_taps_table(sigmas: torch.Tensor, radius: int, truncate: float = 4.0) -> torch.Tensor:
    """``(B, 2 radius + 1)`` float64: each sample's :func:`gaussian_taps`, centred at ``radius``.

    ``sigmas`` ``(B,)`` float64 (px). Sample ``b``'s taps are scipy's Gaussian of radius
    ``int(truncate * sigma_b + 0.5)`` (at most ``radius``: the caller's bound), normalised; the
    table's other entries are 0. ``sigma <= 0`` gives the identity (1 at the centre).
    """
    x = torch.arange(-radius, radius + 1, dtype=torch.float64, device=sigmas.device)
    positive = sigmas > 0
    own = torch.where(positive, torch.floor(truncate * sigmas + 0.5), 0.0)
    safe = torch.where(positive, sigmas, 1.0)
    phi = torch.exp((-0.5 / (safe * safe))[:, None] * (x * x))
    phi = torch.where(x.abs() <= own[:, None], phi, 0.0)
    return phi / phi.sum(dim=1, keepdim=True)


def replicate_filter_matrices(taps: torch.Tensor, n: int) -> torch.Tensor:
    """``(B, n, n)``: per sample, the matrix of a 1-D correlation with centred ``taps``
    ``(B, 2R + 1)`` on an axis of ``n`` samples, border replicated (:func:`filter_matrix`
    with ``"replicate"``, any ``R``): ``(M @ x)[i] = sum_t taps[t] * x[clip(i + t - R)]``.

    Inner columns take the taps on the band ``|j - i| <= R``; the first and last column take
    the sum of all taps that land on or beyond that edge.
    """
    batch, length = taps.shape
    radius = (length - 1) // 2
    if n == 1:
        return taps.sum(dim=1).reshape(batch, 1, 1)
    device = taps.device
    i = torch.arange(n, device=device)
    # out[:, i, j] = taps[:, j - i + R] on the band: rows of one zero-extended run of taps
    if radius >= n - 1:
        run = taps[:, radius - (n - 1): radius + n]
    else:
        run = torch.nn.functional.pad(taps, (n - 1 - radius, n - 1 - radius))
    out = run.unfold(1, n, 1).flip(1)  # run[:, n - 1 - i + j]
    below = taps.cumsum(dim=1)  # below[:, t]: taps 0 .. t
    above = taps.flip(1).cumsum(dim=1).flip(1)  # above[:, t]: taps t .. 2R
    first = radius - i  # taps t <= R - i land on column 0
    last = n - 1 - i + radius  # taps t >= n - 1 - i + R land on column n - 1
    out[:, :, 0] = torch.where(first >= 0, below[:, first.clamp(0, length - 1)], 0.0)
    out[:, :, n - 1] = torch.where(last < length, above[:, last.clamp(0, length - 1)], 0.0)
    return out


def banded_filter(images: torch.Tensor, taps: torch.Tensor, block: int) -> torch.Tensor:
    """Separable correlation of each sample with its own centred ``taps`` ``(B, 2R + 1)``
    along H then W, border replicated: :func:`replicate_filter_matrices`' result for short
    kernels, at a cost of ``block + 2R`` instead of ``n`` multiply-adds per output.

    Each axis is replicate-padded by ``R`` (and up to a multiple of ``block``) and cut into
    windows of ``block + 2R`` samples at a stride of ``block``; one batched matrix product per
    axis applies the sample's ``(block, block + 2R)`` Toeplitz band ``T[i, j] = taps[j - i]``
    to all of its windows, channels and rows at once.
    """
    batch, channels, h, w = images.shape
    length = taps.shape[1]
    radius = (length - 1) // 2
    span = block + 2 * radius
    band = torch.nn.functional.pad(taps, (block - 1, block - 1)).unfold(1, span, 1).flip(1)
    band = band.to(images.dtype)  # (B, block, span): band[:, i, j] = taps[:, j - i]
    n_h, n_w = -(-h // block), -(-w // block)
    padded = torch.nn.functional.pad(images, (0, 0, radius, radius + n_h * block - h),
                                     mode="replicate")
    windows = padded.unfold(2, span, block)  # (B, C, n_h, W, span)
    columns = windows.permute(0, 4, 1, 2, 3).reshape(batch, span, channels * n_h * w)
    out = torch.bmm(band, columns).reshape(batch, block, channels, n_h, w)
    out = out.permute(0, 2, 3, 1, 4).reshape(batch, channels, n_h * block, w)[:, :, :h]
    padded = torch.nn.functional.pad(out, (radius, radius + n_w * block - w, 0, 0),
                                     mode="replicate")
    rows = padded.unfold(3, span, block).reshape(batch, channels * h * n_w, span)
    out = torch.bmm(rows, band.transpose(1, 2)).reshape(batch, channels, h, n_w * block)
    return out[..., :w]


def defocus_kernels(radius: torch.Tensor, alias_blur: torch.Tensor, half: int) -> torch.Tensor:
    """``(B, 2 half + 1, 2 half + 1)`` float64: each sample's :func:`imagenet_c_disk`, centred.

    ``radius`` and ``alias_blur`` ``(B,)`` float64; ``half`` bounds every sample's own
    half-size (8 for ``radius <= 8``, else ``ceil(radius)``). As ImageNet-C: the disk
    ``x^2 + y^2 <= radius^2`` on the sample's own grid, normalised in float32, then smoothed by
    a 3-tap (``radius <= 8``) or 5-tap Gaussian of standard deviation ``alias_blur`` with
    ``BORDER_REFLECT_101`` at the edge of the sample's own grid; zero outside it.
    ``alias_blur <= 0`` skips the smoothing.
    """
    device = radius.device
    coords = torch.arange(-half, half + 1, dtype=torch.float64, device=device)
    small = radius <= 8
    own = torch.where(small, 8.0, torch.ceil(radius))[:, None]  # (B, 1)
    on_grid = coords.abs()[None, :] <= own  # (B, K)
    squared = coords[:, None] ** 2 + coords[None, :] ** 2
    disk = (squared[None] <= (radius * radius)[:, None, None]) & on_grid[:, :, None] & (
        on_grid[:, None, :])
    count = disk.sum(dim=(1, 2)).to(torch.float32)
    value = (torch.ones_like(count) / count).to(torch.float64)  # numpy's float32 division
    disk = disk.to(torch.float64) * value[:, None, None]
    steps = torch.arange(-2, 3, dtype=torch.float64, device=device)
    reach = torch.where(small, 1.0, 2.0)[:, None]
    smooth = alias_blur > 0
    safe = torch.where(smooth, alias_blur, 1.0)[:, None]
    g = torch.exp(-(steps * steps)[None, :] / (2 * safe * safe))
    g = torch.where(steps.abs()[None, :] <= reach, g, 0.0)
    g = g / g.sum(dim=1, keepdim=True)
    g = torch.where(smooth[:, None], g, (steps == 0).to(torch.float64)[None, :])
    # reflect-101 at the sample's own grid edge (the taps reach at most 2 past it)
    position = coords[None, :, None] + steps[None, None, :]  # (1, K, 5)
    edge = own[:, :, None]
    source = torch.where(position > edge, 2 * edge - position,
                         torch.where(position < -edge, -2 * edge - position, position))
    hits = (source[..., None] == coords).to(torch.float64)  # (B, K, 5, K)
    matrix = (hits * g[:, None, :, None]).sum(dim=2) * on_grid[:, :, None]
    return matrix @ disk @ matrix.transpose(1, 2)


def motion_kernels(radius: torch.Tensor, sigma: torch.Tensor, angle: torch.Tensor, height: int,
                   width: int, max_taps: int) -> tuple[torch.Tensor, torch.Tensor]:
    """ImageNet-C's motion streaks (``_motion_blur``, as :func:`motion_taps`) as 2-D kernels.

    ``radius``, ``sigma``, ``angle`` (degrees, in ``[-45, 45]``) ``(B,)`` float64;
    ``max_taps`` bounds every sample's ``2 round(radius) + 1``. Tap ``i`` has ImageNet-C's
    weight and shift ``(dy_i, dx_i)``; taps from the first one whose shift leaves the image
    have weight 0. For ``|angle| <= 45`` degrees ``dx_i <= 0``, and ``dy_i <= 0`` for
    ``angle >= 0`` (``>= 0`` below), so the streak is a kernel ``K`` with
    ``out[y, x] = sum K[e, c] * image'[clip(y + e), clip(x + c)]`` where ``image'`` is the image
    flipped upside down for negative angles (and the output flipped back).

    Returns ``(K, flip)``: ``K`` ``(B, E + 1, C + 1)`` float64 with ``E = min(H - 1, max |dy|)``
    and ``C = min(W - 1, max_taps - 1)`` over the bound, and ``flip`` ``(B,)`` bool. At most two
    taps (consecutive ones) share a cell, so the cells are sums of at most two weights.
    """
    device = radius.device
    i = torch.arange(max_taps, dtype=torch.float64, device=device)
    kwidth = 2 * torch.floor(radius + 0.5) + 1  # (B,)
    used = i[None, :] < kwidth[:, None]
    positive = sigma > 0
    safe = torch.where(positive, sigma, 1.0)[:, None]
    k = torch.exp(-(i * i)[None, :] / (2 * safe * safe)) / (math.sqrt(2 * math.pi) * safe)
    k = torch.where(positive[:, None], k, (i == 0).to(torch.float64)[None, :])
    k = torch.where(used, k, 0.0)
    k = k / k.sum(dim=1, keepdim=True)
    rad = torch.deg2rad(angle)
    point_y, point_x = kwidth * torch.sin(rad), kwidth * torch.cos(rad)
    hypot = torch.hypot(point_y, point_x)[:, None]
    dy = -torch.ceil(((i[None, :] * point_y[:, None]) / hypot) - 0.5)
    dx = -torch.ceil(((i[None, :] * point_x[:, None]) / hypot) - 0.5)
    inside = (dy.abs() < height) & (dx.abs() < width) & used
    inside = torch.cummin(inside.to(torch.int64), dim=1).values.bool()  # stop at the first out
    k = torch.where(inside, k, 0.0)
    e_max, c_max = motion_extent(max_taps, height, width)
    rows = dy.abs().clamp(max=e_max).to(torch.int64)
    cols = (-dx).clamp(0, c_max).to(torch.int64)
    kernel = torch.zeros((radius.shape[0], (e_max + 1) * (c_max + 1)), dtype=torch.float64,
                         device=device)
    kernel.scatter_add_(1, rows * (c_max + 1) + cols, k)
    return kernel.reshape(-1, e_max + 1, c_max + 1), angle < 0


def motion_extent(max_taps: int, height: int, width: int) -> tuple[int, int]:
    """The largest ``|dy|`` and ``|dx|`` of a streak of at most ``max_taps`` taps at an angle in
    ``[-45, 45]`` degrees on an ``height x width`` image (taps leaving the image are dropped)."""
    far = max_taps - 1
    e_max = math.ceil(far * math.sin(math.radians(45.0)) - 0.5)
    return min(height - 1, max(0, e_max)), min(width - 1, far)


def fft_correlate(image: torch.Tensor, kernels: torch.Tensor, before: tuple[int, int],
                  mode: str) -> torch.Tensor:
    """``out[b, c, y, x] = sum_{u, v} kernels[b, u, v] * image'[b, c, y + u - top, x + v - left]``
    by batched FFTs, ``image'`` the ``(B, C, H, W)`` image extended by the border ``mode``.

    ``kernels`` ``(B, Kh, Kw)``, any float dtype (cast to the image's); ``before = (top,
    left)``, the rows and columns the kernel reaches above and left of a pixel (``(Kh // 2,
    Kw // 2)`` for a centred kernel, ``(0, 0)`` for one that reaches only down and right). The
    image is padded straight to fast FFT lengths ``>= H + Kh - 1`` and ``>= W + Kw - 1``, so the
    circular correlation leaves the ``H x W`` output exact (no wrap-around). Accuracy: the
    dtype's FFT round-off (about 1e-6 of the image range in float32).
    """
    h, w = image.shape[-2:]
    kh, kw = kernels.shape[-2:]
    top, left = before
    size = (next_fast_size(h + kh - 1), next_fast_size(w + kw - 1))
    padded = pad_image(image, (top, size[0] - h - top), (left, size[1] - w - left), mode)
    image_f = torch.fft.rfft2(padded)
    kernel_f = torch.fft.rfft2(kernels.to(image.dtype), s=size)
    out = torch.fft.irfft2(image_f * kernel_f.conj().unsqueeze(1), s=size)
    return out[..., :h, :w]
