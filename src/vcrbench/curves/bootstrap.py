"""Curve estimate with bootstrap uncertainty (Algorithm 1 plus bands and intervals).

Resampling: a nonparametric bootstrap over the N samples (draw N samples with replacement).
Only a sample's (bin, success) cell matters to the fit, so this is done *exactly* and cheaply
as one multinomial draw of the ``2M`` cell counts with probabilities ``n_cell / N`` per
replicate; bin counts change between replicates, and a bin is present in a replicate when its
resampled count reaches L. (In the rare replicate where no bin reaches L, the bins with at
least one sample are used.)

Each replicate is refitted with the λ chosen by SIC for the point estimate (fixed λ: one LP per
replicate, solved in block-diagonal chunks of 25, ~2–3 ms each at M = 40; choosing λ again
would cost 29 LP blocks per replicate and mostly adds selection noise). The anchor is the fixed
``anchor`` or, if given, ``anchor_replicates[b]`` (e.g. the clean accuracy of a resampled clean
set).

Outputs: curves on :data:`GRID` (1001 points, step 0.001); pointwise percentile bands at 83 %
(for the visual-similarity test: non-overlapping 83 % bands ≈ a 5 % test of a difference) and
95 %; a 95 % percentile interval for R (exact B-spline areas of the replicates,
:mod:`vcrbench.curves.areas`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vcrbench.curves.areas import GRID, spline_integral_weights
from vcrbench.curves.binning import BinnedRates, bin_rates, rates_from_counts
from vcrbench.curves.splines import (
    DEFAULT_DEGREE,
    DEFAULT_N_KNOTS,
    MonotoneSpline,
    design_matrix,
    fit_many,
    fit_monotone_spline,
)
from vcrbench.errors import VcrbenchError


@dataclass(frozen=True)
class CurveEstimate:
    """A fitted VCR curve with bootstrap uncertainty.

    Attributes:
        grid: ``(G,)`` Δv points (:data:`GRID`).
        curve: ``(G,)`` point-estimate spline on the grid, in [0, 1].
        band83: pointwise 83 % percentile band, two ``(G,)`` arrays (lower, upper).
        band95: pointwise 95 % percentile band, two ``(G,)`` arrays.
        replicates: ``(B, G)`` bootstrap curves on the grid (for paired HMRI / MRSI intervals).
        area: R, exact area under the point-estimate spline.
        area_lo, area_hi: 95 % percentile interval of R.
        rates: the binned data the point estimate was fitted to.
        spline: the point-estimate spline (its ``lam`` is also used by every replicate).
        n_samples: N.
        replicate_areas: ``(B,)`` exact areas of the replicate splines.
    """

    grid: np.ndarray
    curve: np.ndarray
    band83: tuple[np.ndarray, np.ndarray]
    band95: tuple[np.ndarray, np.ndarray]
    replicates: np.ndarray
    area: float
    area_lo: float
    area_hi: float
    rates: BinnedRates
    spline: MonotoneSpline
    n_samples: int
    replicate_areas: np.ndarray | None = None


def metric_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval ``(q_{(1−level)/2}, q_{(1+level)/2})`` of the finite ``values``.

    Returns ``(nan, nan)`` when no value is finite.
    """
    if not (0.0 < level < 1.0):
        raise VcrbenchError(f"interval level must be in (0, 1), got {level!r}")
    v = np.asarray(values, dtype=np.float64).ravel()
    v = v[np.isfinite(v)]
    if v.size == 0:
        return float("nan"), float("nan")
    lo, hi = np.percentile(v, [50.0 * (1.0 - level), 50.0 * (1.0 + level)])
    return float(lo), float(hi)


def bootstrap_counts(
    counts: np.ndarray, successes: np.ndarray, n_boot: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Per-bin counts and successes of ``n_boot`` resamples of the N samples (with replacement).

    Exact: resampling N samples uniformly with replacement gives multinomial counts over the
    ``2M`` (bin, success) cells with probabilities ``n_cell / N``, drawn here directly.

    Args:
        counts, successes: ``(M,)`` int per-bin counts and successes of the data.
        n_boot: B.
        rng: the generator.

    Returns:
        ``(B, M)`` counts and ``(B, M)`` successes (int64).
    """
    counts = np.asarray(counts, dtype=np.int64)
    successes = np.asarray(successes, dtype=np.int64)
    m = counts.shape[0]
    n = int(counts.sum())
    cells = np.concatenate([counts - successes, successes]).astype(np.float64)
    draws = rng.multinomial(n, cells / n, size=n_boot).astype(np.int64)
    boot_succ = draws[:, m:]
    return draws[:, :m] + boot_succ, boot_succ


def _band(replicates: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = np.percentile(replicates, [50.0 * (1.0 - level), 50.0 * (1.0 + level)], axis=0)
    return lo, hi


def estimate_curve(
    dv: np.ndarray,
    success: np.ndarray,
    *,
    bins: int,
    min_count: int,
    anchor: float | None,
    n_boot: int = 200,
    seed: int = 0,
    anchor_replicates: np.ndarray | None = None,
    lam: float | None = None,
    n_knots: int = DEFAULT_N_KNOTS,
    degree: int = DEFAULT_DEGREE,
) -> CurveEstimate:
    """Algorithm 1 with bootstrap: bins, monotone spline, area, bands and intervals.

    Args:
        dv: ``(N,)`` visual change in [0, 1].
        success: ``(N,)`` bool, correct (accuracy) or unchanged (consistency) prediction.
        bins, min_count: M and L.
        anchor: ``s(0)`` (clean accuracy, 1 for consistency), or None for a free start.
        n_boot: B replicates (≥ 1; use ≥ 200 for intervals).
        seed: integer seed of the bootstrap (``default_rng(SeedSequence(seed))``).
        anchor_replicates: optional ``(B,)`` anchors per replicate.
        lam: λ of the point estimate; None chooses it by SIC (the replicates reuse it).
        n_knots, degree: spline basis (see :mod:`vcrbench.curves.splines`).

    Raises:
        VcrbenchError: no bin has L samples, or bad arguments.
    """
    if isinstance(n_boot, bool) or int(n_boot) != n_boot or n_boot < 1:
        raise VcrbenchError(f"n_boot must be a positive integer, got {n_boot!r}")
    if isinstance(seed, bool) or int(seed) != seed or seed < 0:
        raise VcrbenchError(f"the bootstrap seed must be a non-negative integer, got {seed!r}")
    n_boot = int(n_boot)
    rates = bin_rates(dv, success, bins, min_count)
    if not rates.present.any():
        raise VcrbenchError(
            f"no bin has at least L={rates.min_count} samples: increase sampling.n or lower "
            "binning.min_count"
        )
    if anchor_replicates is not None:
        anchor_replicates = np.asarray(anchor_replicates, dtype=np.float64).ravel()
        if anchor_replicates.shape != (n_boot,):
            raise VcrbenchError(
                f"anchor_replicates must have shape ({n_boot},), got {anchor_replicates.shape}"
            )
        if not np.all((anchor_replicates >= 0) & (anchor_replicates <= 1)):
            raise VcrbenchError("anchor_replicates must lie in [0, 1]")
    pr = rates.present
    spline = fit_monotone_spline(
        rates.centers[pr],
        rates.rates[pr],
        rates.counts[pr],
        anchor,
        lam=lam,
        n_knots=n_knots,
        degree=degree,
    )
    n = int(rates.counts.sum())

    rng = np.random.default_rng(np.random.SeedSequence(int(seed)))
    boot_counts, boot_succ = bootstrap_counts(rates.counts, rates.successes, n_boot, rng)

    basis_grid = design_matrix(GRID, spline.knots, spline.degree)
    widths = spline_integral_weights(spline.knots, spline.degree)
    xs, ys, ws, anchors = [], [], [], []
    for b in range(n_boot):
        br = rates_from_counts(boot_counts[b], boot_succ[b], rates.min_count)
        use = br.present if br.present.any() else br.counts > 0
        xs.append(br.centers[use])
        ys.append(boot_succ[b][use] / boot_counts[b][use])
        ws.append(boot_counts[b][use])
        anchors.append(anchor if anchor_replicates is None else float(anchor_replicates[b]))
    coefs = fit_many(xs, ys, ws, anchors, spline.lam, n_knots=n_knots, degree=degree)
    replicates = np.clip((basis_grid @ coefs.T).T, 0.0, 1.0)
    rep_areas = coefs @ widths
    lo, hi = metric_interval(rep_areas, 0.95)
    return CurveEstimate(
        grid=GRID.copy(),
        curve=spline(GRID),
        band83=_band(replicates, 0.83),
        band95=_band(replicates, 0.95),
        replicates=replicates,
        area=spline.integral(),
        area_lo=lo,
        area_hi=hi,
        rates=rates,
        spline=spline,
        n_samples=n,
        replicate_areas=rep_areas,
    )

