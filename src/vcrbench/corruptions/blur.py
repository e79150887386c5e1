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

Box and median blur (Albumentations) are batched too: each sample's odd ``ksize`` gives its own
filter matrices (box) or window counts (median), sized by the image and the domain's largest
kernel (:data:`BOX_KSIZE_MAX`, :data:`MEDIAN_KSIZE_MAX`). Median blur is an 8-bit operation (as
in Albumentations): exact integer threshold decomposition in torch on CUDA
(:func:`median_filter`), OpenCV per sample on the CPU (the same bytes, about 100x faster there).
Box and median blur draw nothing.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

import numpy as np
import torch

from vcrbench.core import philox
from vcrbench.corruptions.kernels import (
    banded_filter,
    border_index,
    defocus_kernels,
    fft_correlate,
    gaussian_taps_table,
    motion_extent,
    motion_kernels,
    replicate_filter_matrices,
    round_int,
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


#: The largest value each parameter of the four ImageNet-C blurs takes: the end of its registry
#: domain, or of its ``point_domain`` where that is wider (the registry builds both from this
#: table). Tap tables, filter matrices and FFT planes are sized by these, never by the batch.
DOMAIN_HIGH: dict[tuple[str, str], float] = {
    ("gaussian_blur", "sigma"): 40.0,
    ("defocus_blur", "radius"): 30.0,
    ("defocus_blur", "alias_blur"): 0.6,
    ("motion_blur", "radius"): 100.0,
    ("motion_blur", "sigma"): 60.0,
    ("glass_blur", "sigma"): 6.0,
    ("glass_blur", "max_delta"): 12.0,
    ("glass_blur", "iterations"): 4.0,
}


def domain_high(name: str, param: str) -> float:
    """The largest value corruption ``name`` accepts for ``param`` (:data:`DOMAIN_HIGH`)."""
    return DOMAIN_HIGH[(name, param)]


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
    out.index_copy_(0, short, banded_filter(images.index_select(0, short),
                                            taps.index_select(0, short)[:, centre], _BLOCK))
    out.index_copy_(0, long, _dense_gaussian(images.index_select(0, long),
                                             taps.index_select(0, long)))
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
        out.index_copy_(0, index, fft_correlate(images.index_select(0, index),
                                                kernels.index_select(0, index)[:, rows, cols],
                                                before, mode))
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
    if device.type == "cpu":
        parent = _chain_ends(parent, earlier.reshape(batch, height * width), rounds)
    else:
        for _ in range(rounds):
            parent = parent.gather(1, parent)
    return source.gather(1, parent)


def _chain_ends(parent: torch.Tensor, linked: torch.Tensor, rounds: int) -> torch.Tensor:
    """The ends of the chains of ``parent`` ``(B, N)`` (flat indices within each row; a pixel
    that is its own parent ends its chain; ``linked`` marks the others) after ``rounds`` of
    pointer jumping, on the pixels still linked to a linked pixel only (found with
    ``nonzero`` each round: a host synchronisation, so for the CPU, where chains are short
    and the full rounds cost most of the shuffle). In place: a pixel that reads a parent
    already moved this round jumps further, to a pixel of its own chain, so after as many
    rounds as the full jumping every pixel has reached the end of its chain, the same maps."""
    batch, n = parent.shape
    base = torch.arange(batch, device=parent.device).view(-1, 1) * n
    flat = (parent + base).view(-1)  # parents as flat indices into the whole batch
    active = linked.reshape(-1).nonzero().squeeze(1)
    for _ in range(rounds):
        up = flat.index_select(0, flat.index_select(0, active))
        flat.index_copy_(0, active, up)
        active = active.index_select(0, (flat.index_select(0, up) != up).nonzero().squeeze(1))
    return (flat.view(batch, n) - base)


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
            total.index_copy_(0, index, total.index_select(0, index).gather(1, step))
    return total


def glass_blur_with(images: torch.Tensor, sigma: np.ndarray, deltas: np.ndarray,
                    passes: np.ndarray,
                    offsets: torch.Tensor | Callable[[np.ndarray, int], torch.Tensor],
                    max_sigma: float, max_delta: int, max_passes: int) -> torch.Tensor:
    """ImageNet-C glass blur of each sample with given offsets (:func:`glass_shuffle_maps`):
    blur, truncate to uint8, shuffle, blur again; unclipped."""
    batch, channels, h, w = images.shape
    quantised = gaussian_blur_batch(images, sigma, max_sigma).mul(255.0)
    quantised.add_(_TRUNCATION_SLACK).floor_().clamp_(0.0, 255.0).div_(255.0)
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
        return glass_offsets(keys.index_select(0, index), h, w,
                             torch.from_numpy(deltas[samples]).to(device), 1, first=k)[:, 0]

    out = glass_blur_with(images, sigma, deltas, passes, draw,
                          domain_high("glass_blur", "sigma"),
                          round_int(domain_high("glass_blur", "max_delta")),
                          round_int(domain_high("glass_blur", "iterations")))
    return out.clamp(0.0, 1.0)


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
