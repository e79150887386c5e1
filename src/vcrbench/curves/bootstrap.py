"""Curve estimate with bootstrap uncertainty (Algorithm 1 plus bands and intervals).

Resampling (:mod:`vcrbench.curves.resampling`): a replicate reweights the samples, by unit
(images for models, subjects and images for humans: every sample of a drawn unit comes along)
or, where there are too few units, by sample. Only a sample's bin, success and anchor outcome
matter to the fit, so a replicate is its weighted per-bin counts and successes (a bin is present
in a replicate when its weighted count reaches L; in the rare replicate where none does, the
bins with any weight are used) and its weighted anchor.

**Anchors.** ``s(0)`` is fixed (``anchor``: 1 for the consistency of a deterministic model),
*measured* (``anchor_outcomes``: e.g. each sample's clean correctness; the anchor is their mean
and is re-estimated from the drawn units in every replicate, so bands have their true width at
Δv = 0) or free. ``s(1)`` is anchored at ``right_anchor`` (chance level) in any fit whose last bin
is not present — the paper anchors "the first and last bins" (supplementary, App. D); with the
last bin present the data decide the right end. The point estimate's choice holds for every
replicate (a replicate whose weighted last bin falls below L is not suddenly pinned to chance).

**λ** is chosen by SIC for the point estimate and reused by every replicate: choosing it again
would cost 29 LPs per replicate instead of one (≈ 15 s more per curve at B = 200, M = 40), and the
calibration tests (``tests/calibration/test_statistics_calibration.py``) show that the image-level
intervals reach their nominal coverage with λ fixed.

Outputs: curves on :data:`GRID` (1001 points, step 0.001); pointwise percentile bands at 83 %
and 95 %; a 95 % percentile interval for R (exact B-spline areas of the replicates,
:mod:`vcrbench.curves.areas`); the supported Δv range (first to last present bin, from 0 where
``s(0)`` is fixed or measured).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vcrbench.curves.areas import GRID, spline_integral_weights
from vcrbench.curves.binning import BinnedRates, bin_index, bin_rates
from vcrbench.curves.resampling import Resampling, SampleResampling
from vcrbench.curves.splines import (
    DEFAULT_DEGREE,
    DEFAULT_N_KNOTS,
    MonotoneSpline,
    design_matrix,
    fit_many,
    fit_monotone_spline,
)
from vcrbench.errors import VcrbenchError

#: Share of replicates that may draw no data before the interval is reported as unreliable.
MAX_INVALID_SHARE = 0.05


@dataclass(frozen=True)
class CurveEstimate:
    """A fitted VCR curve with bootstrap uncertainty.

    Attributes:
        grid: ``(G,)`` Δv points (:data:`GRID`).
        curve: ``(G,)`` point-estimate spline on the grid, in [0, 1].
        band83: pointwise 83 % percentile band, two ``(G,)`` arrays (lower, upper).
        band95: pointwise 95 % percentile band, two ``(G,)`` arrays.
        replicates: ``(B, G)`` bootstrap curves on the grid (NaN rows: replicates that drew no
            data); replicate ``b`` of two curves of the same units is paired.
        area: R, exact area under the point-estimate spline.
        area_lo, area_hi: 95 % percentile interval of R.
        rates: the binned data the point estimate was fitted to.
        spline: the point-estimate spline (its ``lam`` is also used by every replicate).
        n_samples: N.
        replicate_areas: ``(B,)`` exact areas of the replicate splines (NaN where invalid).
        anchor: ``s(0)`` of the point estimate (None: free).
        right_anchor: ``s(1)`` where the point estimate was anchored at the right end, else None.
        dv_min, dv_max: the Δv range the data support (module docstring).
        resampled: what the replicates resample (:mod:`vcrbench.curves.resampling`).
        n_invalid: replicates that drew no data.
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
    replicate_areas: np.ndarray
    anchor: float | None = None
    right_anchor: float | None = None
    dv_min: float = 0.0
    dv_max: float = 1.0
    resampled: str = "samples"
    n_invalid: int = 0

    @property
    def coverage(self) -> float:
        """Share of the M bins with at least L samples (this curve's own support)."""
        return float(self.rates.present.mean())

    @property
    def interval_degenerate(self) -> bool:
        """The replicates do not vary although the data do: at the chosen λ the curve is fixed
        by its anchors (e.g. a straight line between s(0) and s(1)), so the bootstrap shows no
        uncertainty that the data have; such an interval is not reported."""
        areas = self.replicate_areas[np.isfinite(self.replicate_areas)]
        rates = self.rates.rates[self.rates.present]
        return bool(areas.size and np.ptp(areas) < 1e-12 and np.ptp(rates) > 0)

    @property
    def interval_note(self) -> str | None:
        """Why the interval is not reported or less than it seems, or None."""
        if self.interval_degenerate:
            return (f"no interval: at the chosen λ = {self.spline.lam:g} every bootstrap curve "
                    "is fixed by the anchors, so the replicates show none of the data's "
                    "uncertainty")
        b = self.replicates.shape[0]
        if self.n_invalid > MAX_INVALID_SHARE * b:
            return (f"{self.n_invalid} of {b} bootstrap replicates drew no data "
                    f"(resampled: {self.resampled}); the interval is conditional on data")
        return None


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


def _band(replicates: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    if replicates.shape[0] == 0:
        nan = np.full(replicates.shape[1], np.nan)
        return nan, nan.copy()
    lo, hi = np.percentile(replicates, [50.0 * (1.0 - level), 50.0 * (1.0 + level)], axis=0)
    return lo, hi


def _check_unit(name: str, value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    if not 0.0 <= value <= 1.0:
        raise VcrbenchError(f"{name} must lie in [0, 1], got {value!r}")
    return value


def _sample_values(idx: np.ndarray, ok: np.ndarray, anchor_outcomes: np.ndarray | None,
                   m: int) -> np.ndarray:
    """``(N, 2M + 2)`` per-sample contributions: bin one-hot, success one-hot, anchor count and
    anchor success."""
    n = idx.shape[0]
    values = np.zeros((n, 2 * m + 2))
    rows = np.arange(n)
    values[rows, idx] = 1.0
    values[rows[ok], m + idx[ok]] = 1.0
    if anchor_outcomes is not None:
        known = np.isfinite(anchor_outcomes)
        values[known, 2 * m] = 1.0
        values[known, 2 * m + 1] = anchor_outcomes[known]
    return values


def _support(rates: BinnedRates, left_known: bool) -> tuple[float, float]:
    present = np.flatnonzero(rates.present)
    lo = 0.0 if left_known else float(rates.edges[present[0]])
    return lo, float(rates.edges[present[-1] + 1])


def estimate_curve(
    dv: np.ndarray,
    success: np.ndarray,
    *,
    bins: int,
    min_count: int,
    anchor: float | None = None,
    anchor_outcomes: np.ndarray | None = None,
    right_anchor: float | None = None,
    n_boot: int = 200,
    seed: int = 0,
    resampling: Resampling | None = None,
    lam: float | None = None,
    n_knots: int = DEFAULT_N_KNOTS,
    degree: int = DEFAULT_DEGREE,
) -> CurveEstimate:
    """Algorithm 1 with bootstrap: bins, monotone spline, area, bands and intervals.

    Args:
        dv: ``(N,)`` visual change in [0, 1].
        success: ``(N,)`` bool, correct (accuracy) or unchanged (consistency) prediction.
        bins, min_count: M and L.
        anchor: a fixed ``s(0)`` (1 for the consistency of a deterministic model), or None.
        anchor_outcomes: ``(N,)`` float, each sample's outcome that measures ``s(0)`` (its
            image's clean correctness; NaN where a sample measures nothing): ``s(0)`` is their
            mean, re-estimated in every replicate. Exclusive with ``anchor``. Neither: free.
        right_anchor: ``s(1)`` (chance level) when the data's last bin is not present (then in
            every replicate too); None: free.
        n_boot: B replicates (≥ 1; use ≥ 200 for intervals).
        seed: seed of the sample bootstrap when ``resampling`` is None.
        resampling: what a replicate redraws (:mod:`vcrbench.curves.resampling`); None: the
            N samples (:class:`~vcrbench.curves.resampling.SampleResampling` keyed by ``seed``).
        lam: λ of the point estimate; None chooses it by SIC (the replicates reuse it).
        n_knots, degree: spline basis (see :mod:`vcrbench.curves.splines`).

    Raises:
        VcrbenchError: no bin has L samples, or bad arguments.
    """
    if isinstance(n_boot, bool) or int(n_boot) != n_boot or n_boot < 1:
        raise VcrbenchError(f"n_boot must be a positive integer, got {n_boot!r}")
    if isinstance(seed, bool) or int(seed) != seed or seed < 0:
        raise VcrbenchError(f"the bootstrap seed must be a non-negative integer, got {seed!r}")
    if anchor is not None and anchor_outcomes is not None:
        raise VcrbenchError("give a fixed anchor or anchor_outcomes, not both")
    anchor = _check_unit("anchor s(0)", anchor)
    right_anchor = _check_unit("right_anchor s(1)", right_anchor)
    n_boot = int(n_boot)
    rates = bin_rates(dv, success, bins, min_count)  # checks Δv, success, M and L
    idx = bin_index(dv, bins)
    ok = np.asarray(success).astype(bool)
    if anchor_outcomes is not None:
        anchor_outcomes = np.asarray(anchor_outcomes, dtype=np.float64)
        if anchor_outcomes.shape != idx.shape:
            raise VcrbenchError(
                f"anchor_outcomes must have shape {idx.shape} like Δv, got {anchor_outcomes.shape}"
            )
        known = anchor_outcomes[np.isfinite(anchor_outcomes)]
        if not np.all((known >= 0) & (known <= 1)):
            raise VcrbenchError("anchor_outcomes must lie in [0, 1] (NaN: no outcome)")
        if known.size == 0:
            anchor_outcomes = None
        else:
            anchor = float(known.mean())
    if resampling is None:
        resampling = SampleResampling(n_boot, int(seed), "samples")
    if resampling.n_boot != n_boot:
        raise VcrbenchError(f"the resampling has {resampling.n_boot} replicates, not {n_boot}")
    m = int(bins)
    if not rates.present.any():
        raise VcrbenchError(
            f"no bin has at least L={rates.min_count} samples: increase sampling.n or lower "
            "binning.min_count"
        )
    pr = rates.present
    right = right_anchor if not pr[-1] else None
    spline = fit_monotone_spline(
        rates.centers[pr], rates.rates[pr], rates.counts[pr], anchor,
        lam=lam, right_anchor=right, n_knots=n_knots, degree=degree,
    )

    totals = resampling.totals(_sample_values(idx, ok, anchor_outcomes, m))
    boot_counts, boot_succ = totals[:, :m], totals[:, m : 2 * m]
    valid = boot_counts.sum(axis=1) > 0
    if anchor_outcomes is not None:
        valid &= totals[:, 2 * m] > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            boot_anchor = totals[:, 2 * m + 1] / totals[:, 2 * m]
    xs, ys, ws, anchors, rights = [], [], [], [], []
    for b in np.flatnonzero(valid):
        present = boot_counts[b] >= rates.min_count
        use = present if present.any() else boot_counts[b] > 0
        xs.append(rates.centers[use])
        ys.append(np.clip(boot_succ[b][use] / boot_counts[b][use], 0.0, 1.0))
        ws.append(boot_counts[b][use])
        anchors.append(float(boot_anchor[b]) if anchor_outcomes is not None else anchor)
        rights.append(right)  # the point estimate's choice: replicates must not toggle it
    coefs = fit_many(xs, ys, ws, anchors, spline.lam, right_anchors=rights,
                     n_knots=n_knots, degree=degree)
    basis_grid = design_matrix(GRID, spline.knots, spline.degree)
    replicates = np.full((n_boot, GRID.size), np.nan)
    rep_areas = np.full(n_boot, np.nan)
    replicates[valid] = np.clip((basis_grid @ coefs.T).T, 0.0, 1.0)
    rep_areas[valid] = coefs @ spline_integral_weights(spline.knots, spline.degree)
    lo, hi = metric_interval(rep_areas, 0.95)
    dv_min, dv_max = _support(rates, anchor is not None)
    return CurveEstimate(
        grid=GRID.copy(),
        curve=spline(GRID),
        band83=_band(replicates[valid], 0.83),
        band95=_band(replicates[valid], 0.95),
        replicates=replicates,
        area=spline.integral(),
        area_lo=lo,
        area_hi=hi,
        rates=rates,
        spline=spline,
        n_samples=int(idx.size),
        replicate_areas=rep_areas,
        anchor=anchor,
        right_anchor=right,
        dv_min=dv_min,
        dv_max=dv_max,
        resampled=resampling.description,
        n_invalid=int(n_boot - valid.sum()),
    )
