"""Δv bins, per-bin rates and coverage (Algorithm 1, first loop)."""

from __future__ import annotations

import numpy as np
import pytest

from vcrbench.curves.binning import bin_index, bin_rates, coverage, expected_coverage
from vcrbench.errors import VcrbenchError


def test_bin_index_formula_on_random_values() -> None:
    v = np.random.default_rng(0).uniform(0, 1, 10_000)
    np.testing.assert_array_equal(bin_index(v, 40), np.minimum(np.floor(v * 40), 39))
    assert bin_index(v, 40).dtype == np.int64


@pytest.mark.parametrize("bins", [1, 3, 7, 10, 40, 100])
def test_values_on_edges_are_counted_once_in_the_upper_bin(bins: int) -> None:
    edges = np.arange(bins + 1) / bins
    idx = bin_index(edges, bins)
    expected = np.minimum(np.arange(bins + 1), bins - 1)  # v = 1 goes to the last bin
    np.testing.assert_array_equal(idx, expected)
    counts = bin_rates(edges, np.ones(bins + 1, bool), bins, 1).counts
    assert counts.sum() == bins + 1
    assert counts[-1] == 2 and np.all(counts[:-1] == 1)


def test_edge_values_that_round_below_go_up() -> None:
    # 0.29 == 29 / 100, but 0.29 * 100 = 28.999999999999996 in floating point.
    assert 0.29 == 29 / 100 and np.floor(0.29 * 100) == 28
    assert bin_index(np.array([0.29]), 100)[0] == 29
    assert bin_index(np.array([np.nextafter(0.29, 0)]), 100)[0] == 28
    assert bin_index(np.array([np.nextafter(0.29, 1)]), 100)[0] == 29


def test_zero_and_one() -> None:
    np.testing.assert_array_equal(bin_index(np.array([0.0, 1.0]), 40), [0, 39])


@pytest.mark.parametrize("bad", [-1e-12, 1.0 + 1e-12, np.nan, np.inf])
def test_out_of_range_values_are_rejected(bad: float) -> None:
    with pytest.raises(VcrbenchError, match=r"\[0, 1\]"):
        bin_index(np.array([0.5, bad]), 40)


def test_bad_arguments() -> None:
    with pytest.raises(VcrbenchError):
        bin_index(np.array([0.5]), 0)
    with pytest.raises(VcrbenchError):
        bin_rates(np.array([0.5]), np.array([1, 0]), 10, 1)
    with pytest.raises(VcrbenchError):
        bin_rates(np.array([0.5]), np.array([2]), 10, 1)
    with pytest.raises(VcrbenchError):
        bin_rates(np.array([0.5]), np.array([1]), 10, 0)


def test_bin_rates_counts_and_missing_bins() -> None:
    # bin 0: 3 samples (2 ok), bin 1: 1 sample, bin 3: 2 samples (0 ok), bin 2 empty
    dv = np.array([0.0, 0.1, 0.2, 0.3, 0.8, 1.0])
    ok = np.array([1, 1, 0, 1, 0, 0])
    r = bin_rates(dv, ok, bins=4, min_count=2)
    np.testing.assert_array_equal(r.edges, [0, 0.25, 0.5, 0.75, 1])
    np.testing.assert_array_equal(r.centers, [0.125, 0.375, 0.625, 0.875])
    np.testing.assert_array_equal(r.counts, [3, 1, 0, 2])
    np.testing.assert_array_equal(r.successes, [2, 1, 0, 0])
    np.testing.assert_array_equal(r.present, [True, False, False, True])
    np.testing.assert_allclose(r.rates[[0, 3]], [2 / 3, 0.0])
    assert np.isnan(r.rates[[1, 2]]).all()
    assert r.bins == 4 and r.min_count == 2


def test_coverage() -> None:
    dv = np.concatenate([np.full(20, 0.01), np.full(19, 0.5), np.full(25, 0.99)])
    assert coverage(dv, bins=40, min_count=20) == pytest.approx(2 / 40)
    assert coverage(np.random.default_rng(1).uniform(0, 1, 40_000), 40, 20) == 1.0


def test_expected_coverage_is_the_mean_over_every_subsample() -> None:
    # brute force: every subsample of 5 of 11 samples (462 of them)
    from itertools import combinations

    dv = np.array([0.05, 0.1, 0.15, 0.2, 0.45, 0.5, 0.55, 0.6, 0.65, 0.9, 0.95])
    for n in (0, 3, 5, 11):
        direct = np.mean([coverage(dv[list(c)], bins=4, min_count=2)
                          for c in combinations(range(dv.size), n)]) if n else 0.0
        assert expected_coverage(dv, n, bins=4, min_count=2) == pytest.approx(direct, abs=1e-12)
    assert expected_coverage(dv, 11, bins=4, min_count=2) == coverage(dv, bins=4, min_count=2)


@pytest.mark.parametrize("n", [-1, 12, 2.5, True])
def test_expected_coverage_rejects_sizes_outside_the_sample(n) -> None:
    with pytest.raises(VcrbenchError, match="subsample size"):
        expected_coverage(np.linspace(0, 1, 11), n, bins=4, min_count=2)
