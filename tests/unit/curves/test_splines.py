"""The monotone median smoothing spline: shape, anchor, accuracy, LP optimality."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from scipy.interpolate import BSpline
from scipy.optimize import isotonic_regression, linprog

from vcrbench.curves.binning import bin_rates
from vcrbench.curves.splines import (
    LAMBDA_GRID,
    MonotoneSpline,
    design_matrix,
    fit_many,
    fit_monotone_spline,
    knot_vector,
    penalty_matrix,
)
from vcrbench.errors import VcrbenchError

TRUE: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "linear": lambda v: 0.9 - 0.8 * v,
    "logistic": lambda v: 0.8 / (1.0 + np.exp((v - 0.6) * 12.0)),
    "step": lambda v: np.where(v < 0.5, 0.9, 0.2),
}
FINE = np.linspace(0.0, 1.0, 200_001)


def true_area(name: str) -> float:
    return float(np.trapezoid(TRUE[name](FINE), FINE))


def simulate(name: str, n: int, seed: int, bins: int = 40, min_count: int = 20):
    rng = np.random.default_rng(seed)
    dv = rng.uniform(0.0, 1.0, n)
    ok = rng.uniform(size=n) < TRUE[name](dv)
    return bin_rates(dv, ok, bins, min_count)


def fit_rates(r, anchor, **kw) -> MonotoneSpline:
    p = r.present
    return fit_monotone_spline(r.centers[p], r.rates[p], r.counts[p], anchor, **kw)


def assert_shape(s: MonotoneSpline, anchor: float | None) -> None:
    v = np.linspace(0, 1, 5001)
    y = s(v)
    assert np.all(np.diff(y) <= 1e-12), "not non-increasing"
    assert y.min() >= 0.0 and y.max() <= 1.0
    assert np.all(np.diff(s.coefficients) <= 0)
    if anchor is not None:
        assert s(np.array([0.0]))[0] == pytest.approx(anchor, abs=1e-9)


@pytest.mark.parametrize("name", sorted(TRUE))
def test_shape_anchor_and_area_at_large_n(name: str) -> None:
    anchor = float(TRUE[name](np.array(0.0)))
    r = simulate(name, 400_000, seed=1)
    s = fit_rates(r, anchor)
    assert_shape(s, anchor)
    assert s.lam in LAMBDA_GRID
    assert abs(s.integral() - true_area(name)) < 0.01


@pytest.mark.parametrize("name", sorted(TRUE))
def test_shape_at_realistic_counts(name: str) -> None:
    r = simulate(name, 2000, seed=2)
    for anchor in (float(TRUE[name](np.array(0.0))), 1.0, None):
        assert_shape(fit_rates(r, anchor), anchor)


def test_integral_is_exact() -> None:
    s = fit_rates(simulate("logistic", 2000, seed=3), 0.8)
    assert s.integral() == pytest.approx(np.trapezoid(s(FINE), FINE), abs=1e-9)


def test_deterministic() -> None:
    r = simulate("logistic", 2000, seed=4)
    a, b = fit_rates(r, 0.8), fit_rates(r, 0.8)
    np.testing.assert_array_equal(a.coefficients, b.coefficients)
    assert a.lam == b.lam


@pytest.mark.parametrize("name", ["linear", "logistic"])
def test_agrees_with_isotonic_regression(name: str) -> None:
    """Independent reference: weighted decreasing isotonic regression of the bin rates.

    Both estimate the same monotone curve; on smooth data with all 40 bins present the areas
    (isotonic: midpoint rule over the bins) agree within 0.005 at N = 100 000.
    """
    r = simulate(name, 100_000, seed=5)
    iso = isotonic_regression(r.rates, weights=r.counts.astype(float), increasing=False).x
    s = fit_rates(r, float(TRUE[name](np.array(0.0))))
    assert abs(s.integral() - iso.mean()) < 0.005
    assert np.max(np.abs(s(r.centers) - iso)) < 0.05


def _objective(c, basis, y, w, lam, knots):
    """Σ w |y − B c| + λ TV(s′), TV from the knot values of the piecewise-linear s′."""
    s = MonotoneSpline(knots, 2, np.asarray(c, dtype=float), lam)
    inner = np.unique(knots)
    slopes = BSpline(knots, np.asarray(c, dtype=float), 2).derivative()(inner)
    return float(w @ np.abs(y - basis @ c) + lam * np.abs(np.diff(slopes)).sum()) + 0 * s.lam


def _alternative_lp(basis, y, w, lam, knots, anchor):
    """Same problem, other formulation: increments δ ≥ 0 (c = c0 − cumsum δ), epigraph
    inequalities for |r| and |D²c|, interior-point solver."""
    n, p = basis.shape
    lmat = np.column_stack([np.ones(p), -np.tril(np.ones((p, p - 1)), -1)])  # c = lmat @ z
    d2 = penalty_matrix(knots, 2) @ lmat  # (p-2, p)
    bl = basis @ lmat
    q = p - 2
    # z = [c0, δ (p-1), t (n), u (q)]
    nz = p + n + q
    cost = np.concatenate([np.zeros(p), w, np.full(q, lam)])
    a = np.zeros((2 * n + 2 * q + 1, nz))
    b = np.zeros(2 * n + 2 * q + 1)
    a[:n, :p], a[:n, p : p + n], b[:n] = bl, -np.eye(n), y  # Bc − t ≤ y
    a[n : 2 * n, :p], a[n : 2 * n, p : p + n], b[n : 2 * n] = -bl, -np.eye(n), -y
    a[2 * n : 2 * n + q, :p], a[2 * n : 2 * n + q, p + n :] = d2, -np.eye(q)
    a[2 * n + q : 2 * n + 2 * q, :p], a[2 * n + q : 2 * n + 2 * q, p + n :] = -d2, -np.eye(q)
    a[-1, 1:p] = 1.0  # c_last = c0 − Σδ ≥ 0
    b[-1] = anchor
    bounds = [(anchor, anchor)] + [(0, None)] * (nz - 1)
    res = linprog(cost, A_ub=a, b_ub=b, bounds=bounds, method="highs-ipm")
    assert res.status == 0
    return lmat @ res.x[:p], res.fun


@pytest.mark.parametrize("lam", [0.0, 0.01, 0.3, 5.0])
def test_lp_is_optimal_against_other_formulation_and_random_search(lam: float) -> None:
    rng = np.random.default_rng(7)
    x = np.array([0.1, 0.3, 0.5, 0.7, 0.9])
    y = np.array([0.85, 0.9, 0.4, 0.45, 0.1])
    counts = np.array([30.0, 25.0, 40.0, 20.0, 35.0])
    w = counts * counts.size / counts.sum()
    knots = knot_vector(5, 2)
    basis = design_matrix(x, knots, 2).toarray()
    s = fit_monotone_spline(x, y, counts, 0.95, lam=lam, n_knots=5)
    ours = _objective(s.coefficients, basis, y, w, lam, knots)
    c_alt, obj_alt = _alternative_lp(basis, y, w, lam, knots, 0.95)
    assert ours == pytest.approx(obj_alt, abs=1e-6)
    assert _objective(c_alt, basis, y, w, lam, knots) == pytest.approx(obj_alt, abs=1e-6)
    # brute force: no random feasible (monotone, in [0, 1], anchored) point does better
    p = basis.shape[1]
    for _ in range(1000):
        steps = rng.dirichlet(np.ones(p)) * rng.uniform(0, 0.95)
        c = 0.95 - np.concatenate([[0.0], np.cumsum(steps[: p - 1])])
        assert _objective(c, basis, y, w, lam, knots) >= ours - 1e-9
    # and local perturbations of the optimum that stay feasible do not improve it
    for _ in range(1000):
        c = s.coefficients + rng.normal(0, 0.01, p)
        c[0] = 0.95
        c = np.clip(np.minimum.accumulate(c), 0, 1)
        assert _objective(c, basis, y, w, lam, knots) >= ours - 1e-9


def test_penalty_is_total_variation_of_the_derivative() -> None:
    knots = knot_vector(11, 2)
    c = np.sort(np.random.default_rng(0).uniform(0, 1, 12))[::-1]
    s = MonotoneSpline(knots, 2, c, 0.0)
    v = np.linspace(0, 1, 100_001)
    deriv = np.gradient(s(v), v)
    tv = np.abs(np.diff(deriv)).sum()
    pen = penalty_matrix(knots, 2)
    assert tv == pytest.approx(np.abs(pen @ c).sum(), rel=1e-3)
    # inside, the penalty is the second difference over h; the clamped ends double the slope
    np.testing.assert_allclose(pen[1:-1], np.diff(np.eye(12), 2, axis=0)[1:-1] / 0.1, atol=1e-9)


def test_large_lambda_gives_a_straight_line_and_small_lambda_follows_the_data() -> None:
    r = simulate("logistic", 20_000, seed=8)
    stiff = fit_rates(r, 0.8, lam=100.0)
    assert np.abs(penalty_matrix(stiff.knots, 2) @ stiff.coefficients).max() < 1e-6  # s′ const
    loose = fit_rates(r, 0.8, lam=1e-5)
    p = r.present
    resid = lambda s: np.abs(s(r.centers[p]) - r.rates[p]).mean()  # noqa: E731
    assert resid(loose) < resid(stiff)


def test_missing_bins_are_bridged() -> None:
    r = simulate("logistic", 4000, seed=9)
    keep = r.present.copy()
    keep[10:25] = False  # a 0.375-wide gap
    s = fit_monotone_spline(r.centers[keep], r.rates[keep], r.counts[keep], 0.8)
    assert_shape(s, 0.8)
    assert abs(s.integral() - true_area("logistic")) < 0.05


def test_single_present_bin_with_anchor() -> None:
    s = fit_monotone_spline(np.array([0.5]), np.array([0.4]), np.array([30]), 0.9)
    assert_shape(s, 0.9)
    assert abs(s(np.array([0.5]))[0] - 0.4) <= 0.05 + 1e-9
    free = fit_monotone_spline(np.array([0.5]), np.array([0.4]), np.array([30]), None)
    assert free(np.array([0.5]))[0] == pytest.approx(0.4, abs=1e-9)


def test_no_present_bin_is_a_clear_error() -> None:
    with pytest.raises(VcrbenchError, match="no bin has at least L samples.*sampling.n"):
        fit_monotone_spline(np.array([]), np.array([]), np.array([]), 0.9)


@pytest.mark.parametrize(
    ("x", "y", "w", "anchor"),
    [
        ([0.5], [1.2], [10], 0.9),
        ([1.5], [0.2], [10], 0.9),
        ([0.5], [0.2], [0], 0.9),
        ([0.5], [0.2], [10], 1.1),
        ([0.5, 0.6], [0.2], [10], 0.9),
    ],
)
def test_bad_inputs(x, y, w, anchor) -> None:
    with pytest.raises(VcrbenchError):
        fit_monotone_spline(np.array(x), np.array(y), np.array(w), anchor)


def test_call_rejects_values_outside_unit_interval() -> None:
    s = fit_monotone_spline(np.array([0.5]), np.array([0.4]), np.array([30]), 0.9)
    with pytest.raises(VcrbenchError):
        s(np.array([1.01]))


def test_fit_many_equals_single_fits() -> None:
    rs = [simulate("logistic", 2000, seed=20 + i) for i in range(6)]
    xs = [r.centers[r.present] for r in rs]
    ys = [r.rates[r.present] for r in rs]
    ws = [r.counts[r.present] for r in rs]
    batch = fit_many(xs, ys, ws, [0.8] * 6, 0.05, chunk=4)
    single = [
        fit_monotone_spline(x, y, w, 0.8, lam=0.05) for x, y, w in zip(xs, ys, ws, strict=True)
    ]
    knots = knot_vector()
    for b, s, x, y, w in zip(batch, single, xs, ys, ws, strict=True):
        basis = design_matrix(x, knots, 2).toarray()
        wn = w * w.size / w.sum()
        # same optimum (the vertex may differ only where the L1 optimum is not unique)
        assert _objective(b, basis, y, wn, 0.05, knots) == pytest.approx(
            _objective(s.coefficients, basis, y, wn, 0.05, knots), abs=1e-7
        )
