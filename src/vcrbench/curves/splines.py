"""Monotone non-increasing median smoothing spline (the curve ``s`` of Algorithm 1).

The paper fits quantile smoothing splines (Koenker, Ng & Portnoy 1994, "KNP"; R's COBS) with a
monotonicity constraint. This module fits the median (τ = 0.5) version as one linear programme:

* **Basis.** Quadratic B-splines (``degree = 2``, COBS's default degree) on ``n_knots``
  equally spaced knots on [0, 1] (default 21 knots, spacing ``h = 0.05``; the knot vector is
  clamped, i.e. the end knots are repeated ``degree + 1`` times), ``p = n_knots + degree − 1``
  coefficients ``c``. The curve is defined on all of [0, 1] whichever bins are missing.
* **Fidelity.** ``Σ_i w_i |y_i − s(x_i)|`` over the present bins (``x`` = bin centres, ``y`` =
  rates), ``w`` = bin counts normalised to mean 1 (so ``λ`` does not depend on N).
* **Roughness.** ``λ · TV(s′)``, the total variation of the first derivative, which is the KNP
  L1 penalty (COBS ``pen`` of ``s″`` in L1). For a quadratic spline ``s′`` is a continuous
  piecewise-linear spline with B-spline coefficients ``d_j = 2 (c_{j+1} − c_j) /
  (t_{j+3} − t_{j+1})`` (its values at the knots), so ``TV(s′) = Σ_j |d_{j+1} − d_j|`` exactly:
  ``Σ_j |Δ²c_j| / h`` inside, with doubled end slopes because the end knots are clamped
  (:func:`penalty_matrix`).
* **Shape.** Non-increasing coefficients (``c_{j+1} ≤ c_j``) ⇒ non-increasing curve;
  ``0 ≤ c_j ≤ 1`` ⇒ ``0 ≤ s ≤ 1`` (B-splines are a partition of unity); the anchor
  ``s(0) = c_0 = anchor`` (clamped knots interpolate the first coefficient), and optionally a
  right anchor ``s(1) = c_{p−1} = right_anchor`` (the last coefficient).
* **λ.** Chosen on :data:`LAMBDA_GRID` by the Schwarz criterion of KNP / COBS,
  ``SIC(λ) = log( Σ w_i |r_i| / Σ w_i ) + (log n / (2n)) · p_λ``, with ``n`` the number of
  present bins and ``p_λ`` the number of interpolated bins (``|r_i| ≤ 1e−7``), KNP's effective
  dimension. Fits that interpolate every bin (mean residual ≈ 0, SIC = −∞) are not
  candidates; if all are, the largest λ is taken. Ties go to the larger (smoother) λ.

Solved with scipy's HiGHS (``linprog(method="highs")``) on sparse matrices; deterministic.
Independent fits (the λ candidates; a chunk of bootstrap replicates) are stacked into one
block-diagonal LP, which removes the per-call overhead; blocks share nothing, so each block's
optimum is its own problem's optimum (where an L1 optimum is not unique, the vertex returned may
differ from a solo solve, with the same objective).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.interpolate import BSpline
from scipy.optimize import linprog

from vcrbench.curves.areas import spline_integral_weights
from vcrbench.errors import VcrbenchError

DEFAULT_DEGREE = 2
DEFAULT_N_KNOTS = 21
#: λ candidates for the SIC choice (4 per decade); λ multiplies TV(s′) against a mean-1 weighted
#: L1 fidelity.
LAMBDA_GRID = np.logspace(-5.0, 2.0, 29)
#: A residual at most this large counts as an interpolated point in p_λ.
INTERPOLATION_TOL = 1e-7
#: Independent fits solved per block-diagonal LP (one HiGHS call).
BLOCK_CHUNK = 25

NO_BINS_MESSAGE = "no bin has at least L samples: increase sampling.n or lower binning.min_count"


def knot_vector(n_knots: int = DEFAULT_N_KNOTS, degree: int = DEFAULT_DEGREE) -> np.ndarray:
    """Clamped knot vector: ``n_knots`` equally spaced knots on [0, 1], ends repeated.

    Returns ``(n_knots + 2·degree,)``; the basis has ``n_knots + degree − 1`` functions.
    """
    if n_knots < 2 or degree < 1:
        raise VcrbenchError(f"need n_knots >= 2 and degree >= 1, got {n_knots}, {degree}")
    inner = np.linspace(0.0, 1.0, int(n_knots))
    return np.concatenate([np.zeros(degree), inner, np.ones(degree)])


def design_matrix(x: np.ndarray, knots: np.ndarray, degree: int) -> sp.csr_array:
    """Sparse ``(len(x), p)`` B-spline basis evaluated at ``x`` in [0, 1]."""
    x = np.asarray(x, dtype=np.float64)
    return sp.csr_array(BSpline.design_matrix(x, knots, degree))


def penalty_matrix(knots: np.ndarray, degree: int) -> np.ndarray:
    """``(p − 2, p)`` matrix ``P`` with ``Σ|P c| = TV(s′)`` for ``degree = 2`` (exact).

    ``P c`` are the jumps of the coefficients ``d`` of ``s′`` (degree − 1 spline); for other
    degrees ``Σ|P c|`` is the usual difference penalty on ``d`` (an upper bound of TV(s′)).
    """
    p = len(knots) - degree - 1
    scale = degree / (knots[degree + 1 : degree + p] - knots[1:p])  # (p − 1,)
    d1 = np.diff(np.eye(p), axis=0)  # (p − 1, p): c_{j+1} − c_j
    return np.diff(scale[:, None] * d1, axis=0)


@dataclass(frozen=True)
class MonotoneSpline:
    """A fitted curve ``s: [0, 1] → [0, 1]``, non-increasing.

    Attributes:
        knots: ``(p + degree + 1,)`` clamped knot vector on [0, 1].
        degree: B-spline degree.
        coefficients: ``(p,)`` non-increasing B-spline coefficients in [0, 1].
        lam: the penalty weight λ used (multiplies TV(s′)).
    """

    knots: np.ndarray
    degree: int
    coefficients: np.ndarray
    lam: float

    def __call__(self, v: np.ndarray) -> np.ndarray:
        """``s(v)`` for ``v`` in [0, 1] (any shape); values in [0, 1], non-increasing in v."""
        v = np.asarray(v, dtype=np.float64)
        if not np.all((v >= 0.0) & (v <= 1.0)):
            raise VcrbenchError("the curve is defined on Δv in [0, 1] only")
        out = BSpline(self.knots, self.coefficients, self.degree, extrapolate=False)(v.ravel())
        return np.clip(out, 0.0, 1.0).reshape(v.shape)

    def integral(self) -> float:
        """Exact ``∫_0^1 s(v) dv = Σ_j c_j (t_{j+k+1} − t_j) / (k + 1)``."""
        return float(np.dot(self.coefficients, spline_integral_weights(self.knots, self.degree)))


def _check_inputs(
    x: np.ndarray, y: np.ndarray, weights: np.ndarray, anchor: float | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated ``(x, y, w)`` with ``w`` normalised to mean 1."""
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    w = np.asarray(weights, dtype=np.float64).ravel()
    if x.size == 0:
        raise VcrbenchError(NO_BINS_MESSAGE)
    if not (x.shape == y.shape == w.shape):
        raise VcrbenchError(
            f"x, y, weights must have one shape, got {x.shape}, {y.shape}, {w.shape}"
        )
    if not np.all((x >= 0) & (x <= 1)):
        raise VcrbenchError("spline x (bin centres) must lie in [0, 1]")
    if not np.all((y >= 0) & (y <= 1)):
        raise VcrbenchError("spline y (rates) must lie in [0, 1]")
    if not np.all(np.isfinite(w) & (w > 0)):
        raise VcrbenchError("spline weights (bin counts) must be positive")
    if anchor is not None and not (0.0 <= anchor <= 1.0):
        raise VcrbenchError(f"anchor s(0) must lie in [0, 1], got {anchor!r}")
    return x, y, w * (w.size / w.sum())


def _solve_blocks(
    xs: Sequence[np.ndarray],
    ys: Sequence[np.ndarray],
    ws: Sequence[np.ndarray],
    anchors: Sequence[float | None],
    lams: Sequence[float],
    knots: np.ndarray,
    degree: int,
    right_anchors: Sequence[float | None] | None = None,
) -> np.ndarray:
    """Solve K independent spline LPs as one block-diagonal LP; returns ``(K, p)`` coefficients.

    Block k has variables ``[c (p), r+ (n_k), r- (n_k), d+ (q), d- (q)]``, ``q = p − 2``, and
    minimises ``Σ w_i (r+_i + r-_i) + λ_k Σ (d+_j + d-_j)`` subject to
    ``B c + r+ − r- = y`` (fidelity), ``P c − d+ + d- = 0`` (penalty, ``Σ|P c|`` = TV(s′),
    :func:`penalty_matrix`), ``c_{j+1} − c_j ≤ 0`` (monotone), and the bounds ``0 ≤ c ≤ 1``,
    ``c_0 = anchor``, ``c_{p−1} = right_anchor`` (capped at the left anchor so that the
    problem stays feasible).
    The blocks share no variable or constraint, so each block's optimum is its own LP's.
    """
    kk = len(xs)
    p = len(knots) - degree - 1
    q = max(p - 2, 0)
    sizes = np.array([x.shape[0] for x in xs], dtype=np.int64)
    nvar = p + 2 * sizes + 2 * q
    var_off = np.concatenate([[0], np.cumsum(nvar)[:-1]])
    neq = sizes + q
    eq_off = np.concatenate([[0], np.cumsum(neq)[:-1]])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])

    # Fidelity rows, all blocks at once.
    basis = design_matrix(np.concatenate(xs), knots, degree).tocoo()
    blk = np.repeat(np.arange(kk), sizes)  # block of each data point
    local = np.arange(sizes.sum()) - starts[blk]
    brow = eq_off[blk[basis.row]] + local[basis.row]
    rows = [brow, eq_off[blk] + local, eq_off[blk] + local]
    cols = [
        var_off[blk[basis.row]] + basis.col,
        var_off[blk] + p + local,
        var_off[blk] + p + sizes[blk] + local,
    ]
    vals = [basis.data, np.ones(local.size), -np.ones(local.size)]
    ub_rows: list[np.ndarray] = []
    ub_cols: list[np.ndarray] = []
    cost = np.zeros(int(nvar.sum()))
    lb = np.zeros(int(nvar.sum()))
    ub = np.full(int(nvar.sum()), np.inf)
    aq = np.arange(q)
    ap = np.arange(p - 1)
    pen = penalty_matrix(knots, degree)
    pr, pc = np.nonzero(pen)
    pv = pen[pr, pc]
    for k in range(kk):
        v0, e0, n = int(var_off[k]), int(eq_off[k]), int(sizes[k])
        d0 = v0 + p + 2 * n
        if q:
            rows += [e0 + n + pr, e0 + n + aq, e0 + n + aq]
            cols += [v0 + pc, d0 + aq, d0 + q + aq]
            vals += [pv, -np.ones(q), np.ones(q)]
        ub_rows += [k * (p - 1) + ap, k * (p - 1) + ap]
        ub_cols += [v0 + ap, v0 + ap + 1]
        cost[v0 + p : v0 + p + n] = ws[k]
        cost[v0 + p + n : v0 + p + 2 * n] = ws[k]
        cost[d0 : d0 + 2 * q] = lams[k]
        ub[v0 : v0 + p] = 1.0
        if anchors[k] is not None:
            lb[v0] = ub[v0] = anchors[k]
        right = None if right_anchors is None else right_anchors[k]
        if right is not None:
            if anchors[k] is not None:
                right = min(right, anchors[k])
            lb[v0 + p - 1] = ub[v0 + p - 1] = right
    a_eq = sp.csr_array(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
        shape=(int(neq.sum()), int(nvar.sum())),
    )
    b_eq = np.concatenate([np.concatenate([y, np.zeros(q)]) for y in ys])
    a_ub = sp.csr_array(
        (
            np.tile(np.concatenate([-np.ones(p - 1), np.ones(p - 1)]), kk),
            (np.concatenate(ub_rows), np.concatenate(ub_cols)),
        ),
        shape=(kk * (p - 1), int(nvar.sum())),
    )
    res = linprog(
        cost,
        A_ub=a_ub,
        b_ub=np.zeros(kk * (p - 1)),
        A_eq=a_eq,
        b_eq=b_eq,
        bounds=np.column_stack([lb, ub]),
        method="highs",
    )
    if res.status != 0:  # pragma: no cover - the LP is always feasible and bounded
        raise VcrbenchError(f"spline LP failed: {res.message}")
    coefs = np.stack([res.x[v : v + p] for v in var_off])
    # Remove solver-tolerance wiggles (≤ 1e-9) so the curve is exactly monotone and in [0, 1].
    return np.minimum.accumulate(np.clip(coefs, 0.0, 1.0), axis=1)


def fit_many(
    xs: Sequence[np.ndarray],
    ys: Sequence[np.ndarray],
    weights: Sequence[np.ndarray],
    anchors: Sequence[float | None],
    lam: float,
    *,
    right_anchors: Sequence[float | None] | None = None,
    n_knots: int = DEFAULT_N_KNOTS,
    degree: int = DEFAULT_DEGREE,
    chunk: int = BLOCK_CHUNK,
) -> np.ndarray:
    """Fit K splines with one fixed λ (bootstrap replicates); returns ``(K, p)`` coefficients.

    Same arguments as :func:`fit_monotone_spline`, one entry per fit; ``chunk`` fits are solved
    per block-diagonal LP (one solver call), which removes per-call overhead.
    """
    rights = [None] * len(xs) if right_anchors is None else list(right_anchors)
    if not (np.isfinite(lam) and lam >= 0):
        raise VcrbenchError(f"λ must be a non-negative number, got {lam!r}")
    knots = knot_vector(n_knots, degree)
    checked = [
        _check_inputs(x, y, w, a) for x, y, w, a in zip(xs, ys, weights, anchors, strict=True)
    ]
    out = []
    for s in range(0, len(checked), chunk):
        part = checked[s : s + chunk]
        out.append(
            _solve_blocks(
                [c[0] for c in part],
                [c[1] for c in part],
                [c[2] for c in part],
                list(anchors[s : s + chunk]),
                [float(lam)] * len(part),
                knots,
                degree,
                rights[s : s + chunk],
            )
        )
    return np.concatenate(out) if out else np.empty((0, len(knots) - degree - 1))


def schwarz(
    x: np.ndarray, y: np.ndarray, w: np.ndarray, spline: MonotoneSpline
) -> tuple[float, int]:
    """``(SIC, p_λ)`` of a fit: ``log(Σ w|r| / Σ w) + log(n)/(2n) · p_λ`` (−∞ if r ≡ 0)."""
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    r = np.asarray(y, dtype=np.float64) - spline(x)
    mean_abs = float(np.dot(w, np.abs(r)) / w.sum())
    p_lam = int(np.count_nonzero(np.abs(r) <= INTERPOLATION_TOL))
    if mean_abs <= 1e-12:
        return -np.inf, p_lam
    n = x.shape[0]
    return float(np.log(mean_abs) + np.log(n) / (2 * n) * p_lam), p_lam


def fit_monotone_spline(
    x: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    anchor: float | None,
    *,
    lam: float | None = None,
    right_anchor: float | None = None,
    n_knots: int = DEFAULT_N_KNOTS,
    degree: int = DEFAULT_DEGREE,
) -> MonotoneSpline:
    """Fit the monotone non-increasing median smoothing spline.

    Args:
        x: ``(n,)`` centres of the present bins, in [0, 1].
        y: ``(n,)`` rates in [0, 1].
        weights: ``(n,)`` positive bin counts.
        anchor: ``s(0)`` (clean accuracy, or 1 for consistency); None leaves ``s(0)`` free.
        right_anchor: ``s(1)``, or None (free).
        lam: penalty weight λ on TV(s′); None chooses it by SIC over :data:`LAMBDA_GRID`
            (all candidates solved as one block-diagonal LP).
        n_knots: equally spaced knots on [0, 1] (ends included).
        degree: B-spline degree (2: the penalty is exactly λ·TV(s′)).

    Raises:
        VcrbenchError: no data (no present bin) or values out of range.
    """
    x, y, w = _check_inputs(x, y, weights, anchor)
    knots = knot_vector(n_knots, degree)
    if lam is not None:
        if not (np.isfinite(lam) and lam >= 0):
            raise VcrbenchError(f"λ must be a non-negative number, got {lam!r}")
        c = _solve_blocks([x], [y], [w], [anchor], [float(lam)], knots, degree,
                          [right_anchor])[0]
        return MonotoneSpline(knots, degree, c, float(lam))
    grid = LAMBDA_GRID[::-1]  # largest first: ties keep the smoother fit
    k = grid.size
    coefs = _solve_blocks([x] * k, [y] * k, [w] * k, [anchor] * k, list(grid), knots, degree,
                          [right_anchor] * k)
    best: tuple[float, int] | None = None
    for i in range(k):
        sic, _ = schwarz(x, y, w, MonotoneSpline(knots, degree, coefs[i], float(grid[i])))
        if best is None or (np.isfinite(sic) and (not np.isfinite(best[0]) or sic < best[0])):
            best = (sic, i)
    assert best is not None
    i = best[1]
    return MonotoneSpline(knots, degree, coefs[i], float(grid[i]))
