"""Corruption overlap (NOC paper): robustness and overlapping scores (Eq. (2)), Algorithm 1
against a brute-force reference, CE / mCE, the balance of benchmarks on the paper's Table 2,
and the errors on bad input."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from vcrbench.errors import VcrbenchError
from vcrbench.overlap import (
    balance,
    corruption_errors,
    mean_corruption_error,
    non_overlapping_benchmark,
    non_overlapping_benchmarks,
    overlap_matrix,
    overlap_score,
    robustness_score,
)

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


# --- Algorithm 1 ------------------------------------------------------------------------------


def brute_force(names, o, threshold):
    """Algorithm 1 by enumeration: largest size first, subsets in lexicographic index order,
    keep the first with the strictly lowest mean pairwise overlap."""
    k = len(names)
    for size in range(k, 0, -1):
        best = None
        for subset in itertools.combinations(range(k), size):
            pairs = list(itertools.combinations(subset, 2))
            if all(o[i, j] <= threshold for i, j in pairs):
                mean = math.fsum(o[i, j] for i, j in pairs) / len(pairs) if pairs else 0.0
                if best is None or mean < best[1]:
                    best = (subset, mean)
        if best is not None:
            return tuple(names[i] for i in best[0]), best[1]
    raise AssertionError("unreachable")


def random_overlap(rng, k, quantized):
    upper = rng.uniform(0.0, 1.0, size=(k, k))
    upper[rng.uniform(size=(k, k)) < 0.3] = 0.0  # clipped pairs, as Eq. (2) produces
    if quantized:  # coarse values: ties between subsets and pairs equal to the threshold
        upper = np.round(upper * 5) / 5
    o = np.triu(upper, 1)
    o = o + o.T
    np.fill_diagonal(o, 1.0)
    return o


def test_algorithm_1_matches_brute_force():
    rng = np.random.default_rng(4)
    thresholds = [0.0, 0.1, 0.2, 0.4, 0.6, 1.0]
    n_matrices = 0
    for trial in range(300):
        k = int(rng.integers(3, 10))
        o = random_overlap(rng, k, quantized=trial % 2 == 0)
        names = [f"c{i}" for i in range(k)]
        for t in thresholds:
            got = non_overlapping_benchmark(names, o, t)
            want = brute_force(names, o, t)
            assert got[0] == want[0], (o, t)
            assert got[1] == want[1]
        n_matrices += 1
    assert n_matrices >= 200


def test_algorithm_1_on_14_candidates_matches_brute_force():
    rng = np.random.default_rng(5)
    names = [f"c{i:02d}" for i in range(14)]
    o = random_overlap(rng, 14, quantized=True)
    for t in (0.2, 0.4):
        assert non_overlapping_benchmark(names, o, t) == brute_force(names, o, t)


def test_algorithm_1_runs_on_24_candidates():
    rng = np.random.default_rng(6)
    names = [f"c{i:02d}" for i in range(24)]
    o = random_overlap(rng, 24, quantized=False)
    for t in (0.1, 0.3, 0.5, 0.7, 0.9):
        chosen, mean = non_overlapping_benchmark(names, o, t)
        idx = [names.index(c) for c in chosen]
        assert idx == sorted(idx)
        assert all(o[i, j] <= t for i, j in itertools.combinations(idx, 2))
        if len(idx) > 1:
            pairs = [o[i, j] for i, j in itertools.combinations(idx, 2)]
            assert mean == pytest.approx(np.mean(pairs))


def matrix(names, pairs, default):
    k = len(names)
    o = np.full((k, k), default)
    np.fill_diagonal(o, 1.0)
    for (a, b), v in pairs.items():
        i, j = names.index(a), names.index(b)
        o[i, j] = o[j, i] = v
    return o


def test_algorithm_1_threshold_is_inclusive():
    names = ["a", "b", "c"]
    o = matrix(names, {("a", "b"): 0.1, ("a", "c"): 0.5, ("b", "c"): 0.5}, 0.0)
    assert non_overlapping_benchmark(names, o, 0.1) == (("a", "b"), 0.1)
    # clipped scores are exactly 0: threshold 0 keeps the fully non-overlapping pairs
    o = matrix(names, {("a", "b"): 0.0, ("a", "c"): 0.3, ("b", "c"): 0.3}, 0.0)
    assert non_overlapping_benchmark(names, o, 0.0) == (("a", "b"), 0.0)


def test_algorithm_1_prefers_size_then_mean_then_order():
    names = ["a", "b", "c", "d"]
    # {a, b} has mean 0.0, but {b, c, d} is larger (mean 0.2): size wins
    o = matrix(names, {("a", "b"): 0.0, ("b", "c"): 0.2, ("b", "d"): 0.2, ("c", "d"): 0.2}, 0.9)
    assert non_overlapping_benchmark(names, o, 0.5) == (("b", "c", "d"), pytest.approx(0.2))
    # two pairs of equal size: the lower mean wins
    o = matrix(names, {("a", "b"): 0.3, ("c", "d"): 0.1}, 0.9)
    assert non_overlapping_benchmark(names, o, 0.5) == (("c", "d"), 0.1)
    # equal size and mean: the first index tuple in lexicographic order wins
    o = matrix(names, {("c", "d"): 0.1, ("a", "d"): 0.1, ("b", "c"): 0.1}, 0.9)
    assert non_overlapping_benchmark(names, o, 0.5) == (("a", "d"), 0.1)


def test_algorithm_1_single_corruption():
    names = ["a", "b", "c"]
    o = matrix(names, {}, 0.8)
    assert non_overlapping_benchmark(names, o, 0.5) == (("a",), 0.0)
    assert non_overlapping_benchmark(["x"], np.array([[1.0]]), 0.1) == (("x",), 0.0)


def test_algorithm_1_ignores_the_diagonal():
    names = ["a", "b"]
    o = np.array([[math.nan, 0.2], [0.2, 1.0]])
    assert non_overlapping_benchmark(names, o, 0.3) == (("a", "b"), 0.2)


def test_non_overlapping_benchmarks_table():
    rng = np.random.default_rng(7)
    names = [f"c{i}" for i in range(9)]
    o = random_overlap(rng, 9, quantized=False)
    thresholds = [0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.0]
    rows = non_overlapping_benchmarks(names, o, thresholds)
    assert [row["threshold"] for row in rows] == thresholds
    sizes = [row["size"] for row in rows]
    assert sizes == sorted(sizes)  # a higher threshold never gives a smaller benchmark
    for row, t in zip(rows, thresholds, strict=True):
        assert set(row) == {"threshold", "corruptions", "size", "mean_overlap"}
        assert (row["corruptions"], row["mean_overlap"]) == non_overlapping_benchmark(names, o, t)
        assert row["size"] == len(row["corruptions"])
    assert rows[-1]["size"] == 9
    assert non_overlapping_benchmarks(names, o, []) == []


def test_algorithm_1_bad_input():
    names = ["a", "b", "c"]
    o = matrix(names, {}, 0.2)
    with pytest.raises(VcrbenchError, match="square"):
        non_overlapping_benchmark(names, np.zeros((3, 2)), 0.1)
    with pytest.raises(VcrbenchError, match="square"):
        non_overlapping_benchmark(names, np.zeros(3), 0.1)
    with pytest.raises(VcrbenchError, match="3 corruptions"):
        non_overlapping_benchmark(names, np.zeros((4, 4)), 0.1)
    for bad in ("0.1", None, True, math.nan, [0.1]):
        with pytest.raises(VcrbenchError, match="threshold"):
            non_overlapping_benchmark(names, o, bad)
    with pytest.raises(VcrbenchError, match="threshold"):
        non_overlapping_benchmarks(names, o, [0.1, math.nan])
    with pytest.raises(VcrbenchError, match="thresholds"):
        non_overlapping_benchmarks(names, o, 0.1)
    nan = o.copy()
    nan[0, 2] = nan[2, 0] = math.nan
    with pytest.raises(VcrbenchError, match="'a' and 'c'"):
        non_overlapping_benchmark(names, nan, 0.1)
    skew = o.copy()
    skew[1, 2] = 0.3
    with pytest.raises(VcrbenchError, match="symmetric"):
        non_overlapping_benchmark(names, skew, 0.1)
    with pytest.raises(VcrbenchError, match="twice"):
        non_overlapping_benchmark(["a", "a", "c"], o, 0.1)
    with pytest.raises(VcrbenchError, match="empty"):
        non_overlapping_benchmark([], np.zeros((0, 0)), 0.1)
    with pytest.raises(VcrbenchError, match="numbers"):
        non_overlapping_benchmark(names, [["x"] * 3] * 3, 0.1)


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
