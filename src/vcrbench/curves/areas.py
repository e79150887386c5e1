"""Areas under VCR curves: the one place where ``R = ∫_0^1 s(v) dv`` is computed.

A *curve* is any callable ``v ↦ s(v)`` on [0, 1] with values in [0, 1] (a
:class:`~vcrbench.curves.splines.MonotoneSpline` or e.g. ``lambda v: 1 - v``); a *tabulated*
curve is its values on :data:`GRID`, as the curves and replicates tables store them.

* **A fitted spline** (point estimate or bootstrap replicate): exact, from its B-spline
  coefficients, ``Σ_j c_j (t_{j+k+1} − t_j) / (k + 1)`` (:func:`spline_integral_weights`).
* **A tabulated fitted curve** (a stored bootstrap replicate, read back by the retraining table
  and the overlap report): composite Simpson on :data:`GRID` (:func:`tabulated_areas`). The
  curves are quadratic splines whose knots (every 1/20 of Δv, 50 grid steps) fall on even grid
  points, so Simpson is exact on every pair of grid cells: the same area as from the
  coefficients, to float rounding (tested).
* **Any other callable**: the trapezoid rule on :data:`DENSE_GRID` (20001 points, h = 5e−5).
* **Positive parts** ``∫ (s_a − s_b)^+`` (the leads of HMRI / MRSI): exact for the
  piecewise-linear interpolant of the difference on a grid (:func:`positive_area`); next to
  them, the areas ``A^h`` and ``A^m`` are the trapezoids of the same interpolant
  (:func:`trapezoid_area`), so that ``A^{h>m} − A^{m>h} = A^h − A^m`` to rounding.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from vcrbench.errors import VcrbenchError

Curve = Callable[[np.ndarray], np.ndarray]

#: Points at which curves, bands and replicates are tabulated: ``(1001,)`` on [0, 1], step 1e−3.
GRID = np.linspace(0.0, 1.0, 1001)
#: The dense grid for integrals of generic callables and of positive parts.
DENSE_GRID = np.linspace(0.0, 1.0, 20001)


def spline_integral_weights(knots: np.ndarray, degree: int) -> np.ndarray:
    """``(p,)`` weights ``w`` with ``∫_0^1 s = w · c`` for a B-spline with coefficients ``c``:
    ``w_j = (t_{j+k+1} − t_j) / (k + 1)``."""
    k = int(degree)
    return (knots[k + 1 :] - knots[: -k - 1]) / (k + 1)


def tabulated_areas(values: np.ndarray, grid: np.ndarray = GRID) -> np.ndarray:
    """Areas of curves tabulated on an equally spaced grid with an even number of cells:
    ``(..., G)`` values → ``(...)``, composite Simpson (exact for the pipeline's fitted curves,
    module docstring)."""
    values = np.asarray(values, dtype=np.float64)
    cells = grid.size - 1
    if values.shape[-1] != grid.size or cells < 2 or cells % 2:
        raise VcrbenchError(
            f"tabulated curves need values on a grid of an odd number (≥ 3) of points, got "
            f"{values.shape[-1]} values on {grid.size} points"
        )
    h = (grid[-1] - grid[0]) / cells
    weights = np.ones(grid.size)
    weights[1:-1:2] = 4.0
    weights[2:-1:2] = 2.0
    return (values @ weights) * (h / 3.0)


def curve_values(curve: Curve, grid: np.ndarray) -> np.ndarray:
    """A curve's values on ``grid``, checked to be finite."""
    if not callable(curve):
        raise VcrbenchError(f"a curve must be callable v -> s(v), got {type(curve).__name__}")
    vals = np.asarray(curve(grid), dtype=np.float64)
    if vals.shape != grid.shape:
        vals = np.broadcast_to(vals, grid.shape).astype(np.float64)
    if not np.all(np.isfinite(vals)):
        raise VcrbenchError("a curve returned non-finite values on [0, 1]")
    return vals


def trapezoid_area(values: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Trapezoid integral over the last axis: ``(..., G)`` values on ``(G,)`` grid → ``(...)``."""
    w = np.diff(grid)
    return 0.5 * ((values[..., 1:] + values[..., :-1]) * w).sum(axis=-1)


def positive_area(diff: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """``∫ max(0, d)`` of the piecewise-linear interpolant of ``diff`` ``(..., G)`` on ``grid``.

    Exact for the interpolant: a cell whose end values have opposite signs contributes the
    triangle ``w · pos² / (2 (|d0| + |d1|))``. Returns ``(...)``.
    """
    d0 = diff[..., :-1]
    d1 = diff[..., 1:]
    w = np.diff(grid)
    both = (d0 >= 0) & (d1 >= 0)
    cross = (d0 > 0) != (d1 > 0)
    full = np.where(both, 0.5 * (d0 + d1), 0.0)
    pos = np.maximum(np.maximum(d0, d1), 0.0)
    denom = np.abs(d0) + np.abs(d1)
    tri = np.where(
        cross & ~both & (denom > 0), pos * pos / (2.0 * np.where(denom > 0, denom, 1.0)), 0.0
    )
    return ((full + tri) * w).sum(axis=-1)


def area(curve: Curve) -> float:
    """``R = ∫_0^1 s(v) dv`` (exact for a fitted spline, else trapezoid on DENSE_GRID)."""
    integral = getattr(curve, "integral", None)
    if callable(integral):
        return float(integral())
    return float(trapezoid_area(curve_values(curve, DENSE_GRID), DENSE_GRID))
