"""Do two fitted curves differ anywhere on a range? A simultaneous test from bootstrap replicates.

Tests ``H0: d(v) = s_a(v) − s_b(v) = 0 for every v in [v_min, v_max]`` for two independently
estimated curves (e.g. two corruptions' human curves), and gives a *simultaneous* confidence
band for ``d`` that covers the whole compared range at once with probability ``level``.

Why simultaneous: the older rule of :mod:`vcrbench.human.similarity` calls two curves different
when their pointwise 83 % bands fail to intersect at *any* of the 1,001 grid points. Each check
is a ≈ 5 % test on its own, but the family of checks is not, so equal curves are called
different far more often than 5 % of the time; and where a band pinches (a fixed anchor such
as ``s(0)``, or a nearly certain region) the checks there are fragile.

Method (the max-t / sup-t band: e.g. Montiel Olea & Plagborg-Møller 2019, "Simultaneous
confidence bands: theory, implementation, and an application to SVARs", J. Appl. Econometrics
34(1)): the two data sets are independent, so replicate ``b`` of ``a`` is paired with replicate
``b`` of ``b`` and ``D_b = r_a[b] − r_b[b]`` is a bootstrap replicate of ``d̂ = s_a − s_b``.
With ``se(v)`` the SD over ``b`` of ``D_b(v)`` (ddof = 1),

* ``T_b = max_v |D_b(v) − d̂(v)| / se(v)`` over the compared points,
* ``c`` = the ``level`` quantile of the ``T_b`` (numpy's ``'higher'`` method: an observed
  ``T_b``, never an interpolation),
* the band ``d̂ ± c · se`` (covers ``d`` on the whole range with probability ≈ ``level``),
* ``T = max_v |d̂(v)| / se(v)``; the curves are *different* when ``T > c``, i.e. exactly when
  the band excludes 0 somewhere; ``p = (1 + #{T_b ≥ T}) / (1 + B)`` (agrees with the decision
  up to the discreteness of B: at B = 200 and level 0.95, different ⇔ p ≤ 0.05).

In simulations with equal curves (the tests) the size at level 0.95, B = 200 is ≈ 6 %; the
83 %-band rule on the same data calls about half of the pairs different.

Points with ``se < SE_FLOOR`` (both curves pinned, e.g. to a common fixed anchor) are left out
of ``T_b``: if ``|d̂| ≤ SE_FLOOR`` there too they are ignored (band ``[d̂, d̂]``, no separation);
otherwise both bootstraps are certain of two different values, which is a certain separation
(``T = inf``, ``p = 1 / (1 + B)``, band ``[d̂, d̂]``). With no other compared point, ``c = 0``.

Units and shapes: ``v`` is the visual change Δv, ``(G,)`` (:data:`~vcrbench.curves.areas.GRID`
by default when ``G = 1001``); curves and band limits are in curve units (accuracy in [0, 1]),
``(G,)``; replicates ``(B, G)`` (:class:`~vcrbench.curves.bootstrap.CurveEstimate`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vcrbench.errors import VcrbenchError

#: Grid points within this distance of a ``v_range`` end count as inside (so 0.8 selects 0.8).
RANGE_TOL = 1e-9
#: Below this standard error (curve units) a point is *pinned*; ``|d̂|`` below it counts as 0.
SE_FLOOR = 1e-9
#: Fewer usable replicate pairs than this: not testable.
MIN_PAIRS = 20


@dataclass(frozen=True)
class CurveDifference:
    """The simultaneous comparison of two curves on ``[v_min, v_max]``.

    Attributes:
        different: the simultaneous band for ``d = s_a − s_b`` excludes 0 somewhere in the
            range (``statistic > critical``); None when not testable (see ``reason``).
        statistic: ``T = max |d̂| / se`` over the compared points (inf with a certain
            separation, 0 when every point is pinned equal); None when not testable.
        critical: ``c``, the ``level`` quantile of the bootstrap ``T_b``; None when not testable.
        p_value: ``(1 + #{T_b ≥ T}) / (1 + B)``; None when not testable.
        v_min, v_max: the compared range.
        first_separation: smallest v where the band excludes 0, or None.
        separated_fraction: fraction of the compared grid points where it does (None when not
            testable).
        band: ``(lo, hi)``, two ``(G,)`` arrays: the simultaneous ``level`` band for ``d``, NaN
            outside the range (and everywhere when not testable).
        n_replicates: B, the replicate pairs used (after dropping pairs with a non-finite value).
        reason: why the comparison is not testable, else None.
    """

    different: bool | None
    statistic: float | None
    critical: float | None
    p_value: float | None
    v_min: float
    v_max: float
    first_separation: float | None
    separated_fraction: float | None
    band: tuple[np.ndarray, np.ndarray]
    n_replicates: int
    reason: str | None = None


def _curve(name: str, values: object) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1 or arr.size < 2:
        raise VcrbenchError(
            f"{name} must be a 1-D array of curve values on the v grid (≥ 2 points), "
            f"got shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise VcrbenchError(
            f"{name} has a non-finite value at grid index {bad}; pass the point-estimate curve "
            "on a grid where it is defined"
        )
    return arr


def _replicates(name: str, values: object, g: int) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != g:
        raise VcrbenchError(
            f"{name} must be a (B, {g}) array of bootstrap curves on the curves' grid, got shape "
            f"{arr.shape}"
        )
    return arr


def _grid(v: object, g: int) -> np.ndarray:
    if v is None:
        return np.linspace(0.0, 1.0, g)
    grid = np.asarray(v, dtype=np.float64)
    if grid.shape != (g,):
        raise VcrbenchError(f"v has shape {grid.shape} but the curves have {g} points")
    if not np.all(np.isfinite(grid)) or np.any(np.diff(grid) <= 0):
        raise VcrbenchError("v must be finite and strictly increasing")
    return grid


def _range(grid: np.ndarray, v_range: object) -> tuple[float, float, slice]:
    """The range and its grid points, a slice of the increasing grid."""
    if v_range is None:
        v_min, v_max = float(grid[0]), float(grid[-1])
    else:
        try:
            v_min, v_max = (float(x) for x in v_range)
        except (TypeError, ValueError):
            raise VcrbenchError(f"v_range must be a pair (v_min, v_max), got {v_range!r}") from None
        if not (math.isfinite(v_min) and math.isfinite(v_max)) or v_min > v_max:
            raise VcrbenchError(f"v_range must be finite with v_min <= v_max, got {v_range!r}")
    start = int(np.searchsorted(grid, v_min - RANGE_TOL, side="left"))
    stop = int(np.searchsorted(grid, v_max + RANGE_TOL, side="right"))
    if stop - start < 2:
        raise VcrbenchError(
            f"v_range ({v_min}, {v_max}) holds {max(stop - start, 0)} grid point(s) of "
            f"[{grid[0]}, {grid[-1]}]; a curve comparison needs at least 2: widen the range"
        )
    return v_min, v_max, slice(start, stop)


def _level(level: object) -> float:
    if isinstance(level, bool) or not isinstance(level, int | float | np.floating):
        raise VcrbenchError(f"level must be a number in (0, 1), got {level!r}")
    if not (0.0 < float(level) < 1.0):
        raise VcrbenchError(f"level must be in (0, 1) (e.g. 0.95), got {level!r}")
    return float(level)


def curve_difference(
    curve_a: np.ndarray,
    curve_b: np.ndarray,
    replicates_a: np.ndarray,
    replicates_b: np.ndarray,
    *,
    v: np.ndarray | None = None,
    v_range: tuple[float, float] | None = None,
    level: float = 0.95,
) -> CurveDifference:
    """Simultaneous test that two independently estimated curves differ on ``v_range``.

    Args:
        curve_a, curve_b: ``(G,)`` finite point-estimate curves on ``v``.
        replicates_a, replicates_b: ``(B_a, G)``, ``(B_b, G)`` bootstrap curves; the first
            ``min(B_a, B_b)`` rows are paired, and a pair with a non-finite value at a compared
            point is dropped.
        v: ``(G,)`` strictly increasing grid; default ``linspace(0, 1, G)`` (:data:`GRID` when
            G = 1001).
        v_range: ``(v_min, v_max)``, the closed range compared (ends matched within
            :data:`RANGE_TOL`; ≥ 2 grid points); default the whole grid.
        level: simultaneous coverage of the band; the test has size ≈ ``1 − level``.

    Returns:
        :class:`CurveDifference`; ``different`` is None (with a ``reason``) when fewer than
        :data:`MIN_PAIRS` usable replicate pairs remain.

    Raises:
        VcrbenchError: bad shapes, non-finite point curves or grid, a level outside (0, 1), or
            a ``v_range`` with fewer than 2 grid points.
    """
    a = _curve("curve_a", curve_a)
    b = _curve("curve_b", curve_b)
    if a.shape != b.shape:
        raise VcrbenchError(
            f"curve_a and curve_b must share one grid; got shapes {a.shape} and {b.shape}"
        )
    g = a.size
    ra = _replicates("replicates_a", replicates_a, g)
    rb = _replicates("replicates_b", replicates_b, g)
    grid = _grid(v, g)
    v_min, v_max, cols = _range(grid, v_range)
    conf = _level(level)

    n_pairs = min(ra.shape[0], rb.shape[0])
    diffs = ra[:n_pairs, cols] - rb[:n_pairs, cols]
    usable = np.isfinite(diffs).all(axis=1)
    if not usable.all():
        diffs = diffs[usable]
    n_boot = int(diffs.shape[0])
    nan_band = (np.full(g, np.nan), np.full(g, np.nan))
    if n_boot < MIN_PAIRS:
        dropped = n_pairs - n_boot
        return CurveDifference(
            different=None, statistic=None, critical=None, p_value=None, v_min=v_min,
            v_max=v_max, first_separation=None, separated_fraction=None, band=nan_band,
            n_replicates=n_boot,
            reason=(
                f"{n_boot} usable bootstrap replicate pairs (of min({ra.shape[0]}, "
                f"{rb.shape[0]}) = {n_pairs}, {dropped} dropped for non-finite values in the "
                f"range); at least {MIN_PAIRS} are needed: estimate the curves with more "
                "replicates"
            ),
        )

    d_hat = (a - b)[cols]
    se = diffs.std(axis=0, ddof=1)
    pinned = se < SE_FLOOR
    active = ~pinned
    pinned_apart = pinned & (np.abs(d_hat) > SE_FLOOR)

    if active.any():
        z = diffs[:, active] if pinned.any() else diffs  # a copy, or the temporary itself
        z -= d_hat[active]
        np.abs(z, out=z)
        z /= se[active]
        t_boot = z.max(axis=1)
        critical = float(np.quantile(t_boot, conf, method="higher"))
    else:
        t_boot = np.zeros(n_boot)
        critical = 0.0
    ratio = np.zeros(d_hat.shape)
    ratio[active] = np.abs(d_hat[active]) / se[active]
    ratio[pinned_apart] = np.inf
    statistic = float(ratio.max())
    separated = ratio > critical  # any(separated) <=> statistic > critical
    p_value = (1 + int(np.count_nonzero(t_boot >= statistic))) / (1 + n_boot)

    half = np.where(pinned, 0.0, critical * se)
    lo, hi = np.full(g, np.nan), np.full(g, np.nan)
    lo[cols], hi[cols] = d_hat - half, d_hat + half
    first = float(grid[cols][np.flatnonzero(separated)[0]]) if separated.any() else None
    return CurveDifference(
        different=bool(statistic > critical),
        statistic=statistic,
        critical=critical,
        p_value=float(p_value),
        v_min=v_min,
        v_max=v_max,
        first_separation=first,
        separated_fraction=float(separated.mean()),
        band=(lo, hi),
        n_replicates=n_boot,
        reason=None,
    )
