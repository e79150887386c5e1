"""CE / mCE and the balance of benchmarks, reproducing the NOC paper's Tables 2 and 8, and the
errors on bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vcrbench.errors import VcrbenchError
from vcrbench.overlap.corruption_error import balance, corruption_errors, mean_corruption_error

# --- CE and mCE -------------------------------------------------------------------------------


def test_ce_per_severity_is_a_ratio_of_sums():
    ce = corruption_errors(
        {"noise": [0.1, 0.2, 0.3, 0.4, 0.5], "blur": 0.3},
        {"noise": [0.2, 0.3, 0.4, 0.5, 0.6], "blur": 0.6, "fog": 0.5},
    )
    assert list(ce) == ["noise", "blur"]
    assert ce["noise"] == pytest.approx(1.5 / 2.0)  # not the mean of per-severity ratios
    assert ce["blur"] == pytest.approx(0.5)
    assert corruption_errors({"x": [0.3]}, {"x": 0.6}) == {"x": pytest.approx(0.5)}
    assert corruption_errors({"x": np.array([0.2, 0.4])}, {"x": (0.4, 0.4)}) == {
        "x": pytest.approx(0.75)
    }


def test_mce_hand_computed():
    assert mean_corruption_error({"a": 0.5, "b": 1.0, "c": 0.9}) == pytest.approx(0.8)
    ce = corruption_errors({"a": [0.1, 0.3], "b": 0.45}, {"a": [0.2, 0.2], "b": 0.5})
    assert mean_corruption_error(ce) == pytest.approx((1.0 + 0.9) / 2)


# NOC Table 8: CEs (%) on ImageNet-NOC of models trained with one ImageNet-NOC corruption, and
# the printed mCE (%) of each row.
TABLE_8 = {
    "Quant": ([9, 125, 77, 90, 70, 90, 124, 80], 83),
    "Blur": ([79, 7, 61, 72, 82, 90, 132, 106], 79),
    "Vert-Arti": ([79, 133, 4, 63, 80, 84, 119, 104], 83),
    "Rain": ([86, 131, 78, 2, 73, 82, 115, 97], 83),
    "Border": ([89, 123, 71, 73, 8, 74, 118, 89], 81),
    "Shear": ([129, 127, 65, 85, 75, 6, 133, 102], 90),
    "Bright": ([75, 125, 78, 77, 73, 92, 21, 89], 79),
    "Hue": ([83, 139, 91, 96, 74, 101, 116, 1], 88),
}
NOC = ["Quant", "Blur", "Vert-Arti", "Rain", "Border", "Shear", "Bright", "Hue"]


def test_mce_reproduces_paper_table_8():
    for model, (ces, printed) in TABLE_8.items():
        mce = mean_corruption_error({c: v / 100 for c, v in zip(NOC, ces, strict=True)})
        assert round(100 * mce) == printed, model


def test_ce_mce_bad_input():
    with pytest.raises(VcrbenchError, match="'fog'"):
        corruption_errors({"fog": 0.3}, {"noise": 0.5})
    with pytest.raises(VcrbenchError, match="severities"):
        corruption_errors({"fog": [0.3, 0.4]}, {"fog": [0.5, 0.5, 0.5]})
    with pytest.raises(VcrbenchError, match="fractions"):
        corruption_errors({"fog": 45.0}, {"fog": 0.5})
    with pytest.raises(VcrbenchError, match="NaN"):
        corruption_errors({"fog": [0.3, math.nan]}, {"fog": [0.5, 0.5]})
    with pytest.raises(VcrbenchError, match="no error rate"):
        corruption_errors({"fog": []}, {"fog": []})
    with pytest.raises(VcrbenchError, match="sequence"):
        corruption_errors({"fog": "0.3"}, {"fog": 0.5})
    with pytest.raises(VcrbenchError, match="undefined"):
        corruption_errors({"fog": 0.3}, {"fog": 0.0})
    with pytest.raises(VcrbenchError, match="flat"):
        corruption_errors({"fog": [[0.3, 0.4]]}, {"fog": [[0.5, 0.5]]})
    with pytest.raises(VcrbenchError, match="empty"):
        corruption_errors({}, {"fog": 0.5})
    with pytest.raises(VcrbenchError, match="empty"):
        mean_corruption_error({})
    with pytest.raises(VcrbenchError, match="NaN"):
        mean_corruption_error({"a": 0.5, "b": math.nan})
    with pytest.raises(VcrbenchError, match="negative"):
        mean_corruption_error({"a": -0.5})


# --- balance ----------------------------------------------------------------------------------

# NOC Table 2.a: ImageNet-C mCE (%) of models trained with one ImageNet-C corruption (agrees
# with the mCE column of Table 7); Table 2.b: the same for ImageNet-NOC (Table 8).
TABLE_2A = dict(zip(
    ["Gauss", "Shot", "Impul", "Defo", "Glass", "Motion", "Zoom", "Snow", "Frost", "Fog",
     "Bright", "Contr", "Elastic", "Pixel", "Jpeg"],
    [71, 71, 71, 54, 56, 63, 68, 83, 79, 86, 89, 78, 92, 85, 94],
    strict=True,
))
TABLE_2B = dict(zip(NOC, [83, 79, 83, 83, 81, 90, 79, 88], strict=True))


def test_balance_reproduces_paper_section_5_3():
    a = balance(TABLE_2A)
    assert a["range"] == 40 and a["min"] == 54 and a["max"] == 94
    assert round(a["std"], 1) == 12.1  # population std; the sample std would be 12.5
    assert a["mean"] == pytest.approx(76.0)
    b = balance(TABLE_2B)
    assert b["range"] == 11 and b["min"] == 79 and b["max"] == 90
    assert round(b["std"], 1) == 3.7  # the sample std would be 4.0
    # the same in fractions
    frac = balance({k: v / 100 for k, v in TABLE_2A.items()})
    assert frac["range"] == pytest.approx(0.40) and round(frac["std"], 3) == 0.121


def test_balance_hand_computed():
    got = balance({"m1": 1.0, "m2": 3.0})
    assert got == {"range": 2.0, "std": 1.0, "min": 1.0, "max": 3.0, "mean": 2.0}
    assert balance({"m": 0.7}) == {"range": 0.0, "std": 0.0, "min": 0.7, "max": 0.7, "mean": 0.7}


def test_balance_bad_input():
    with pytest.raises(VcrbenchError, match="empty"):
        balance({})
    with pytest.raises(VcrbenchError, match="NaN"):
        balance({"a": 0.5, "b": math.nan})
    with pytest.raises(VcrbenchError, match="finite"):
        balance({"a": math.inf})
    with pytest.raises(VcrbenchError, match="real number"):
        balance({"a": "0.5"})
    with pytest.raises(VcrbenchError, match="mapping"):
        balance([0.5, 0.6])
