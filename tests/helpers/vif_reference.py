"""Slow, per-image reference VIF written directly from the definition (docs/architecture.md,
"Contracts", VIF).

This is the wavelet-domain VIF of Sheikh & Bovik in the form of the Python port the VCR paper
used: pyrtools' own steerable pyramid (``sp5`` filters, 4 levels, reflect1 edges), orientations
0 and 3 of every level, M = 3 blocks, sigma_n^2 = 0.1, equal weight per sub-band. Everything is
float64 numpy on one image at a time; it exists to test :mod:`vcrbench.vif` and as the baseline
of ``benchmarks/bench_vif.py``. Statistics use sliding-window views so that every quantity reads
like its definition. It was checked once, outside the repository, against a transcription of the
port itself (integral-image moments, ``np.cov``, ``inv``): 1.3e-12 apart on 30 ImageNet pairs.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from pyrtools.pyramids import SteerablePyramidSpace

M = 3  # side of the GSM neighbourhood (blocks of M x M coefficients)
SIGMA_NSQ = 0.1  # variance of the HVS noise
TOL = 1e-15  # "zero" for variances and eigenvalues
# coarsest level first; orientations 0 and 3 of the 6 sp5 orientations
SUBBANDS = [(lev, ori) for lev in (3, 2, 1, 0) for ori in (0, 3)]


def gray(image: np.ndarray) -> np.ndarray:
    """(H, W, 3) uint8 RGB -> (H, W) float64 in 0..255 by OpenCV's RGB2GRAY; 2-D passes through."""
    if image.ndim == 3:
        image = cv2.cvtColor(np.ascontiguousarray(image, dtype=np.uint8), cv2.COLOR_RGB2GRAY)
    return np.asarray(image, dtype=np.float64)


def window_size(index: int) -> int:
    """Side of the local window of sub-band ``index`` of SUBBANDS: 2**ceil((index + 1) / 2) + 1."""
    lev = math.ceil((index + 1) / 2)
    return 2**lev + 1


def crop(band: np.ndarray) -> np.ndarray:
    """Top-left part of a sub-band whose sides are multiples of M."""
    h, w = band.shape
    return band[: h // M * M, : w // M * M]


def box_mean(a: np.ndarray, win: int) -> np.ndarray:
    """Means of ``a`` over win x win windows whose top-left corners are M apart (separably)."""
    rows = sliding_window_view(a, win, axis=0)[::M].mean(axis=-1)
    return sliding_window_view(rows, win, axis=1)[:, ::M].mean(axis=-1)


def channel_estimates(x: np.ndarray, y: np.ndarray, win: int) -> tuple[np.ndarray, np.ndarray]:
    """Gain g and noise variance sv^2 of the distortion channel, one value per M x M block.

    Local statistics over win x win windows centred on each block, after reflecting the
    (cropped) sub-band by (win - M) / 2 coefficients.
    """
    pad = (win - M) // 2
    xp, yp = np.pad(x, pad, mode="reflect"), np.pad(y, pad, mode="reflect")
    mu_x, mu_y = box_mean(xp, win), box_mean(yp, win)
    assert mu_x.shape == (x.shape[0] // M, x.shape[1] // M)
    var_x = box_mean(xp * xp, win) - mu_x**2
    var_y = box_mean(yp * yp, win) - mu_y**2
    cov = box_mean(xp * yp, win) - mu_x * mu_y
    neg = (var_x < 0) | (var_y < 0)
    var_x[var_x < 0] = 0
    var_y[var_y < 0] = 0
    cov[neg] = 0

    g = cov / (var_x + TOL)
    sv = var_y - g * cov
    flat_x = var_x < TOL
    g[flat_x] = 0
    sv[flat_x] = var_y[flat_x]
    var_x[flat_x] = 0
    flat_y = var_y < TOL
    g[flat_y] = 0
    sv[flat_y] = 0
    negative = g < 0
    sv[negative] = var_y[negative]
    g[negative] = 0
    sv[sv < TOL] = TOL
    return g, sv


def gsm_estimates(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Multiplier field s (one per M x M block) and the eigenvalues of C_u, for sub-band x."""
    # C_u: covariance (np.cov, unbiased) of all overlapping M x M neighbourhoods
    vectors = sliding_window_view(x, (M, M)).reshape(-1, M * M)
    cov = np.cov(vectors, rowvar=False)
    lam, vec = np.linalg.eigh(cov)
    lam[lam < TOL] = TOL
    # s: one per non-overlapping block, s = Y^T C_u^-1 Y / M^2 with C_u = V diag(lam) V^T, i.e.
    # sum_k (v_k . Y)^2 / lam_k (the port inverts V diag(lam) V^T instead: the same number on
    # real images, to 1e-12, but singular when the sub-band is exactly degenerate)
    h, w = x.shape
    blocks = x.reshape(h // M, M, w // M, M).transpose(0, 2, 1, 3).reshape(h // M, w // M, M * M)
    s = np.sum((blocks @ vec) ** 2 / lam, axis=-1) / (M * M)
    return s, lam


def vif_reference(reference: np.ndarray, distorted: np.ndarray, levels: int = 4) -> float:
    """VIF of one pair: (H, W, 3) uint8 RGB or (H, W) gray 0..255 each; a Python float.

    ``levels``: pyrtools' pyramid height (the paper's 4); orientations 0 and 3 of each level,
    coarsest first, windows by position in that list, as the port does for height 4.
    """
    x_img, y_img = gray(reference), gray(distorted)
    pyr_x = SteerablePyramidSpace(x_img, height=levels, order=5, edge_type="reflect1").pyr_coeffs
    pyr_y = SteerablePyramidSpace(y_img, height=levels, order=5, edge_type="reflect1").pyr_coeffs
    keys = [(level, o) for level in reversed(range(levels)) for o in (0, 3)]
    assert levels != 4 or tuple(keys) == tuple(SUBBANDS)
    nums, dens = [], []
    for i, key in enumerate(keys):
        win = window_size(i)
        x, y = crop(pyr_x[key]), crop(pyr_y[key])
        g, sv = channel_estimates(x, y, win)
        s, lam = gsm_estimates(x)
        off = math.ceil((win - 1) / 2 / M)
        g, sv, s = (a[off:-off, off:-off] for a in (g, sv, s))
        num = sum(np.mean(np.log(1 + g * g * s * lk / (sv + SIGMA_NSQ))) for lk in lam)
        den = sum(np.mean(np.log(1 + s * lk / SIGMA_NSQ)) for lk in lam)
        nums.append(num)
        dens.append(den)
    return float(np.mean(np.array(nums) + 1e-4) / np.mean(np.array(dens) + 1e-4))
