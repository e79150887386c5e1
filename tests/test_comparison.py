"""HMRI / MRSI of a model against a human curve from hand-made curve and replicate tables."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from vcrbench.bootstrap import GRID
from vcrbench.comparison import SCHEMA, human_relative
from vcrbench.errors import VcrbenchError
from vcrbench.estimation import CURVES_SCHEMA, REPLICATES_SCHEMA
from vcrbench.metrics import hmri, mrsi


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
