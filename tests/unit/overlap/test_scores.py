"""Corruption overlap (NOC paper): robustness and overlapping scores (Eq. (2)), hand-computed,
on random tables, and the errors on bad input."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from vcrbench.errors import VcrbenchError
from vcrbench.overlap.scores import overlap_matrix, overlap_score, robustness_score

# --- helpers ----------------------------------------------------------------------------------


def table(std: dict[str, float], trained: dict[str, dict[str, float]]) -> dict:
    """``r[(model, corruption)]`` from the standard model's row and each trained model's row."""
    r = {("standard", c): v for c, v in std.items()}
    for model, row in trained.items():
        r.update({(model, c): v for c, v in row.items()})
    return r


def random_table(rng: np.random.Generator, names: list[str]) -> dict:
    """Random robustness scores where every augmentation helps its own corruption."""
    r = {}
    for c in names:
        base = rng.uniform(0.3, 0.8)
        r[("standard", c)] = base
        r[(c, c)] = base + rng.uniform(0.05, 0.4)
    for a in names:
        for b in names:
            if a != b:
                r[(a, b)] = r[("standard", b)] + rng.uniform(-0.2, 0.4)
    return r


# --- robustness score -------------------------------------------------------------------------


def test_robustness_score_is_the_accuracy_ratio():
    assert robustness_score(0.45, 0.9) == pytest.approx(0.5)
    assert robustness_score(0.0, 0.7) == 0.0
    assert robustness_score(72, 80) == pytest.approx(0.9)  # any unit shared by both


@pytest.mark.parametrize(
    "corrupted, clean",
    [(0.5, 0.0), (0.5, -0.1), (math.nan, 0.8), (0.5, math.nan), (-0.1, 0.8), ("0.5", 0.8),
     (True, 0.8), (0.5, math.inf)],
)
def test_robustness_score_rejects_bad_accuracies(corrupted, clean):
    with pytest.raises(VcrbenchError):
        robustness_score(corrupted, clean)


# --- overlapping score, Eq. (2) ---------------------------------------------------------------


def test_overlap_hand_computed():
    # ratio_12 = (R_c2^m1 - R_c2^std) / (R_c2^m2 - R_c2^std) = (0.7 - 0.6) / (0.8 - 0.6) = 0.5
    # ratio_21 = (R_c1^m2 - R_c1^std) / (R_c1^m1 - R_c1^std) = (0.6 - 0.5) / (0.9 - 0.5) = 0.25
    r = table({"a": 0.5, "b": 0.6}, {"a": {"a": 0.9, "b": 0.7}, "b": {"a": 0.6, "b": 0.8}})
    assert overlap_score(r, "a", "b") == pytest.approx(0.375, abs=1e-15)
    assert overlap_score(r, "b", "a") == pytest.approx(0.375, abs=1e-15)


def test_overlap_from_accuracies():
    clean = {"standard": 0.80, "a": 0.78, "b": 0.76}
    acc = {
        ("standard", "a"): 0.40, ("standard", "b"): 0.48,
        ("a", "a"): 0.702, ("a", "b"): 0.456,
        ("b", "a"): 0.57, ("b", "b"): 0.684,
    }
    r = {k: robustness_score(v, clean[k[0]]) for k, v in acc.items()}
    # R: standard a 0.5, b 0.6; m_a: a 0.9, b 0.58462; m_b: a 0.75, b 0.9
    # O = (( 0.58462 - 0.6) / 0.3 + (0.75 - 0.5) / 0.4) / 2 = (-0.05128 + 0.625) / 2
    assert overlap_score(r, "a", "b") == pytest.approx(0.286859, abs=1e-6)


def test_overlap_with_itself_is_one():
    rng = np.random.default_rng(1)
    for _ in range(200):
        r = random_table(rng, ["a", "b"])
        assert overlap_score(r, "a", "a") == 1.0
        assert overlap_score(r, "b", "b") == 1.0


def test_no_transfer_gives_zero():
    # the c1-trained model is exactly as robust to c2 as the standard model, and vice versa
    r = table({"a": 0.5, "b": 0.6}, {"a": {"a": 0.9, "b": 0.6}, "b": {"a": 0.5, "b": 0.8}})
    assert overlap_score(r, "a", "b") == 0.0


def test_full_transfer_gives_one():
    r = table({"a": 0.5, "b": 0.6}, {"a": {"a": 0.9, "b": 0.8}, "b": {"a": 0.9, "b": 0.8}})
    assert overlap_score(r, "a", "b") == pytest.approx(1.0)


def test_negative_transfer_is_clipped_at_zero():
    # both augmentations hurt the other corruption: ratios -0.5 and -0.25
    r = table({"a": 0.5, "b": 0.6}, {"a": {"a": 0.9, "b": 0.5}, "b": {"a": 0.4, "b": 0.8}})
    assert overlap_score(r, "a", "b") == 0.0
    # one helps a little (+0.25), the other hurts more (-0.5): the mean is negative -> 0
    r = table({"a": 0.5, "b": 0.6}, {"a": {"a": 0.9, "b": 0.5}, "b": {"a": 0.6, "b": 0.8}})
    assert overlap_score(r, "a", "b") == 0.0
    # one helps (+0.5), the other hurts less (-0.25): not clipped, (0.5 - 0.25) / 2
    r = table({"a": 0.5, "b": 0.6}, {"a": {"a": 0.9, "b": 0.7}, "b": {"a": 0.4, "b": 0.8}})
    assert overlap_score(r, "a", "b") == pytest.approx(0.125)


def test_overlap_is_not_clipped_above_one():
    # the a-trained model is more robust to b (0.9) than the b-trained one (0.8): ratio 1.5
    r = table({"a": 0.5, "b": 0.6}, {"a": {"a": 0.9, "b": 0.9}, "b": {"a": 0.9, "b": 0.8}})
    assert overlap_score(r, "a", "b") == pytest.approx(1.25)


def test_overlap_is_symmetric_on_random_tables():
    rng = np.random.default_rng(2)
    names = ["a", "b", "c", "d"]
    for _ in range(100):
        r = random_table(rng, names)
        for a, b in itertools.combinations(names, 2):
            assert overlap_score(r, a, b) == overlap_score(r, b, a)
            assert overlap_score(r, a, b) >= 0.0


@pytest.mark.parametrize("self_a, self_b", [(0.5, 0.8), (0.9, 0.6), (0.4, 0.8), (0.9, 0.55)])
def test_nan_when_a_denominator_is_not_positive(self_a, self_b):
    # standard: a 0.5, b 0.6; self gains 0, 0, < 0, < 0 on one side
    r = table({"a": 0.5, "b": 0.6}, {"a": {"a": self_a, "b": 0.7}, "b": {"a": 0.6, "b": self_b}})
    assert math.isnan(overlap_score(r, "a", "b"))
    assert math.isnan(overlap_score(r, "b", "a"))
    bad = "a" if self_a <= 0.5 else "b"
    assert math.isnan(overlap_score(r, bad, bad))


def test_overlap_score_bad_input():
    r = table({"a": 0.5, "b": 0.6}, {"a": {"a": 0.9, "b": 0.7}, "b": {"a": 0.6, "b": 0.8}})
    with pytest.raises(VcrbenchError, match=r"\('a', 'z'\)"):
        overlap_score(r, "a", "z")
    missing = dict(r)
    del missing[("b", "a")]
    with pytest.raises(VcrbenchError, match=r"\('b', 'a'\)"):
        overlap_score(missing, "a", "b")
    with pytest.raises(VcrbenchError, match=r"\('none', 'b'\)"):
        overlap_score(r, "a", "b", standard="none")
    with pytest.raises(VcrbenchError, match="standard model"):
        overlap_score(r, "standard", "a")
    nan = dict(r)
    nan[("a", "b")] = math.nan
    with pytest.raises(VcrbenchError, match="NaN"):
        overlap_score(nan, "a", "b")


def test_overlap_matrix():
    rng = np.random.default_rng(3)
    names = ["a", "b", "c", "d", "e"]
    r = random_table(rng, names)
    o = overlap_matrix(r, names)
    assert o.shape == (5, 5) and o.dtype == np.float64
    np.testing.assert_array_equal(o, o.T)
    np.testing.assert_array_equal(np.diag(o), np.ones(5))
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            assert o[i, j] == overlap_score(r, a, b)
    # a corruption whose augmentation does not help itself: NaN diagonal and row
    r[("c", "c")] = r[("standard", "c")]
    o = overlap_matrix(r, names)
    assert np.isnan(o[2]).all() and np.isnan(o[:, 2]).all()
    assert not np.isnan(np.delete(np.delete(o, 2, 0), 2, 1)).any()


def test_overlap_matrix_bad_input():
    r = table({"a": 0.5, "b": 0.6}, {"a": {"a": 0.9, "b": 0.7}, "b": {"a": 0.6, "b": 0.8}})
    with pytest.raises(VcrbenchError, match="twice"):
        overlap_matrix(r, ["a", "b", "a"])
    with pytest.raises(VcrbenchError, match="empty"):
        overlap_matrix(r, [])
    with pytest.raises(VcrbenchError, match="'c'"):
        overlap_matrix(r, ["a", "b", "c"])
    with pytest.raises(VcrbenchError, match="sequence"):
        overlap_matrix(r, "ab")
