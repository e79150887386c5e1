"""Areas under curves, with closed-form answers and exact references: the one place where a
curve's R is computed, whether from a spline's coefficients or from its tabulated values."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from vcrbench.curves.areas import (
    GRID,
    area,
    positive_area,
    spline_integral_weights,
    tabulated_areas,
    trapezoid_area,
)
from vcrbench.curves.bootstrap import estimate_curve
from vcrbench.curves.splines import DEFAULT_DEGREE, DEFAULT_N_KNOTS, MonotoneSpline, knot_vector
from vcrbench.curves.tables import REPLICATES_SCHEMA, curve_rows, replicate_areas
from vcrbench.errors import VcrbenchError


def human(v):
    return 1.0 - v


def _random_spline(rng: np.random.Generator) -> MonotoneSpline:
    knots = knot_vector(DEFAULT_N_KNOTS, DEFAULT_DEGREE)
    coefs = np.sort(rng.uniform(0, 1, len(knots) - DEFAULT_DEGREE - 1))[::-1]
    return MonotoneSpline(knots, DEFAULT_DEGREE, coefs, 0.0)


def test_area_of_generic_callables() -> None:
    assert area(human) == pytest.approx(0.5, abs=1e-12)
    assert area(lambda v: np.exp(-v)) == pytest.approx(1 - np.exp(-1), abs=1e-8)
    with pytest.raises(VcrbenchError):
        area(0.5)  # type: ignore[arg-type]


def test_positive_area_cells() -> None:
    g = np.array([0.0, 1.0])
    assert positive_area(np.array([0.5, -0.5]), g) == pytest.approx(0.125)
    assert positive_area(np.array([-0.5, 0.5]), g) == pytest.approx(0.125)
    assert positive_area(np.array([0.0, 0.5]), g) == pytest.approx(0.25)
    assert positive_area(np.array([-0.5, 0.0]), g) == 0.0


def test_spline_integral_weights_give_the_exact_integral() -> None:
    rng = np.random.default_rng(3)
    fine = np.linspace(0.0, 1.0, 2_000_001)
    for _ in range(3):
        spline = _random_spline(rng)
        weights = spline_integral_weights(spline.knots, spline.degree)
        assert weights.sum() == pytest.approx(1.0, abs=1e-15)  # B-splines sum to one
        exact = float(spline.coefficients @ weights)
        assert spline.integral() == pytest.approx(exact, abs=1e-15)
        assert exact == pytest.approx(trapezoid_area(spline(fine), fine), abs=1e-12)


def test_tabulated_areas_are_exact_for_the_fitted_splines() -> None:
    """Simpson on GRID equals the coefficient integral: the knots fall on even grid points."""
    rng = np.random.default_rng(4)
    splines = [_random_spline(rng) for _ in range(20)]
    values = np.stack([s(GRID) for s in splines])
    exact = np.array([s.integral() for s in splines])
    assert tabulated_areas(values) == pytest.approx(exact, abs=1e-13)
    # the trapezoid rule is not exact (errors ~1e-7): the test can tell the two apart
    assert np.max(np.abs(trapezoid_area(values, GRID) - exact)) > 1e-9


def test_tabulated_areas_reject_an_even_number_of_points() -> None:
    with pytest.raises(VcrbenchError, match="odd number"):
        tabulated_areas(np.ones(4), np.linspace(0, 1, 4))
    with pytest.raises(VcrbenchError):
        tabulated_areas(np.ones(10))  # not on GRID


def test_replicate_areas_of_a_stored_table_equal_the_bootstrap_areas() -> None:
    """The retraining table and the overlap report read replicates back from Parquet: their
    areas are the ones R's own interval was computed from."""
    rng = np.random.default_rng(5)
    dv = rng.uniform(0, 1, 3000)
    ok = rng.uniform(0, 1, 3000) < 0.9 - 0.7 * dv
    estimate = estimate_curve(dv, ok, bins=20, min_count=20, anchor=0.9, n_boot=30, seed=1)
    _, rows = curve_rows("accuracy", 1000, estimate)
    rows = rows[::-1] + [{**r, "metric": "consistency"} for r in rows]  # any order, two metrics
    table = pa.Table.from_pylist(rows, schema=REPLICATES_SCHEMA)
    areas = replicate_areas(table, "accuracy", 1000)
    assert areas == pytest.approx(estimate.replicate_areas, abs=1e-12)
    assert replicate_areas(table, "accuracy", 16).size == 0
