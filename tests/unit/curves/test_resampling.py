"""Cluster bootstrap weights: Poisson(1) per unit, keyed by the unit, and the replicate totals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import chisquare

from vcrbench.curves.resampling import (
    ClusterResampling,
    SampleResampling,
    cluster_resampling,
    poisson_weights,
    unit_weights,
)
from vcrbench.errors import VcrbenchError


def test_weights_follow_poisson_one() -> None:
    names = [f"img{i}" for i in range(2000)]
    w = poisson_weights(7, "/images", names, 100)
    counts = np.bincount(w.astype(int).ravel(), minlength=8)[:6]
    pmf = np.array([math.exp(-1) / math.factorial(k) for k in range(6)])
    expected = pmf * w.size
    observed = counts.astype(float)
    # the tail (k >= 5) pooled into the last cell
    observed[-1] = w.size - observed[:-1].sum()
    expected[-1] = w.size - expected[:-1].sum()
    assert chisquare(observed, expected).pvalue > 0.001
    assert w.mean() == pytest.approx(1.0, abs=0.01) and w.var() == pytest.approx(1.0, abs=0.02)
    # replicates and units are uncorrelated
    assert abs(np.corrcoef(w[0], w[1])[0, 1]) < 0.1
    assert abs(np.corrcoef(w[:, 0], w[:, 1])[0, 1]) < 0.3


def test_a_unit_has_one_weight_per_replicate_whatever_the_table() -> None:
    names = ["a", "b", "c", "d"]
    full = poisson_weights(3, "/images", names, 50)
    assert np.array_equal(poisson_weights(3, "/images", ["c", "a"], 50), full[:, [2, 0]])
    assert np.array_equal(unit_weights(3, "images", names, 50), full)
    assert not np.array_equal(poisson_weights(4, "/images", names, 50), full)
    assert not np.array_equal(poisson_weights(3, "human/x/images", names, 50), full)
    with pytest.raises(VcrbenchError):
        poisson_weights(3, "/images", names, 0)


def test_cluster_totals_weigh_each_sample_as_its_unit() -> None:
    rng = np.random.default_rng(0)
    labels = rng.choice([f"u{i}" for i in range(12)], size=300)
    values = rng.uniform(size=(300, 3))
    res = cluster_resampling({"images": labels}, n_boot=40, seed=5)
    assert isinstance(res, ClusterResampling) and res.description == "images (12)"
    names = sorted(set(labels))
    w = unit_weights(5, "images", names, 40)
    slow = np.array([[sum(w[b, names.index(labels[i])] * values[i, k] for i in range(300))
                      for k in range(3)] for b in range(40)])
    np.testing.assert_allclose(res.totals(values), slow)


def test_crossed_factors_multiply_and_small_factors_are_held_fixed() -> None:
    subjects = np.repeat([f"s{i}" for i in range(10)], 30)
    images = np.tile([f"i{j}" for j in range(30)], 10)
    res = cluster_resampling({"subjects": subjects, "images": images}, n_boot=20, seed=1,
                             namespace="human/x")
    assert res.description == "subjects (10) × images (30)"
    ws = unit_weights(1, "subjects", [f"s{i}" for i in range(10)], 20, namespace="human/x")
    wi = unit_weights(1, "images", sorted(f"i{j}" for j in range(30)), 20, namespace="human/x")
    one = np.zeros((300, 1))
    one[37] = 1.0  # subject s1, image i7
    order = sorted(f"i{j}" for j in range(30))
    assert res.totals(one)[:, 0] == pytest.approx(ws[:, 1] * wi[:, order.index("i7")])
    few = cluster_resampling({"subjects": subjects[:120], "images": images[:120]}, n_boot=20,
                             seed=1)
    assert few.description == "images (30); conditional on 4 subjects"
    none = cluster_resampling({"images": images[:5]}, n_boot=20, seed=1, fallback_seed=9,
                              sample_name="trials")
    assert isinstance(none, SampleResampling)
    assert none.description == "trials (fewer than 10 units; conditional on 5 images)"
    with pytest.raises(VcrbenchError, match="min_units"):
        cluster_resampling({"images": images}, n_boot=5, seed=1, min_units=1)
