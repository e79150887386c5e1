"""NOC Algorithm 1 (non-overlapping benchmarks) against a brute-force reference, its tie rules
and the errors on bad input."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from vcrbench.errors import VcrbenchError
from vcrbench.overlap.selection import non_overlapping_benchmark, non_overlapping_benchmarks

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
