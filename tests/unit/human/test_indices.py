"""HMRI and MRSI (paper, Definitions 1–2): closed-form answers for callables, and a model against
a human curve from hand-made curve and replicate tables."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from vcrbench.curves.areas import DENSE_GRID, GRID, area, positive_area
from vcrbench.curves.bootstrap import estimate_curve
from vcrbench.curves.splines import MonotoneSpline, knot_vector
from vcrbench.curves.tables import CURVES_SCHEMA, REPLICATES_SCHEMA, curve_rows
from vcrbench.errors import VcrbenchError
from vcrbench.human.indices import (
    SCHEMA,
    grid_indices,
    hmri,
    human_model_areas,
    human_relative,
    mrsi,
)


def linear_human(v):
    return 1.0 - v


def model_above(v):
    return 1.0 - v / 2.0


def test_closed_form_linear_curves() -> None:
    # human 1 − v, model 1 − v/2: A_h = 1/2, A_m = 3/4, model above everywhere.
    a = human_model_areas(linear_human, model_above)
    assert a["A_h"] == pytest.approx(0.5, abs=1e-9)
    assert a["A_m"] == pytest.approx(0.75, abs=1e-9)
    assert a["A_h_gt_m"] == 0.0
    assert a["A_m_gt_h"] == pytest.approx(0.25, abs=1e-9)
    assert hmri(linear_human, model_above) == 1.0
    assert mrsi(linear_human, model_above) == pytest.approx(1 / 3, abs=1e-9)
    # swapped roles: the model (1 − v) is below the human (1 − v/2)
    assert hmri(model_above, linear_human) == pytest.approx(1 - 0.25 / 0.75, abs=1e-9)
    assert mrsi(model_above, linear_human) == 0.0


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


def test_identical_callable_curves() -> None:
    assert hmri(linear_human, linear_human) == 1.0
    assert mrsi(linear_human, linear_human) == 0.0


def test_degenerate_conventions() -> None:
    zero = lambda v: np.zeros_like(v)  # noqa: E731
    assert hmri(zero, linear_human) == 1.0  # A_h = 0: nothing to lose
    assert mrsi(linear_human, zero) == 0.0  # A_m = 0: no lead
    assert hmri(linear_human, zero) == 0.0
    assert mrsi(zero, linear_human) == 1.0


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






def test_grid_indices_match_callable_versions() -> None:
    h = _spline([0.9, 0.9, 0.85, 0.7, 0.3, 0.1, 0.05])
    m = _spline([0.95, 0.8, 0.6, 0.5, 0.4, 0.3, 0.2])
    g = DENSE_GRID
    idx = grid_indices(np.stack([h(g)] * 3), np.stack([m(g)] * 3), g)
    assert idx["HMRI"].shape == (3,)
    assert idx["HMRI"][0] == pytest.approx(hmri(h, m), abs=1e-8)
    assert idx["MRSI"][0] == pytest.approx(mrsi(h, m), abs=1e-8)


def human(v):
    return 0.8 - 0.6 * np.asarray(v)


def above(v):
    return 0.9 - 0.5 * np.asarray(v)


def below(v):
    return 0.7 - 0.7 * np.asarray(v)


def crossing(v):
    # crosses the human curve at v = 0.5: leads by ∫(0.2 − 0.4 v) = 0.05 on [0, 0.5]
    return 1.0 - np.asarray(v)


def _curves(parts: list[tuple[str, int, object]], grid: np.ndarray = GRID) -> pa.Table:
    rows = []
    for metric, classes, curve in parts:
        s = np.asarray(curve(grid), dtype=np.float64)
        for v, value in zip(grid, s, strict=True):
            rows.append({"metric": metric, "classes": classes, "v": float(v), "s": float(value),
                         "lo83": float(value), "hi83": float(value), "lo95": float(value),
                         "hi95": float(value)})
    return pa.Table.from_pylist(rows, schema=CURVES_SCHEMA)


def _replicates(parts: list[tuple[str, int, object]], n: int = 40, noise: float = 0.0,
                seed: int = 0, grid: np.ndarray = GRID) -> pa.Table:
    rng = np.random.default_rng(seed)
    rows = []
    for metric, classes, curve in parts:
        s = np.asarray(curve(grid), dtype=np.float64)
        for b in range(n):
            values = np.clip(s + rng.normal(0.0, noise), 0.0, 1.0) if noise else s
            rows.append({"metric": metric, "classes": classes, "replicate": b,
                         "values": [float(x) for x in values]})
    return pa.Table.from_pylist(rows, schema=REPLICATES_SCHEMA)


def _compare(model_curve, human_curve=human, *, noise: float = 0.0, n: int = 40,
             model_extra: list | None = None) -> list[dict]:
    model_parts = [("accuracy", 16, model_curve), *(model_extra or [])]
    human_parts = [("accuracy", 16, human_curve)]
    table = human_relative(
        _curves(model_parts), _replicates(model_parts, n, noise, seed=1),
        _curves(human_parts), _replicates(human_parts, n, noise, seed=2),
        model="m", corruption="c", source="humans",
    )
    assert table.schema == SCHEMA
    return table.to_pylist()


def test_model_above_the_humans():
    (row,) = _compare(above)
    assert row["HMRI"] == 1.0 and row["MRSI"] > 0
    # A_m = 0.65, A_h = 0.5, lead of the model 0.15
    assert row["A_h"] == pytest.approx(0.5, abs=1e-9)
    assert row["A_m"] == pytest.approx(0.65, abs=1e-9)
    assert row["MRSI"] == pytest.approx(0.15 / 0.65, abs=1e-9)
    assert (row["model"], row["corruption"], row["metric"], row["classes"],
            row["human_source"]) == ("m", "c", "accuracy", 16, "humans")


def test_model_below_the_humans():
    (row,) = _compare(below)
    assert row["MRSI"] == 0.0 and row["HMRI"] < 1
    # A_m = 0.35, human lead 0.15 of A_h = 0.5
    assert row["HMRI"] == pytest.approx(1 - 0.15 / 0.5, abs=1e-9)


def test_identical_curves():
    (row,) = _compare(human)
    assert row["HMRI"] == 1.0 and row["MRSI"] == 0.0
    assert (row["HMRI_lo"], row["HMRI_hi"], row["MRSI_lo"], row["MRSI_hi"]) == (1, 1, 0, 0)


@pytest.mark.parametrize("model_curve", [above, below, crossing, human])
def test_point_values_agree_with_the_callable_metrics(model_curve):
    (row,) = _compare(model_curve)
    assert row["HMRI"] == pytest.approx(hmri(human, model_curve), abs=1e-4)
    assert row["MRSI"] == pytest.approx(mrsi(human, model_curve), abs=1e-4)


def test_crossing_curves_closed_form_and_interval():
    (row,) = _compare(crossing, noise=0.01, n=200)
    assert row["HMRI"] == pytest.approx(0.9, abs=1e-6)
    assert row["MRSI"] == pytest.approx(0.1, abs=1e-6)
    assert row["HMRI_lo"] <= row["HMRI"] <= row["HMRI_hi"]
    assert row["MRSI_lo"] <= row["MRSI"] <= row["MRSI_hi"]
    assert row["HMRI_lo"] < row["HMRI_hi"] and row["MRSI_lo"] < row["MRSI_hi"]
    assert row["HMRI_hi"] - row["HMRI_lo"] < 0.2 and row["MRSI_hi"] - row["MRSI_lo"] < 0.2


def test_only_the_16_class_rows_of_the_model_are_used():
    # the 1000-class accuracy is far below the humans and comes first in the table
    extra = [("accuracy", 1000, lambda v: np.zeros_like(v)),
             ("consistency", 1000, lambda v: np.ones_like(v))]
    model_parts = [extra[0], ("accuracy", 16, above), extra[1]]
    human_parts = [("accuracy", 16, human), ("consistency", 16, human)]
    table = human_relative(
        _curves(model_parts), _replicates(model_parts, 10),
        _curves(human_parts), _replicates(human_parts, 10),
        model="m", corruption="c", source="h",
    ).to_pylist()
    # consistency: the model has no 16-class row, so no comparison
    assert [r["metric"] for r in table] == ["accuracy"]
    assert table[0]["HMRI"] == 1.0
    assert table[0]["A_m"] == pytest.approx(0.65, abs=1e-9)
    assert table[0]["HMRI_lo"] == 1.0  # 1000-class replicates would give 0


def test_mismatched_grids_are_an_error():
    other = np.linspace(0.0, 1.0, 501)
    parts = [("accuracy", 16, above)]
    with pytest.raises(VcrbenchError, match="same Δv grid"):
        human_relative(
            _curves(parts, other), _replicates(parts, 5, grid=other),
            _curves([("accuracy", 16, human)]), _replicates([("accuracy", 16, human)], 5),
            model="m", corruption="c", source="h",
        )
    shifted = np.linspace(0.0, 0.999, GRID.size)
    with pytest.raises(VcrbenchError, match="same Δv grid"):
        human_relative(
            _curves(parts, shifted), _replicates(parts, 5, grid=shifted),
            _curves([("accuracy", 16, human)]), _replicates([("accuracy", 16, human)], 5),
            model="m", corruption="c", source="h",
        )


def test_no_replicates_is_an_error():
    parts = [("accuracy", 16, above)]
    with pytest.raises(VcrbenchError, match="no bootstrap replicates"):
        human_relative(
            _curves(parts), _replicates(parts, 0),
            _curves([("accuracy", 16, human)]), _replicates([("accuracy", 16, human)], 5),
            model="m", corruption="c", source="h",
        )


def _estimated_tables(curve, n: int, seed: int, anchor: float) -> tuple[pa.Table, pa.Table]:
    """Curves and replicates tables (16-class accuracy) of a curve estimated from simulated
    trials of the true ``curve``."""
    rng = np.random.default_rng(seed)
    dv = rng.uniform(0.0, 1.0, n)
    ok = rng.uniform(size=n) < curve(dv)
    estimate = estimate_curve(dv, ok, bins=20, min_count=20, anchor=anchor, n_boot=100,
                              seed=seed)
    curves, replicates = curve_rows("accuracy", 16, estimate)
    return (pa.Table.from_pylist(curves, schema=CURVES_SCHEMA),
            pa.Table.from_pylist(replicates, schema=REPLICATES_SCHEMA))


def test_paired_intervals_of_estimated_curves() -> None:
    logistic = lambda v: 0.9 / (1.0 + np.exp((v - 0.5) * 10.0))  # noqa: E731
    better = lambda v: np.minimum(1.0, logistic(v) + 0.08)  # noqa: E731
    h_curves, h_reps = _estimated_tables(logistic, 3000, 8, 0.9)
    m_curves, m_reps = _estimated_tables(better, 3000, 9, 0.98)

    def indices(model, human):
        row = human_relative(*model, *human, model="m", corruption="c", source="s").to_pylist()
        return row[0]

    up = indices((m_curves, m_reps), (h_curves, h_reps))
    assert up["HMRI"] > 0.97 and up["MRSI"] > 0.05
    assert 0 <= up["HMRI_lo"] <= up["HMRI_hi"] <= 1 and 0 <= up["MRSI_lo"] <= up["MRSI_hi"] < 1
    down = indices((h_curves, h_reps), (m_curves, m_reps))  # the model is below the humans
    assert down["MRSI"] < 0.03 and down["HMRI"] < 0.9
    assert down["HMRI_lo"] <= down["HMRI"] <= down["HMRI_hi"]
    same = indices((h_curves, h_reps), (h_curves, h_reps))
    assert same["HMRI"] == 1.0 and same["MRSI"] == 0.0
    assert same["HMRI_lo"] == 1.0 and same["MRSI_hi"] == 0.0
