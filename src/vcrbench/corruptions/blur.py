"""Blur corruptions: Gaussian, defocus, motion and glass blur (ImageNet-C); box and median blur
(Albumentations).

Each function takes ``(B, 3, H, W)`` float images in ``[0, 1]`` and returns the same. The four
ImageNet-C blurs are batched on the images' device: every sample has its own kernel, but the
kernels are tables, matrices or FFT planes whose size comes from the image and the corruption's
domain (registry ``parameters``, widened by ``point_domain``), never from the values in the batch
(``kernels``' batched builders), and no operation mixes samples, so a sample's bytes do not
depend on its batch. A parameter beyond its domain is refused (``VcrbenchError``).

- Gaussian blur: per-sample filter matrices ``(B, H, H)`` and ``(B, W, W)`` with skimage's
  ``mode="nearest"`` folded in, applied by batched matrix products.
- Defocus blur: per-sample anti-aliased disks on the grid of the domain's largest radius, applied
  by batched FFTs to the ``BORDER_REFLECT_101``-padded image.
- Motion blur: the direction is a per-sample draw, ``angle = -45 + 90 u`` degrees with ``u`` the
  float64 uniform of :func:`vcrbench.core.philox.uniform` (stream :data:`MOTION_ANGLE_STREAM`);
  the streak (ImageNet-C's taps and integer shifts, edges replicated) is a 2-D kernel applied
  by batched FFTs.
- Glass blur: Gaussian blur, truncation to 8 bits, ImageNet-C's sequential local pixel shuffle
  (:func:`glass_shuffle_maps`, exact), Gaussian blur. The shuffle offsets are Philox words
  (stream :data:`GLASS_OFFSET_STREAM`, :func:`glass_offsets`).

Box blur filters sample by sample (``kernels.separable_filter``). Median blur runs OpenCV on the
CPU (it is an 8-bit operation in Albumentations too).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import torch

from vcrbench.core import philox
from vcrbench.corruptions.kernels import (
    banded_filter,
    defocus_kernels,
    fft_correlate,
    gaussian_taps_table,
    motion_extent,
    motion_kernels,
    odd_size,
    replicate_filter_matrices,
    round_int,
    separable_filter,
)
from vcrbench.errors import VcrbenchError

#: ImageNet-C motion blur draws the direction uniformly from this range (degrees).
MOTION_ANGLE_RANGE = (-45.0, 45.0)
#: Tap counts up to which motion streaks are applied by smaller FFTs (75 % and 90 % of the
#: domain's draws at 224 px have at most 17 and 43 taps).
MOTION_TAP_GROUPS = (17, 65)
#: Philox stream of motion blur's direction (one float64 uniform a sample).
MOTION_ANGLE_STREAM = 1
#: Philox stream of glass blur's shuffle offsets (one 32-bit word per two pixels and pass).
GLASS_OFFSET_STREAM = 2

#: Added before ImageNet-C's uint8 truncation in glass blur, so that values that are integers up
#: to float round-off (e.g. at sigma = 0) are not truncated one level down.
_TRUNCATION_SLACK = 1e-4
#: scipy's Gaussian truncation (radius ``int(4 sigma + 0.5)``).
_TRUNCATE = 4.0
#: Gaussian kernels up to this radius (px; sigma < 6.125, all of glass blur's) are applied as
#: banded products in blocks of :data:`_BLOCK` rows, faster than dense matrices at 224 px.
BANDED_RADIUS = 24
_BLOCK = 32


def domain_high(name: str, param: str) -> float:
    """The largest value corruption ``name`` accepts for ``param`` (its ``point_domain``'s end
    where it has one, else its domain's)."""
    from vcrbench.corruptions.registry import get_corruption

    spec = get_corruption(name)
    return max(spec.parameters[param][1], spec.point_domain.get(param, (0.0, -math.inf))[1])


def _checked(name: str, param: str, values: np.ndarray | Sequence[float]) -> np.ndarray:
    """``(B,)`` float64 host array, refused above the domain's top (the sizes of the tables
    depend on the domain, not on the values)."""
    array = np.asarray(values, dtype=np.float64).reshape(-1)
    high = domain_high(name, param)
    if array.size and not bool(np.all(array <= high)):
        raise VcrbenchError(f"{name}: {param} must be at most {high:g} (its domain), got "
                            f"{float(np.max(array))!r}; pass values inside the domain")
    return array


def _values(name: str, param: str, values: np.ndarray | Sequence[float],
            device: torch.device) -> torch.Tensor:
    """:func:`_checked` as a ``(B,)`` float64 tensor on ``device``."""
    return torch.from_numpy(_checked(name, param, values)).to(device)


# --------------------------------------------------------------------------- Gaussian blur


def gaussian_blur_batch(images: torch.Tensor, sigmas: np.ndarray,
                        max_sigma: float) -> torch.Tensor:
    """skimage ``gaussian(image, sigma)`` of each sample (truncate 4, ``mode="nearest"``).

    ``sigmas`` ``(B,)`` float64 px (a host array), each at most ``max_sigma`` (which sets the
    tap table). Kernels of radius ``int(4 sigma + 0.5)`` up to :data:`BANDED_RADIUS` are
    applied as banded products (``kernels.banded_filter``), longer ones as dense per-sample
    filter matrices ``(B, H, H)`` and ``(B, W, W)`` with the border folded in.
    """
    sigmas = np.asarray(sigmas, dtype=np.float64).reshape(-1)
    radius = int(_TRUNCATE * max_sigma + 0.5)
    taps = gaussian_taps_table(torch.from_numpy(sigmas).to(images.device), radius, _TRUNCATE)
    if radius <= BANDED_RADIUS:
        return banded_filter(images, taps, _BLOCK)
    own = np.where(sigmas > 0, np.floor(_TRUNCATE * sigmas + 0.5), 0.0)
    short = torch.from_numpy(np.flatnonzero(own <= BANDED_RADIUS)).to(images.device)
    long = torch.from_numpy(np.flatnonzero(own > BANDED_RADIUS)).to(images.device)
    out = torch.empty_like(images)
    centre = slice(radius - BANDED_RADIUS, radius + BANDED_RADIUS + 1)
    out[short] = banded_filter(images[short], taps[short][:, centre], _BLOCK)
    out[long] = _dense_gaussian(images[long], taps[long])
    return out


def _dense_gaussian(images: torch.Tensor, taps: torch.Tensor) -> torch.Tensor:
    batch, channels, h, w = images.shape
    rows = replicate_filter_matrices(taps, h).to(images.dtype)
    cols = replicate_filter_matrices(taps, w).to(images.dtype)
    out = torch.matmul(rows.unsqueeze(1), images)
    out = torch.bmm(out.reshape(batch, channels * h, w), cols.transpose(1, 2))
    return out.reshape(batch, channels, h, w)


def gaussian_blur(images: torch.Tensor, params: dict[str, np.ndarray],
                  seeds: Sequence[int]) -> torch.Tensor:
    """ImageNet-C Gaussian blur with standard deviation ``sigma`` (pixels)."""
    sigmas = _checked("gaussian_blur", "sigma", params["sigma"])
    return gaussian_blur_batch(images, sigmas, domain_high("gaussian_blur", "sigma"))


# --------------------------------------------------------------------------- defocus blur


def defocus_blur(images: torch.Tensor, params: dict[str, np.ndarray],
                 seeds: Sequence[int]) -> torch.Tensor:
    """ImageNet-C defocus blur: correlation with an anti-aliased disk, ``BORDER_REFLECT_101``.

    ``radius`` (pixels, continuous: the disk is ``x^2 + y^2 <= radius^2`` on the integer grid)
    and ``alias_blur`` (standard deviation of the Gaussian that smooths the disk kernel). A
    sample whose kernel is a single pixel is returned unchanged. The kernels of radius <= 8
    (ImageNet-C's 17 x 17 grid) are applied by FFTs sized for that grid, the others by FFTs
    sized for the domain's largest radius (:func:`fft_by_group`).
    """
    device = images.device
    radius = _values("defocus_blur", "radius", params["radius"], device)
    alias = _values("defocus_blur", "alias_blur", params["alias_blur"], device)
    half = max(8, math.ceil(domain_high("defocus_blur", "radius")))
    kernels = defocus_kernels(radius, alias, half)
    identity = (kernels > 1e-12).sum(dim=(1, 2)) == 1
    small = slice(half - 8, half + 9)
    groups = [(np.asarray(params["radius"]) <= 8, (small, small), (8, 8)),
              (np.asarray(params["radius"]) > 8, (slice(None), slice(None)), (half, half))]
    out = fft_by_group(images, kernels, groups, "reflect101")
    out = torch.where(identity[:, None, None, None], images, out)
    return out.clamp(0.0, 1.0)


def fft_by_group(images: torch.Tensor, kernels: torch.Tensor,
                 groups: Sequence[tuple[np.ndarray, tuple[slice, slice], tuple[int, int]]],
                 mode: str) -> torch.Tensor:
    """:func:`kernels.fft_correlate` of each sample, samples grouped by the size of their
    kernels: ``groups`` holds ``(members, (rows, cols), before)``, ``members`` a ``(B,)`` bool
    host array (each sample in exactly one group), ``rows, cols`` the crop of ``kernels``
    that holds all of the members' nonzero taps, ``before`` its reach above and left.

    The groups and their FFT sizes are fixed by the image and the domain; a sample's group by
    its own parameters, so its bytes do not depend on the batch. Empty groups are skipped
    (torch's MKL FFT refuses empty batches).
    """
    out = torch.empty_like(images)
    for members, (rows, cols), before in groups:
        samples = np.flatnonzero(members)
        if samples.size == 0:
            continue
        index = torch.from_numpy(samples).to(images.device)
        out[index] = fft_correlate(images[index], kernels[index][:, rows, cols], before, mode)
    return out


# --------------------------------------------------------------------------- motion blur


def motion_angles(seeds: Sequence[int] | torch.Tensor,
                  device: torch.device | str | None = None) -> torch.Tensor:
    """Each sample's motion direction (degrees), ``(B,)`` float64: ``-45 + 90 u``, ``u`` the
    sample's float64 Philox uniform on stream :data:`MOTION_ANGLE_STREAM`."""
    low, high = MOTION_ANGLE_RANGE
    u = philox.uniform(seeds, 1, MOTION_ANGLE_STREAM, dtype=torch.float64, device=device)
    return low + (high - low) * u[:, 0]


def motion_blur_at(images: torch.Tensor, radius: np.ndarray, sigma: np.ndarray,
                   angle: torch.Tensor, max_radius: float) -> torch.Tensor:
    """ImageNet-C ``_motion_blur`` of each sample at a given angle (degrees), unclipped.

    ``radius``, ``sigma`` ``(B,)`` float64 host arrays, ``radius`` at most ``max_radius``
    (which sets the tap table, ``2 round(max_radius) + 1`` taps); ``angle`` ``(B,)`` float64.
    Samples are grouped by tap count (up to :data:`MOTION_TAP_GROUPS`, then the domain's), each
    group's FFTs sized for its largest streak (:func:`fft_by_group`).
    """
    _, _, h, w = images.shape
    device = images.device
    max_taps = 2 * round_int(max_radius) + 1
    radius = np.asarray(radius, dtype=np.float64)
    kernels, flip = motion_kernels(torch.from_numpy(radius).to(device),
                                   torch.as_tensor(sigma, dtype=torch.float64, device=device),
                                   angle, h, w, max_taps)
    taps = 2 * np.floor(radius + 0.5) + 1
    groups, below = [], 0
    for bound in (*(t for t in MOTION_TAP_GROUPS if t < max_taps), max_taps):
        e_max, c_max = motion_extent(bound, h, w)
        members = (taps > below) & (taps <= bound)
        groups.append((members, (slice(0, e_max + 1), slice(0, c_max + 1)), (0, 0)))
        below = bound
    flip = flip[:, None, None, None]
    source = torch.where(flip, images.flip(2), images)
    out = fft_by_group(source, kernels, groups, "replicate")
    return torch.where(flip, out.flip(2), out)


def motion_blur(images: torch.Tensor, params: dict[str, np.ndarray],
                seeds: Sequence[int]) -> torch.Tensor:
    """ImageNet-C motion blur; the direction is drawn from the sample's seed (``motion_angles``)."""
    radius = _checked("motion_blur", "radius", params["radius"])
    angles = motion_angles(seeds, images.device)
    sigma = _checked("motion_blur", "sigma", params["sigma"])
    out = motion_blur_at(images, radius, sigma, angles, domain_high("motion_blur", "radius"))
    return out.clamp(0.0, 1.0)


# --------------------------------------------------------------------------- glass blur


def glass_offsets(seeds: Sequence[int] | torch.Tensor, height: int, width: int,
                  deltas: torch.Tensor, passes: int, first: int = 0) -> torch.Tensor:
    """Each sample's shuffle offsets of passes ``first .. first + passes - 1``,
    ``(B, passes, H, W, 2)`` int64 by pixel position: ``[b, k, h, w] = (dx, dy)``, each uniform
    on ``[-delta_b, delta_b)`` (ImageNet-C's ``randint(-delta, delta)``; only the pixels the
    shuffle visits use theirs).

    Pass ``k`` takes the ``m = ceil(H W / 2)`` words from word ``k m`` on of the sample's
    Philox stream :data:`GLASS_OFFSET_STREAM`; pixels ``2j`` and ``2j + 1`` (flat
    ``h W + w``) take the four base-``n`` digits (``n = 2 delta_b``, most significant first:
    ``dx, dy`` of ``2j``, then of ``2j + 1``) of ``floor(w * n^4 / 2**32)``, ``w`` the pass's
    word ``j``: every outcome of the four has probability within ``2**-32`` of ``n^-4``
    (relative error at most ``n^4 / 2**32``, 7.7e-5 at the domain's ``delta`` 12).
    """
    device = deltas.device
    per_pass = (height * width + 1) // 2
    words = philox.words(seeds, passes * per_pass, GLASS_OFFSET_STREAM, device=device,
                         start=first * per_pass)
    n = (2 * deltas).clamp(min=1)[:, None]
    digits = []
    rest = words
    for _ in range(4):  # w n^4 = (d0 n^3 + d1 n^2 + d2 n + d3) 2**32 + r, digit by digit
        rest = rest * n
        digits.append(rest >> 32)
        rest &= 0xFFFFFFFF
    digits = torch.stack(digits, -1).reshape(-1, passes, 4 * per_pass)[..., : 2 * height * width]
    return (digits - deltas[:, None, None]).reshape(-1, passes, height, width, 2)


def glass_offset_grid(offsets: Sequence[np.ndarray], height: int, width: int,
                      delta: int) -> torch.Tensor:
    """ImageNet-C's offsets in visiting order (per pass ``(H - 2 delta, W - 2 delta, 2)``,
    rows and columns descending) as one sample's ``(1, passes, H, W, 2)`` position grid."""
    grid = np.zeros((max(1, len(offsets)), height, width, 2), dtype=np.int64)
    for k, off in enumerate(offsets):
        grid[k, height - delta: delta: -1, width - delta: delta: -1] = np.asarray(off)
    return torch.from_numpy(grid)[None]


def shuffle_jump_rounds(height: int, width: int, max_delta: int) -> int:
    """Pointer-jumping rounds that resolve every chain of :func:`glass_pass_maps` for
    ``2 <= delta <= max_delta``: ``ceil(log2 L)``, ``L`` the longest possible chain.

    A chain steps from a visited pixel to a visited source visited earlier: ``dy >= 1`` rows
    down (``D`` steps, at most ``H - 2 delta - 1``) or, in the same row, ``dx >= 1`` right
    (``S`` steps); a step down moves at most ``delta`` left, so ``S <= W - 2 delta - 1 +
    delta D`` and ``L = S + D <= W - 2 delta - 1 + (delta + 1)(H - 2 delta - 1)``. (With
    ``delta = 1``, ``dx, dy`` are in ``{-1, 0}``: no chains.)
    """
    longest = 1
    for delta in range(2, max_delta + 1):
        rows, cols = height - 2 * delta, width - 2 * delta
        if rows >= 1 and cols >= 1:
            longest = max(longest, cols - 1 + (delta + 1) * (rows - 1))
    return max(0, math.ceil(math.log2(longest)))


def glass_pass_maps(height: int, width: int, deltas: torch.Tensor, offsets: torch.Tensor,
                    rounds: int) -> torch.Tensor:
    """One pass of ImageNet-C's local pixel shuffling for each sample, ``(B, H * W)`` flat
    indices: ``out.flat[p] = x.flat[m[p]]``.

    ImageNet-C (``imagecorruptions.glass_blur``) visits ``h = H - delta … delta + 1`` and, inside,
    ``w = W - delta … delta + 1`` (both descending) and runs ``x[h, w], x[h', w'] = x[h', w'],
    x[h, w]`` on numpy row views, with ``(h', w') = (h + dy, w + dx)``. That statement is *not*
    a swap: the second assignment writes back the already overwritten view, so it copies
    ``x[h, w] <- x[h', w']`` and leaves the source alone. In one pass each visited pixel is
    written once, with the *current* value of its source: the source's new value if the source
    was visited earlier (a later row, or the same row and a later column), else its old value.
    Here each visited pixel points to its source where that was visited earlier, and ``rounds``
    of pointer jumping (:func:`shuffle_jump_rounds`: enough for every chain) find the end of
    every chain, whose old value is the one copied. Exact.

    ``deltas`` ``(B,)`` int64 (``>= 1``); ``offsets`` ``(B, H, W, 2)`` by pixel position.
    """
    device = offsets.device
    batch = offsets.shape[0]
    hh = torch.arange(height, device=device)[:, None]
    ww = torch.arange(width, device=device)[None, :]
    flat = torch.arange(height * width, device=device).reshape(height, width)
    d = deltas.reshape(-1, 1, 1)

    def inside(h: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return (h > d) & (h <= height - d) & (w > d) & (w <= width - d)

    visited = inside(hh, ww)
    dx, dy = offsets[..., 0], offsets[..., 1]
    sh, sw = hh + dy, ww + dx
    source = torch.where(visited, sh * width + sw, flat).reshape(batch, height * width)
    if rounds == 0:
        return source
    earlier = visited & inside(sh, sw) & ((dy > 0) | ((dy == 0) & (dx > 0)))
    parent = torch.where(earlier, sh * width + sw, flat).reshape(batch, height * width)
    for _ in range(rounds):
        parent = parent.gather(1, parent)
    return source.gather(1, parent)


def glass_shuffle_maps(height: int, width: int, deltas: np.ndarray, passes: np.ndarray,
                       offsets: torch.Tensor | Callable[[np.ndarray, int], torch.Tensor],
                       max_delta: int, max_passes: int,
                       device: torch.device | str = "cpu") -> torch.Tensor:
    """Where each pixel comes from after all passes of the shuffle, ``(B, H * W)`` flat
    indices (:func:`glass_pass_maps`, composed), for every sample at once.

    ``deltas`` and ``passes`` ``(B,)`` integer arrays on the host (the rounded parameters;
    ``deltas <= max_delta``, ``passes <= max_passes``). ``offsets``: ``(B, P, H, W, 2)`` by
    pixel position, or a function ``(samples, k) -> (len(samples), H, W, 2)`` giving pass
    ``k``'s offsets of those samples
    (:func:`glass_offsets`). Pass ``k`` touches only the samples with more than ``k`` passes
    and ``delta >= 1``, and pointer-jumps only those with ``delta >= 2`` (the others have no
    chains): the same maps as treating every sample alike, for less work; the operations per
    batch do not depend on its size.
    """
    deltas = np.asarray(deltas, dtype=np.int64)
    passes = np.asarray(passes, dtype=np.int64)
    total = torch.arange(height * width, device=device).repeat(len(deltas), 1)
    if callable(offsets):
        draw = offsets
    else:
        def draw(samples: np.ndarray, k: int) -> torch.Tensor:
            return offsets[torch.from_numpy(samples).to(offsets.device), k]
    rounds = shuffle_jump_rounds(height, width, max_delta)
    if passes.size and (int(passes.max()) > max_passes or int(deltas.max()) > max_delta):
        raise VcrbenchError(f"glass blur: at most {max_passes} passes of at most {max_delta} px "
                            f"(the domain), got {passes.max()} and {deltas.max()}")
    for k in range(max_passes):
        for samples, jumps in ((np.flatnonzero((passes > k) & (deltas == 1)), 0),
                               (np.flatnonzero((passes > k) & (deltas >= 2)), rounds)):
            index = torch.from_numpy(samples).to(device)
            step = glass_pass_maps(height, width, torch.from_numpy(deltas[samples]).to(device),
                                   draw(samples, k).to(device), jumps)
            total[index] = total[index].gather(1, step)
    return total


def glass_blur_with(images: torch.Tensor, sigma: np.ndarray, deltas: np.ndarray,
                    passes: np.ndarray,
                    offsets: torch.Tensor | Callable[[np.ndarray, int], torch.Tensor],
                    max_sigma: float, max_delta: int, max_passes: int) -> torch.Tensor:
    """ImageNet-C glass blur of each sample with given offsets (:func:`glass_shuffle_maps`):
    blur, truncate to uint8, shuffle, blur again; unclipped."""
    batch, channels, h, w = images.shape
    blurred = gaussian_blur_batch(images, sigma, max_sigma)
    quantised = torch.floor(blurred * 255.0 + _TRUNCATION_SLACK).clamp(0.0, 255.0) / 255.0
    mapping = glass_shuffle_maps(h, w, deltas, passes, offsets, max_delta, max_passes,
                                 images.device)
    index = mapping.unsqueeze(1).expand(batch, channels, h * w)
    shuffled = quantised.reshape(batch, channels, h * w).gather(2, index)
    return gaussian_blur_batch(shuffled.reshape(batch, channels, h, w), sigma, max_sigma)


def _round_half_up(name: str, param: str, values: np.ndarray) -> np.ndarray:
    return np.floor(_checked(name, param, values) + 0.5).astype(np.int64)


def glass_blur(images: torch.Tensor, params: dict[str, np.ndarray],
               seeds: Sequence[int]) -> torch.Tensor:
    """ImageNet-C glass blur: ``sigma`` (pixels), ``max_delta`` and ``iterations`` (rounded
    half up); offsets from the sample's seed (:func:`glass_offsets`)."""
    device = images.device
    _, _, h, w = images.shape
    sigma = _checked("glass_blur", "sigma", params["sigma"])
    deltas = _round_half_up("glass_blur", "max_delta", params["max_delta"])
    passes = _round_half_up("glass_blur", "iterations", params["iterations"])
    keys = philox.keys(seeds, device)

    def draw(samples: np.ndarray, k: int) -> torch.Tensor:
        index = torch.from_numpy(samples).to(device)
        return glass_offsets(keys[index], h, w, torch.from_numpy(deltas[samples]).to(device),
                             1, first=k)[:, 0]

    out = glass_blur_with(images, sigma, deltas, passes, draw,
                          domain_high("glass_blur", "sigma"),
                          round_int(domain_high("glass_blur", "max_delta")),
                          round_int(domain_high("glass_blur", "iterations")))
    return out.clamp(0.0, 1.0)


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
