"""Areas, HMRI and MRSI (paper, Definitions 1–2), with closed-form answers."""

from __future__ import annotations

import numpy as np
import pytest

from vcrbench.errors import VcrbenchError
from vcrbench.metrics import (
    DENSE_GRID,
    area,
    grid_indices,
    hmri,
    human_model_areas,
    mrsi,
    positive_area,
)
from vcrbench.splines import MonotoneSpline, knot_vector


def human(v):
    return 1.0 - v


def model_above(v):
    return 1.0 - v / 2.0


def test_closed_form_linear_curves() -> None:
    # human 1 − v, model 1 − v/2: A_h = 1/2, A_m = 3/4, model above everywhere.
    a = human_model_areas(human, model_above)
    assert a["A_h"] == pytest.approx(0.5, abs=1e-9)
    assert a["A_m"] == pytest.approx(0.75, abs=1e-9)
    assert a["A_h_gt_m"] == 0.0
    assert a["A_m_gt_h"] == pytest.approx(0.25, abs=1e-9)
    assert hmri(human, model_above) == 1.0
    assert mrsi(human, model_above) == pytest.approx(1 / 3, abs=1e-9)
    # swapped roles: the model (1 − v) is below the human (1 − v/2)
    assert hmri(model_above, human) == pytest.approx(1 - 0.25 / 0.75, abs=1e-9)
    assert mrsi(model_above, human) == 0.0


def test_crossing_curves_closed_form() -> None:
    # human 0.8 − 0.6 v and model 1 − v cross at v = 0.5:
    # A_h = 0.5, A_m = 0.5, model leads on [0, .5] by ∫(0.2 − 0.4v) = 0.05, human on [.5, 1]: 0.05.
    h = lambda v: 0.8 - 0.6 * v  # noqa: E731
    m = lambda v: 1.0 - v  # noqa: E731
    a = human_model_areas(h, m)
    assert a["A_h_gt_m"] == pytest.approx(0.05, abs=1e-9)
    assert a["A_m_gt_h"] == pytest.approx(0.05, abs=1e-9)
    assert hmri(h, m) == pytest.approx(0.9, abs=1e-9)
    assert mrsi(h, m) == pytest.approx(0.1, abs=1e-9)


def test_identical_curves() -> None:
    assert hmri(human, human) == 1.0
    assert mrsi(human, human) == 0.0


def test_degenerate_conventions() -> None:
    zero = lambda v: np.zeros_like(v)  # noqa: E731
    assert hmri(zero, human) == 1.0  # A_h = 0: nothing to lose
    assert mrsi(human, zero) == 0.0  # A_m = 0: no lead
    assert hmri(human, zero) == 0.0
    assert mrsi(zero, human) == 1.0


def _spline(coefs) -> MonotoneSpline:
    c = np.asarray(coefs, dtype=float)
    return MonotoneSpline(knot_vector(len(c) - 1, 2), 2, c, 0.0)


def test_spline_curves_scenarios_and_ranges() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        c_h = np.sort(rng.uniform(0, 1, 12))[::-1]
        c_m = np.sort(rng.uniform(0, 1, 12))[::-1]
        h, m = _spline(c_h), _spline(c_m)
        x, y = hmri(h, m), mrsi(h, m)
        assert 0.0 <= x <= 1.0 and 0.0 <= y < 1.0
        above = _spline(np.maximum(c_h, c_m))  # coefficientwise max ≥ both curves
        below = _spline(np.minimum(c_h, c_m))
        if not np.array_equal(above.coefficients, c_h):
            assert hmri(h, above) == 1.0 and mrsi(h, above) > 0.0
        if not np.array_equal(below.coefficients, c_h):
            assert mrsi(h, below) == 0.0 and hmri(h, below) < 1.0


def test_dense_grid_is_accurate_to_the_4th_decimal() -> None:
    """Positive parts of spline differences on the 20001-point grid vs a 1e6-point reference."""
    rng = np.random.default_rng(1)
    fine = np.linspace(0, 1, 1_000_001)
    for _ in range(3):
        h = _spline(np.sort(rng.uniform(0, 1, 22))[::-1])
        m = _spline(np.sort(rng.uniform(0, 1, 22))[::-1])
        ref = float(positive_area(h(fine) - m(fine), fine))
        assert human_model_areas(h, m)["A_h_gt_m"] == pytest.approx(ref, abs=1e-7)
        assert area(h) == pytest.approx(np.trapezoid(h(fine), fine), abs=1e-9)


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


def test_grid_indices_match_callable_versions() -> None:
    h = _spline([0.9, 0.9, 0.85, 0.7, 0.3, 0.1, 0.05])
    m = _spline([0.95, 0.8, 0.6, 0.5, 0.4, 0.3, 0.2])
    g = DENSE_GRID
    idx = grid_indices(np.stack([h(g)] * 3), np.stack([m(g)] * 3), g)
    assert idx["HMRI"].shape == (3,)
    assert idx["HMRI"][0] == pytest.approx(hmri(h, m), abs=1e-8)
    assert idx["MRSI"][0] == pytest.approx(mrsi(h, m), abs=1e-8)
