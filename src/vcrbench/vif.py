"""Visual information fidelity (VIF) as the VCR paper computed it, batched in torch.

The wavelet-domain VIF of Sheikh & Bovik (2006) in the form of the Python port the paper used
(github.com/abhinavkumar/vif), re-implemented from its definition (docs/architecture.md, "VIF"):

* grayscale by OpenCV's (4.x and later) integer rule for ``cvtColor(COLOR_RGB2GRAY)`` on uint8,
  ``Y = (9798 R + 19235 G + 3735 B + 2**14) >> 15`` (0..255); OpenCV <= 3 used 14-bit weights
  ``(4899, 9617, 1868)``, which differ by one grey level for 0.26 % of colours;
* pyrtools' steerable pyramid ``SteerablePyramidSpace(img, height=4, order=5,
  edge_type='reflect1')`` (``sp5`` filters); orientations 0 and 3 of every level, coarsest level
  first; each sub-band cropped (top-left) to a multiple of M = 3;
* sub-band ``i`` (0..7) uses a local window of side ``2**ceil((i + 1) / 2) + 1`` (3, 3, 5, 5, 9,
  9, 17, 17), centred on each M x M block after reflecting the sub-band by ``(win - M) / 2``;
  local means, variances (``E[x^2] - mu^2``, negative -> 0) and covariance give the channel gain
  ``g = cov / (var_x + 1e-15)`` and noise ``sv^2 = var_y - g cov``, fixed up in the port's
  order (var_x < 1e-15: g = 0, sv^2 = var_y; var_y < 1e-15: g = sv^2 = 0; g < 0: sv^2 = var_y,
  g = 0; sv^2 floored at 1e-15);
* GSM model: ``C_u`` = unbiased covariance of all overlapping M x M neighbourhoods of the
  reference sub-band, eigenvalues floored at 1e-15, ``s = Y^T C_u^-1 Y / M^2`` per
  non-overlapping block (computed as ``|Y^T V diag(lambda)^-1/2|^2``; the port inverts
  ``V diag(lambda) V^T``: the same numbers, but that matrix is singular when a sub-band is
  exactly degenerate, e.g. on a linear ramp);
* ``ceil(((win - 1) / 2) / M)`` blocks dropped on every side, sigma_n^2 = 0.1;
* per sub-band ``num = sum_k mean(ln(1 + g^2 s lambda_k / (sv^2 + sigma_n^2)))`` and
  ``den = sum_k mean(ln(1 + s lambda_k / sigma_n^2))``;
  ``VIF = mean(num + 1e-4) / mean(den + 1e-4)`` over the 8 sub-bands.

Two precisions. ``exact``: float64 throughout (the pyramid by float64 FFT correlation, which
equals pyrtools' reflect1 ``corrDn`` up to rounding); within 1e-12 of the per-image reference.
``fast`` (default): the pyramid by float32 depthwise convolutions of the image minus its most
common grey level, everything after it (moments, covariances, eigenvalues, logs) in float64.
Float32 rounding matters only where the reference is nearly flat, where tiny coefficients with
huge gains carry O(1) terms: the offset makes the most common flat level exactly 0, and
position-independent convolution arithmetic keeps exactly flat areas exactly flat. Measured
|fast - exact| <= 8e-6 on 1,300 ImageNet pairs (the 14 corruptions at random parameters),
median 2e-8; tests/unit/test_vif.py checks <= 1e-4. Synthetic references whose sub-bands are
exactly degenerate (linear ramps) are ill-conditioned even in float64 and need ``exact``. Both
run on any torch device, ``chunk_size`` pairs at a time so that memory stays bounded.

The statistics work on all sub-bands of one pyramid level of a whole chunk at once (both
orientations stacked), so the number of tensor operations per chunk does not depend on the
number of pairs in it (on a GPU each is a kernel launch): about 2,100 torch profiler events per
chunk at 224 px (benchmarks/bench_vif.py --profile-events). On a CPU, chunks are computed in
passes of :data:`CPU_PASS_PIXELS`. A pair's value does not depend on the chunk or pass it is in.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from vcrbench.errors import VcrbenchError

M = 3  #: side of the GSM neighbourhoods (blocks of M x M coefficients)
SIGMA_NSQ = 0.1  #: variance of the HVS noise (the paper's port; Sheikh's MATLAB code uses 0.4)
TOL = 1e-15  #: "zero" for variances and eigenvalues, as in the port
MIN_SIDE = 72  #: smallest image side for which pyrtools builds the 4-level sp5 pyramid
LEVELS = 4  #: pyramid levels of the paper's VIF
PRECISIONS = ("fast", "exact")
#: pyrtools keys ``(level, orientation)`` of the sub-bands used, coarsest level first (the port
#: lists orientation 3 before 0 within a level; VIF, a mean over sub-bands, does not care)
SUBBANDS = ((3, 0), (3, 3), (2, 0), (2, 3), (1, 0), (1, 3), (0, 0), (0, 3))
#: side of the local window of each sub-band: 2**lev + 1 with lev = ceil((i + 1) / 2)
WINDOWS = tuple(2 ** math.ceil((i + 1) / 2) + 1 for i in range(len(SUBBANDS)))
#: side of the sp5 filters: a pyramid of L levels needs ``_SP5_SIDE * 2 ** (L - 1)`` px
_SP5_SIDE = 9


def subbands(levels: int = LEVELS) -> tuple[tuple[int, int], ...]:
    """The sub-bands of an ``levels``-level pyramid, coarsest first (:data:`SUBBANDS` for 4)."""
    return tuple((level, o) for level in reversed(range(levels)) for o in (0, 3))


def windows(levels: int = LEVELS) -> tuple[int, ...]:
    """The port's window side of each sub-band of :func:`subbands` (by position in the list)."""
    return tuple(2 ** math.ceil((i + 1) / 2) + 1 for i in range(2 * levels))


def min_side(levels: int = LEVELS) -> int:
    """Smallest image side (px) for which pyrtools builds an sp5 pyramid of ``levels`` levels."""
    return _SP5_SIDE * 2 ** (levels - 1)


#: On a CPU, at most this many distorted-image pixels per pass (8 pairs at 224 px; None: whole
#: chunks, as on other devices). A pass's statistics are whole-tensor operations, so their
#: count does not grow with its pairs; on a CPU, larger passes fall out of cache and get slower
#: (benchmarks/bench_vif.py --profile-events: 32 pairs of 224 px in one pass take 1.3-1.6x the
#: CPU time per pair of 8, and 2.7x the memory).
CPU_PASS_PIXELS: int | None = 8 * 224 * 224
_GRAY_WEIGHTS = (9798, 19235, 3735)  # OpenCV 4's fixed-point RGB -> gray, 15 fractional bits
_GRAY_SHIFT = 15
_SMALL_SUBBAND = 64 * 64  # sub-band size up to which C_u comes from one matrix product


# --------------------------------------------------------------------------- grayscale


def rgb_to_gray(images: torch.Tensor, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """(B, 3, H, W) uint8 RGB -> (B, H, W) gray in 0..255 (float64, or ``dtype``), bit-exact to
    OpenCV's ``cvtColor(..., COLOR_RGB2GRAY)``: ``(9798 R + 19235 G + 3735 B + 2**14) >> 15``.

    Computed in floating point: every intermediate is an integer below 2**24, exact even in
    float32.
    """
    if images.ndim != 4 or images.shape[1] != 3 or images.dtype != torch.uint8:
        raise VcrbenchError(
            f"rgb_to_gray expects (B, 3, H, W) uint8 RGB, got {tuple(images.shape)} {images.dtype}"
        )
    c = images.to(dtype)
    r, g, b = _GRAY_WEIGHTS
    y = c[:, 0] * r
    y.add_(c[:, 1], alpha=g).add_(c[:, 2], alpha=b).add_(2 ** (_GRAY_SHIFT - 1))
    return y.mul_(2.0**-_GRAY_SHIFT).floor_()


def _checked(images: torch.Tensor | np.ndarray, name: str) -> torch.Tensor:
    """Input images as a tensor (numpy shares memory), after checking shape and type."""
    if isinstance(images, np.ndarray):
        images = torch.from_numpy(np.require(images, requirements=["C", "W"]))
    if not isinstance(images, torch.Tensor):
        raise VcrbenchError(f"{name}: expected a torch tensor or numpy array, got {type(images)}")
    if images.ndim == 4:
        if images.shape[1] != 3 or images.dtype != torch.uint8:
            raise VcrbenchError(
                f"{name}: 4-D input must be (B, 3, H, W) uint8 RGB, "
                f"got {tuple(images.shape)} {images.dtype}"
            )
    elif images.ndim == 3:
        if images.dtype == torch.bool or images.is_complex():
            raise VcrbenchError(f"{name}: grayscale must be real 0..255, got {images.dtype}")
    else:
        raise VcrbenchError(
            f"{name}: expected (B, 3, H, W) uint8 RGB or (B, H, W) grayscale 0..255, "
            f"got shape {tuple(images.shape)}"
        )
    return images


def _gray(images: torch.Tensor, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    """Checked images -> (B, H, W) gray 0..255 of ``dtype`` on ``device``."""
    images = images.to(device)
    return rgb_to_gray(images, dtype) if images.ndim == 4 else images.to(dtype)


# --------------------------------------------------------------------------- pyramid


@functools.cache
def _sp5_filters() -> dict[str, np.ndarray]:
    """pyrtools' sp5 filters, oriented as ``SteerablePyramidSpace`` uses them (float64)."""
    from pyrtools.pyramids.filters import parse_filter

    f = parse_filter("sp5_filters", normalize=False)
    side = int(round(math.sqrt(f["bfilts"].shape[0])))
    bands = [np.asarray(f["bfilts"][:, o]).reshape(side, side).T for _, o in SUBBANDS[:2]]
    return {
        "lo0": np.asarray(f["lo0filt"], dtype=np.float64),
        "lo": np.asarray(f["lofilt"], dtype=np.float64),
        "b0": bands[0],
        "b1": bands[1],
    }


def _full_convolution(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Full 2-D convolution: correlating with ``a`` then ``b`` equals correlating with this."""
    out = np.zeros((a.shape[0] + b.shape[0] - 1, a.shape[1] + b.shape[1] - 1))
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i : i + b.shape[0], j : j + b.shape[1]] += a[i, j] * b
    return out


def _centred(kernel: np.ndarray, side: int) -> np.ndarray:
    out = np.zeros((side, side))
    o = (side - kernel.shape[0]) // 2
    out[o : o + kernel.shape[0], o : o + kernel.shape[1]] = kernel
    return out


@functools.cache
def _fft_kernels() -> tuple[np.ndarray, ...]:
    """Stacked correlation kernels per pyramid level for the FFT pyramid: (bands 0, 3[, low]).

    Level 0 folds lo0 into every kernel: lo0 is symmetric about its centre, so reflect1 padding
    of its output equals its output on the reflect1-padded image, and correlating twice equals
    correlating once with the full convolution of the two kernels.
    """
    f = _sp5_filters()
    level0 = [_full_convolution(f["lo0"], k) for k in (f["b0"], f["b1"], f["lo"])]
    middle = np.stack([_centred(f["b0"], 9), _centred(f["b1"], 9), f["lo"]])
    return (
        np.stack([_centred(k, 13) for k in level0]),
        middle,
        middle,
        np.stack([f["b0"], f["b1"]]),  # coarsest level: no further low-pass needed
    )


def _fft_size(n: int) -> int:
    """Smallest m >= n whose only prime factors are 2, 3 and 5."""
    m = n
    while True:
        r = m
        for p in (2, 3, 5):
            while r % p == 0:
                r //= p
        if r == 1:
            return m
        m += 1


def _pyramid_fft(images: torch.Tensor, levels: int = LEVELS) -> list[torch.Tensor]:
    """(C, H, W) float64 -> per level, coarsest first, its sub-bands of orientations 0 and 3
    stacked: (C, 2, h, w) each (:func:`subbands` order), by float64 FFT."""
    out_levels: list[torch.Tensor] = []
    u = images
    for level in range(levels):
        kernels = _fft_kernels()[level]
        pad = kernels.shape[-1] // 2
        h, w = u.shape[-2:]
        size = (_fft_size(h + 2 * pad), _fft_size(w + 2 * pad))
        padded = F.pad(u[None], (pad, pad, pad, pad), mode="reflect")[0]
        spectrum = torch.fft.rfft2(padded, s=size)
        del padded
        k = torch.fft.rfft2(torch.as_tensor(kernels, dtype=u.dtype, device=u.device), s=size)
        # circular correlation: no wrap-around reaches the first (h, w) outputs; one kernel at
        # a time, keeping copies of the crops, so that only one full-size product is alive
        out = [torch.fft.irfft2(spectrum * kk.conj(), s=size)[..., :h, :w].clone() for kk in k]
        out_levels.append(torch.stack(out[:2], 1))
        if level < levels - 1:
            u = out[2][:, ::2, ::2]
    return out_levels[::-1]


def _depthwise(u: torch.Tensor, kernel: torch.Tensor, stride: int = 1,
               padded: bool = False) -> torch.Tensor:
    """Correlate every channel of (1, C, H, W) with one odd square kernel, reflect1 edges
    (``padded``: u is already reflect-padded by the kernel's half side)."""
    p = kernel.shape[-1] // 2
    c = u.shape[1]
    weight = kernel.expand(c, 1, *kernel.shape).contiguous()
    u = u if padded else F.pad(u, (p, p, p, p), mode="reflect")
    return F.conv2d(u, weight, stride=stride, groups=c)


def _pyramid_direct(images: torch.Tensor, levels: int = LEVELS) -> list[torch.Tensor]:
    """(C, H, W) float -> per level, coarsest first, its sub-bands of orientations 0 and 3
    stacked: (C, 2, h, w) each (:func:`subbands` order), by direct convolution.

    pyrtools' corrDn with reflect1 edges: reflect padding, then correlation with the kernel
    centred (step 2 starting at 0 for the low-pass). One filter per call, images as channels:
    depthwise convolution is the fast CPU path for single-channel images (two filters in one
    grouped call are ~3x slower); the two band filters share one padded copy.
    """
    f = {k: torch.as_tensor(v, dtype=images.dtype, device=images.device)
         for k, v in _sp5_filters().items()}
    out: list[torch.Tensor] = []
    lo = _depthwise(images[None], f["lo0"])
    p = f["b0"].shape[-1] // 2
    for level in range(levels):
        padded = F.pad(lo, (p, p, p, p), mode="reflect")
        out.append(torch.stack([_depthwise(padded, f[b], padded=True)[0] for b in ("b0", "b1")],
                               1))
        del padded
        if level < levels - 1:
            lo = _depthwise(lo, f["lo"], stride=2)
    return out[::-1]


# --------------------------------------------------------------------------- statistics
#
# Everything below works on all sub-bands of one pyramid level of a whole chunk at once (the
# two orientations stacked: the same size and window): the number of tensor operations per
# chunk does not depend on the number of pairs (on a GPU each is a kernel launch). Window sums are
# direct sums of at most ``win`` terms along one axis at a time, so that local variances near
# flat areas keep float64's accuracy; every per-pair number is computed by the same arithmetic
# whatever else is in the chunk (tests/unit/test_vif.py checks the bytes).


def _row_window_sums(a: torch.Tensor, win: int) -> torch.Tensor:
    """Sums of ``win`` consecutive rows of a (P, h, w) for windows starting at rows 0, M,
    2M, ...: (P, (h - win) // M + 1, w), each a direct sum of win terms (one reduction, across
    the contiguous rows: vectorised along them)."""
    return a.unfold(1, win, M).sum(-1)


def _level_fields(band: torch.Tensor, r: int, pairs: torch.Tensor, win: int, lam: torch.Tensor,
                  vec: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """What the VIF terms of one pyramid level need, cropped by the port's ``ceil(((win - 1) /
    2) / M)`` blocks on every side and flattened: the GSM field s of the references (R, Q) and
    ``g^2 / (sv^2 + sigma_n^2)`` of the pairs (P, Q), float64.

    ``band`` (R + P, h, w): the level's sub-bands (h, w multiples of M), the R references x
    then the P distorted images y, pair k being ``(x[pairs[k]], y[k])``; ``lam``, ``vec``: the
    eigenvalues (R, M*M) and eigenvectors of the references' C_u. The references' own local
    moments are summed once each.
    """
    p, o = (win - M) // 2, math.ceil((win - 1) / 2 / M)
    h, w = band.shape[-2:]
    # float64, reflected by p on every side (np.pad(mode='reflect')): padding commutes with the
    # products; sums down the columns (M-fold fewer rows) one moment at a time (one full-size
    # product alive), then along the rows
    xyp = F.pad(band, (p, p, p, p), mode="reflect").to(torch.float64)
    s = _gsm_field(xyp[:r, p : p + h, p : p + w], lam, vec)[:, o:-o, o:-o].flatten(1)
    if s.shape[1] == 0:  # guarded by MIN_SIDE; kept so that a change there cannot yield NaN
        raise VcrbenchError(f"sub-band of {h}x{w} too small for VIF")
    xp, yp = xyp[:r], xyp[r:]
    cols = [_row_window_sums(xp, win), _row_window_sums(xp * xp, win),
            _row_window_sums(yp, win), _row_window_sums(yp * yp, win),
            _row_window_sums(xp[pairs].mul_(yp), win)]
    del xyp, xp, yp
    sums = torch.cat(cols).unfold(2, win, M).sum(-1) / float(win * win)  # (2R + 3P, h/M, w/M)
    del cols
    g, sv = _channel(sums, r, pairs)
    return s, (g * g / (sv + SIGMA_NSQ))[:, o:-o, o:-o].flatten(1)


def _channel(sums: torch.Tensor, r: int, pairs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Distortion channel gain g and noise variance sv^2 per block: (P, h/M, w/M) each, from
    the local window means ``sums`` (2R + 3P, h/M, w/M) of x, x^2 (the R references), y, y^2
    and x y (the P pairs, x = reference ``pairs[k]``)."""
    mu_x, ex2 = sums[: 2 * r].unflatten(0, (2, r))[:, pairs].unbind(0)
    mu_y, ey2, exy = sums[2 * r :].unflatten(0, (3, -1)).unbind(0)
    var_x = ex2 - mu_x * mu_x
    var_y = ey2 - mu_y * mu_y
    cov = torch.where((var_x < 0) | (var_y < 0), 0.0, exy - mu_x * mu_y)
    var_x = var_x.clamp_min(0)
    var_y = var_y.clamp_min(0)
    # the port's fix-ups in its order: var_x < TOL: g = 0, sv = var_y; then var_y < TOL:
    # g = sv = 0; then g < 0 (only where neither was flat): sv = var_y, g = 0; sv >= TOL
    g = cov / (var_x + TOL)
    flat_y = var_y < TOL
    to_var_y = (var_x < TOL) | (g < 0)
    sv = torch.where(flat_y, 0.0, torch.where(to_var_y, var_y, var_y - g * cov))
    g = torch.where(to_var_y | flat_y, 0.0, g)
    return g, sv.clamp_min(TOL)


_OFFSETS = [(a, b) for a in range(M) for b in range(M)]  # element order of a neighbourhood
#: "forward" lags o_j - o_i (i <= j) between neighbourhood elements, row-major
_LAGS = sorted({(aj - ai, bj - bi) for i, (ai, bi) in enumerate(_OFFSETS)
                for aj, bj in _OFFSETS[i:]})


@functools.cache
def _lag_plan(h: int, w: int, device: torch.device) -> tuple:
    """For the mean and covariance of the M x M neighbourhoods of an h x w sub-band: which
    rectangle sums of which "line" fill which entries (:func:`_neighbourhood_cov`).

    Image 0 is the sub-band itself, image 1 + l the product image of lag l = (dr, dc) of
    :data:`_LAGS`, x[r, c] x[r + dr, c + dc] at (r, c), zero where that leaves the sub-band:
    all h x w. Entry i of the mean sums image 0, entry (i, j) (i <= j) of the second moments
    sums the image of lag o_j - o_i, over the (h - M + 1) x (w - M + 1) rectangle at o_i,
    which misses at most M - 1 of the rows and columns. A rectangle's sum is the full-width
    row sums minus the edge columns it leaves out, prefix-summed along the rows and differenced.
    Returns tensors on ``device``: per entry (E = 9 + 45) the flat index of its rectangle's
    last row and of the row before it (any row when there is none), whether there is one
    (E, 1), the column weights (E, 1 + 2 (M - 1)); the entry of each (i, j) of the second
    moments (81,); the lags' places in the (dr, dc) grid of :func:`_neighbourhood_cov` (13,).
    """
    hr, wr = h - M + 1, w - M + 1
    edge = list(range(M - 1)) + list(range(w - M + 1, w))
    entries = [(0, a, b) for a, b in _OFFSETS]
    second = np.zeros((len(_OFFSETS), len(_OFFSETS)), dtype=np.int64)
    for i, (ai, bi) in enumerate(_OFFSETS):
        for j in range(i, len(_OFFSETS)):
            aj, bj = _OFFSETS[j]
            second[i, j] = second[j, i] = len(entries)
            entries.append((1 + _LAGS.index((aj - ai, bj - bi)), ai, bi))
    image, start, col = (np.array(t) for t in zip(*entries, strict=True))
    weights = np.zeros((len(entries), 1 + len(edge)))
    weights[:, 0] = 1
    for k, c0 in enumerate(col):
        for c in (*range(c0), *range(c0 + wr, w)):
            weights[k, 1 + edge.index(c)] -= 1
    grid = [dr * (2 * M - 1) + dc + M - 1 for dr, dc in _LAGS]
    return tuple(torch.as_tensor(t, device=device) for t in (
        image * h + start + hr - 1,  # last row of each rectangle
        image * h + np.maximum(start - 1, 0),  # row before it (any row when there is none)
        (start > 0).astype(np.float64)[:, None],
        weights,
        second.ravel() - len(_OFFSETS),
        grid,
    ))


def _neighbourhood_cov(x: torch.Tensor) -> torch.Tensor:
    """Unbiased covariance of all overlapping M x M neighbourhoods of x (N, h, w): (N, 9, 9).

    ``np.cov`` of the (positions x 9) matrix, as second moments minus the mean's outer product
    (the sub-bands have mean ~0: no cancellation). Large sub-bands skip building that matrix
    (9 copies of x): one product image per lag, whose rectangle sums fill the matrix
    (:func:`_lag_plan`).
    """
    n, h, w = x.shape
    if h * w <= _SMALL_SUBBAND:  # few coefficients: one matrix product beats 13 product images
        vectors = x.unfold(1, M, 1).unfold(2, M, 1).reshape(n, -1, M * M)
        count = vectors.shape[1]
        mean = vectors.mean(1)
        second = torch.bmm(vectors.transpose(1, 2), vectors)
        return (second - count * mean[:, :, None] * mean[:, None, :]) / (count - 1)
    count, e = (h - M + 1) * (w - M + 1), M - 1
    last, before, has_before, weights, second, grid = _lag_plan(h, w, x.device)
    # x zero-padded by M - 1 columns on both sides and rows below: x[r + dr, c + dc] of lag
    # (dr, dc) is padded[r + dr, c + dc + M - 1], a strided view; products leaving x vanish
    padded = F.pad(x, (e, e, 0, e))
    wp, base = padded.shape[-1], padded.storage_offset()
    product = torch.empty_like(x)  # reused for every lag: fresh large allocations page-fault
    row_sums = [x.sum(-1)]
    for dr, dc in _LAGS:
        shifted = padded.as_strided(x.shape, padded.stride(), base + dr * wp + dc + e)
        row_sums.append(torch.mul(x, shifted, out=product).sum(-1))
    del product
    # the edge columns of every (dr, dc) in [0, M) x (-M, M) at once: (N, M, 2M - 1, h, 2e)
    strips = [padded.as_strided((n, M, 2 * e + 1, h, e), (padded.stride(0), wp, 1, wp, 1),
                                base + c0) for c0 in (0, w - e)]
    edges = torch.cat([x[:, None, None, :, :e] * strips[0], x[:, None, None, :, w - e :]
                       * strips[1]], -1).flatten(1, 2).index_select(1, grid)
    edges = torch.cat([torch.cat([x[:, None, :, :e], x[:, None, :, w - e :]], -1), edges], 1)
    lines = torch.cat([torch.stack(row_sums, 1)[..., None], edges], -1)  # (N, 14, h, 1 + 2e)
    prefix = lines.cumsum(2).flatten(1, 2)  # (N, images * h, 1 + edges)
    spans = prefix[:, last] - prefix[:, before] * has_before
    sums = (spans * weights).sum(-1)
    mean = sums[:, : len(_OFFSETS)] / count
    moments = sums[:, len(_OFFSETS) :][:, second].view(n, len(_OFFSETS), len(_OFFSETS))
    return (moments - count * mean[:, :, None] * mean[:, None, :]) / (count - 1)


def _gsm_field(x: torch.Tensor, lam: torch.Tensor, vec: torch.Tensor) -> torch.Tensor:
    """GSM multiplier field s (N, h/M, w/M) of sub-bands x (N, h, w), given the eigenvalues
    lam (N, M*M, floored) and eigenvectors vec (N, M*M, M*M) of their C_u."""
    n, h, w = x.shape
    # s = Y^T C_u^-1 Y / M^2 for every non-overlapping block Y, with C_u^-1 = V diag(1/lam) V^T
    # written as |Y^T V diag(lam^-1/2)|^2: never negative, even when C_u is singular
    blocks = x.reshape(n, h // M, M, w // M, M).permute(0, 1, 3, 2, 4).reshape(n, -1, M * M)
    whitened = torch.bmm(blocks, vec * lam.rsqrt()[:, None, :])
    s = (whitened * whitened).sum(-1) / (M * M)
    return s.reshape(n, h // M, w // M)


def _elementary_symmetric(lam: torch.Tensor) -> torch.Tensor:
    """e_0 .. e_K of lam (N, K) along K: coefficients of prod_k (1 + lam_k t), (N, K + 1)."""
    e = [torch.ones_like(lam[:, 0])]
    for j, lj in enumerate(lam.unbind(1)):  # multiply by (1 + lam_j t)
        e.append(lj * e[j])
        for m in range(j, 0, -1):
            e[m] = torch.addcmul(e[m], lj, e[m - 1])
    return torch.stack(e, 1)


def _sum_log1p(a: torch.Tensor, lam: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
    """sum_k ln(1 + a lam_k) for a (N, Q) >= 0, lam (N, K) > 0, e (N, K + 1) its elementary
    symmetric polynomials: (N, Q).

    One logarithm instead of K: ln(1 + P(a)) with P(a) = prod_k (1 + a lam_k) - 1
    = sum_m e_m a^m by Horner's rule. All terms are positive, so this is as accurate as the
    sum of logarithms; entries whose product overflows fall back to it.
    """
    coefficients = e[:, :, None].unbind(1)  # each (N, 1)
    k = len(coefficients) - 1
    p = coefficients[k].expand_as(a)
    for m in range(k - 1, 0, -1):
        p = torch.addcmul(coefficients[m], p, a)
    out = torch.log1p(p * a)
    bad = ~torch.isfinite(out)
    if bad.any():
        rows = bad.nonzero()[:, 0]
        out[bad] = torch.log1p(a[bad][:, None] * lam[rows]).sum(-1)
    return out


def _crop(band: torch.Tensor) -> torch.Tensor:
    """Sub-bands (..., h, w) cropped (top-left) to multiples of M."""
    return band[..., : band.shape[-2] // M * M, : band.shape[-1] // M * M]


def _most_common_level(images: torch.Tensor) -> torch.Tensor:
    """The most frequent rounded grey level (0..255) of each (C, H, W) image: (C,)."""
    levels = images.round().clamp(0, 255).to(torch.int64).flatten(1)
    levels = levels + 256 * torch.arange(len(images), device=images.device)[:, None]
    counts = torch.bincount(levels.flatten(), minlength=256 * len(images)).view(-1, 256)
    return counts.argmax(1).to(images.dtype)


def _vif_gray(ref: torch.Tensor, dist: torch.Tensor, precision: str, levels: int = LEVELS,
              ref_of: torch.Tensor | None = None) -> torch.Tensor:
    """VIF of N pairs of gray images (float64 for exact, float32 for fast): (N,).

    ``ref`` (U, H, W), ``dist`` (N, H, W); pair i is ``(ref[ref_of[i]], dist[i])`` (``ref_of``
    (N,) int64; None: U = N and pair i uses ``ref[i]``). Everything that depends on the
    reference alone (its pyramid, the GSM field, C_u's eigenvalues, ``den``, its local moments)
    is computed once per reference, however many pairs share it. The whole chunk at once,
    level by level (both orientations together); one eigendecomposition call for all C_u.
    """
    u, n = ref.shape[0], dist.shape[0]
    if ref_of is None:
        ref_of = torch.arange(n, device=ref.device)
    both = torch.cat([ref, dist])
    if precision == "exact":
        stacked = _pyramid_fft(both, levels)
    else:
        # the band filters sum to 0, so removing a grey level from an image changes nothing
        # but the float32 rounding, which scales with |grey - offset|: removing the most common
        # level makes a uniform background exactly 0, and so the tiny coefficients next to it,
        # where VIF is most sensitive, come out with small relative errors
        offset = _most_common_level(both)
        tf32 = torch.backends.cudnn.allow_tf32
        torch.backends.cudnn.allow_tf32 = False  # TF32 would cost 3 decimal digits on GPUs
        try:
            stacked = _pyramid_direct(both - offset[:, None, None], levels)
        finally:
            torch.backends.cudnn.allow_tf32 = tf32
    del both
    # per level: sub-bands (2 (U + N), h, w) cropped; references' rows 2 r + o, pairs' 2 i + o
    # (o: the orientation's place)
    stacked = [_crop(b).flatten(0, 1) for b in stacked]
    pairs = (2 * ref_of[:, None] + torch.arange(2, device=ref.device)).flatten()
    rows = torch.cat([torch.arange(2 * u, device=ref.device), pairs])

    lam, vec = torch.linalg.eigh(torch.cat([_neighbourhood_cov(b[: 2 * u].to(torch.float64))
                                            for b in stacked]))
    lam = lam.clamp_min(TOL)
    e = _elementary_symmetric(lam)
    lam, vec, e = (t.unflatten(0, (levels, 2 * u)) for t in (lam, vec, e))
    nums, dens = [], []
    for k, win in enumerate(windows(levels)[::2]):
        s, gain = _level_fields(stacked[k], 2 * u, pairs, win, lam[k], vec[k])
        stacked[k] = None  # this level's sub-bands are no longer needed
        # den (references) and num (pairs) in one pass; means as sums / count
        a = torch.cat([s / SIGMA_NSQ, gain * s[pairs]])
        terms = _sum_log1p(a, lam[k][rows], e[k][rows]).sum(1) / a.shape[1]
        dens.append(terms[: 2 * u].view(u, 2))
        nums.append(terms[2 * u :].view(n, 2))
    num, den = torch.cat(nums, 1), torch.cat(dens, 1)[ref_of]
    return (num + 1e-4).sum(1) / (den + 1e-4).sum(1)  # the means' common 1 / (2 levels) cancels


# --------------------------------------------------------------------------- public API


def vif(
    reference: torch.Tensor | np.ndarray,
    distorted: torch.Tensor | np.ndarray,
    *,
    precision: str = "fast",
    device: str | torch.device | None = None,
    chunk_size: int = 32,
    levels: int = LEVELS,
    reference_index: Sequence[int] | np.ndarray | None = None,
) -> np.ndarray:
    """VIF of each pair of same-size images: (B,) float64, 1 for identical images.

    ``reference``, ``distorted``: (B, 3, H, W) uint8 RGB, or (B, H, W) grayscale 0..255 (uint8 or
    float), with min(H, W) >= ``min_side(levels)``. ``precision``: ``"fast"`` (float32 pyramid,
    float64 statistics) or ``"exact"`` (float64 throughout). ``device``: where to compute
    (default: the reference's device, CPU for numpy input). ``chunk_size``: pairs computed at
    once (on a CPU at most :data:`CPU_PASS_PIXELS` worth, 8 pairs at 224 px), each step one
    tensor operation for all of them; memory grows about linearly with it. A pair's value does
    not depend on the chunk it is computed in (the same bytes on the same device and torch
    build). Pairs whose grayscale images are equal get exactly 1.0. ``levels``: pyramid
    levels, the paper's 4 by default; fewer for small images (2 x ``levels`` sub-bands, the
    port's windows by position in the list, :func:`windows`), which need ``min_side(levels)``
    px (72 for 4, 18 for 2).

    ``reference_index`` (B,): pair i is ``(reference[reference_index[i]], distorted[i])``, so
    that ``reference`` holds each reference image once (U images); pairs are then computed
    grouped by reference and each reference's share of the work (its pyramid and GSM
    statistics) is done once per chunk (pass) instead of once per pair. The values are those of
    the pairs written out (the same bytes).
    """
    if precision not in PRECISIONS:
        raise VcrbenchError(f"vif: precision {precision!r} is not one of {PRECISIONS}")
    if chunk_size < 1:
        raise VcrbenchError(f"vif: chunk_size must be >= 1, got {chunk_size}")
    ref = _checked(reference, "reference")
    dist = _checked(distorted, "distorted")
    index = _reference_index(reference_index, ref.shape, dist.shape)
    if dist.shape[0] == 0:
        return np.empty(0, dtype=np.float64)
    height, width = ref.shape[-2:]
    if not 1 <= levels <= LEVELS:
        raise VcrbenchError(f"vif: levels must be 1 to {LEVELS}, got {levels}")
    if min(height, width) < min_side(levels):
        raise VcrbenchError(
            f"vif: images of {height}x{width} px are too small; VIF's {levels}-level steerable "
            f"pyramid needs at least {min_side(levels)} px on each side"
        )
    device = torch.device(device if device is not None else ref.device)
    dtype = torch.float64 if precision == "exact" else torch.float32
    if device.type == "cpu" and CPU_PASS_PIXELS is not None:  # cache-sized passes
        chunk_size = min(chunk_size, max(1, CPU_PASS_PIXELS // (height * width)))
    out = np.empty(dist.shape[0], dtype=np.float64)
    order = np.argsort(index, kind="stable")  # pairs of one reference next to each other
    for start in range(0, len(order), chunk_size):
        rows = order[start : start + chunk_size]
        used, inverse = np.unique(index[rows], return_inverse=True)
        r = _gray(ref[torch.as_tensor(used)], device, dtype)
        d = _gray(dist[torch.as_tensor(rows)], device, dtype)
        ref_of = torch.as_tensor(inverse.reshape(-1), device=device)
        identical = (r[ref_of] == d).flatten(1).all(1)
        values = _vif_gray(r, d, precision, levels, ref_of)
        values = torch.where(identical, torch.ones_like(values), values)
        out[rows] = values.cpu().numpy()
    return out


def _reference_index(index: Sequence[int] | np.ndarray | None, ref_shape: torch.Size,
                     dist_shape: torch.Size) -> np.ndarray:
    """Each distorted image's reference (B,) int64, after checking shapes (None: pair i is
    reference i, and both hold the same number of images)."""
    if index is None:
        if ref_shape != dist_shape:
            raise VcrbenchError(
                f"vif: reference and distorted differ in shape: {tuple(ref_shape)} vs "
                f"{tuple(dist_shape)} (pairs must be the same size, in the same number)"
            )
        return np.arange(dist_shape[0], dtype=np.int64)
    if ref_shape[1:] != dist_shape[1:]:
        raise VcrbenchError(
            f"vif: reference and distorted images differ in shape: {tuple(ref_shape[1:])} vs "
            f"{tuple(dist_shape[1:])} (the images of a pair must be the same size)"
        )
    index = np.asarray(index.cpu() if isinstance(index, torch.Tensor) else index)
    if index.size == 0:
        index = index.astype(np.int64)
    if index.shape != (dist_shape[0],) or not np.issubdtype(index.dtype, np.integer):
        raise VcrbenchError(
            f"vif: reference_index must hold one integer per distorted image ({dist_shape[0]}), "
            f"got shape {index.shape} {index.dtype}"
        )
    if index.size and (index.min() < 0 or index.max() >= ref_shape[0]):
        raise VcrbenchError(
            f"vif: reference_index points outside the {ref_shape[0]} reference images "
            f"(values {index.min()} to {index.max()})"
        )
    return index.astype(np.int64, copy=False)


def delta_v(vif_values: np.ndarray) -> np.ndarray:
    """Visual change Δv = max(0, 1 - VIF), float64 of the same shape."""
    return np.maximum(0.0, 1.0 - np.asarray(vif_values, dtype=np.float64))


def _read_rgb(path: str) -> np.ndarray:
    """An image file as (3, H, W) uint8 RGB."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            rgb = np.asarray(image.convert("RGB"))
    except FileNotFoundError as err:
        raise VcrbenchError(f"vif: image file {path} does not exist") from err
    except (UnidentifiedImageError, OSError) as err:
        raise VcrbenchError(f"vif: cannot read {path} as an image ({err})") from err
    return np.ascontiguousarray(rgb.transpose(2, 0, 1))


def vif_files(pairs: Sequence[tuple[str, str]], precision: str = "fast") -> list[dict]:
    """VIF and Δv of image files, one dict per (reference, distorted) pair, in order:
    ``{"reference": str, "distorted": str, "vif": float, "dv": float}``.

    Images are read with PIL and converted to RGB; the two images of a pair must be the same
    size. Pairs of equal size are scored together.
    """
    images = []
    for ref_path, dist_path in pairs:
        ref, dist = _read_rgb(str(ref_path)), _read_rgb(str(dist_path))
        if ref.shape != dist.shape:
            raise VcrbenchError(
                f"vif: {ref_path} is {ref.shape[2]}x{ref.shape[1]} px but {dist_path} is "
                f"{dist.shape[2]}x{dist.shape[1]} px; the images of a pair must be the same size"
            )
        images.append((ref, dist))
    values = np.empty(len(images), dtype=np.float64)
    by_size: dict[tuple[int, ...], list[int]] = {}
    for i, (ref, _) in enumerate(images):
        by_size.setdefault(ref.shape, []).append(i)
    for idx in by_size.values():
        refs = np.stack([images[i][0] for i in idx])
        dists = np.stack([images[i][1] for i in idx])
        values[idx] = vif(refs, dists, precision=precision)
    dvs = delta_v(values)
    return [
        {"reference": str(r), "distorted": str(d), "vif": float(v), "dv": float(dv)}
        for (r, d), v, dv in zip(pairs, values, dvs, strict=True)
    ]


#: How :func:`vif_small` scores images too small for the 4-level pyramid.
SMALL_IMAGE_METHODS = ("enlarge", "pyramid")
#: Side (px) ``enlarge`` scores at: the paper's image size.
ENLARGED_SIDE = 224


def enlarge(images: np.ndarray, side: int = ENLARGED_SIDE) -> np.ndarray:
    """(B, 3, h, w) uint8 RGB -> (B, 3, side, side) uint8, Pillow's bicubic, for scoring only."""
    from PIL import Image

    out = np.empty((len(images), 3, side, side), np.uint8)
    for i, image in enumerate(images):
        pil = Image.fromarray(np.ascontiguousarray(image.transpose(1, 2, 0)))
        out[i] = np.asarray(pil.resize((side, side), Image.Resampling.BICUBIC)).transpose(2, 0, 1)
    return out


def vif_small(reference: np.ndarray, distorted: np.ndarray, *, method: str = "enlarge",
              precision: str = "fast", chunk_size: int = 32,
              device: str | torch.device | None = None,
              reference_index: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
    """VIF of pairs of small images (e.g. 32 x 32 CIFAR), (B,) float64.

    ``reference``, ``distorted``: (B, 3, h, w) uint8 RGB numpy arrays. ``method``:

    - ``enlarge`` (default): the paper's VIF (4 levels) on both images enlarged to 224 x 224 px
      by Pillow's bicubic filter, for scoring only;
    - ``pyramid``: the paper's VIF with as many pyramid levels as the size allows (2 at 32 px).

    The default was chosen from evidence (docs/cifar.md, "Δv at 32 px":
    ``calibration/dv_at_32px.py``): on shared ImageNet images corrupted at 224 px and reduced
    to 32 px, ``enlarge`` ranks the samples of each of the 14 VCR corruptions as the paper's Δv
    at 224 px does with Spearman 0.986 to 0.999 (pooled 0.992, mean |Δv difference| 0.06);
    the 2-level pyramid 0.950 to 0.996 (pooled 0.940, 0.20).
    """
    if method not in SMALL_IMAGE_METHODS:
        raise VcrbenchError(f"vif_small: method {method!r} is not one of {SMALL_IMAGE_METHODS}")
    reference, distorted = np.asarray(reference), np.asarray(distorted)
    if reference.ndim != 4 or reference.shape[1] != 3 or reference.dtype != np.uint8:
        raise VcrbenchError(f"vif_small: expected (B, 3, h, w) uint8 RGB, got "
                            f"{reference.shape} {reference.dtype}")
    if method == "enlarge":
        return vif(enlarge(reference), enlarge(distorted), precision=precision,
                   chunk_size=chunk_size, device=device, reference_index=reference_index)
    side = min(reference.shape[-2:])
    levels = max((lv for lv in range(1, LEVELS + 1) if min_side(lv) <= side), default=1)
    return vif(reference, distorted, precision=precision, chunk_size=chunk_size, levels=levels,
               device=device, reference_index=reference_index)


def vif_any_size(reference: np.ndarray, distorted: np.ndarray, *, small: str = "enlarge",
                 precision: str = "fast", chunk_size: int = 32,
                 device: str | torch.device | None = None,
                 reference_index: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
    """VIF of (B, 3, H, W) uint8 RGB pairs of any size: the paper's :func:`vif` where the
    4-level pyramid fits (``min_side(4)`` = 72 px and up: the same bytes as :func:`vif`), else
    :func:`vif_small` with method ``small`` (``scoring.small_images``). ``reference_index``: as
    for :func:`vif` (each reference once)."""
    reference, distorted = np.asarray(reference), np.asarray(distorted)
    if reference.ndim == 4 and min(reference.shape[-2:]) < min_side(LEVELS):
        return vif_small(reference, distorted, method=small, precision=precision,
                         chunk_size=chunk_size, device=device, reference_index=reference_index)
    return vif(reference, distorted, precision=precision, chunk_size=chunk_size, device=device,
               reference_index=reference_index)
