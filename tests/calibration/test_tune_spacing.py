"""calibration/tune_spacing.py predicts Δv-bin counts of a spacing by importance weighting; its
density model (power, Gaussian copula) must match what the sampler really draws."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from helpers.paths import REPO

from vcrbench.corruptions import get_corruption
from vcrbench.corruptions.sampling import uniform_samples

M = 30_000


def _tune():
    spec = importlib.util.spec_from_file_location("tune_spacing", REPO / "calibration" /
                                                  "tune_spacing.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _distances(name: str, points: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    spec = get_corruption(name)
    out = {}
    for param, values in points.items():
        low, high = spec.parameters[param]
        clean = spec.identity[param]
        out[param] = np.abs(values - clean) / np.where(values > clean, high - clean, clean - low)
    return out


def _synthetic_dv(distances: dict[str, np.ndarray]) -> np.ndarray:
    """A stand-in for Δv that rises with every parameter's distance from clean (no scoring)."""
    return np.clip(np.mean([np.sqrt(d) for d in distances.values()], axis=0), 0.0, 1.0)


@pytest.mark.parametrize("name", ["color_jitter", "motion_blur", "brightness", "glass_blur"])
def test_importance_weighted_counts_match_the_sampler(name):
    tune = _tune()
    spec = get_corruption(name)
    # the truth: the registry's own visual draws (floors, powers, coupling as registered)
    draws = uniform_samples(name, 3, range(M))
    true_d = _distances(name, {p: np.array([s[p] for s in draws]) for p in spec.parameters})
    true_counts = np.bincount(np.minimum((_synthetic_dv(true_d) * 10).astype(int), 9),
                              minlength=10) / M
    # the prediction: proposal draws reweighted to the registry's spacing
    _, proposal_d = tune._proposal(name, M)
    counts = tune.expected_counts(
        _synthetic_dv(proposal_d), proposal_d, {p: spec.spacing.get(p) for p in spec.parameters},
        dict(spec.spacing_power), spec.coupling, n=1)
    predicted = counts.reshape(10, 4).sum(axis=1)  # 40 bins -> 10
    # total variation distance: 0.01-0.035 measured (importance-sampling noise)
    assert np.abs(predicted - true_counts).sum() / 2 < 0.06, (predicted, true_counts)
    # and the prediction is sensitive: ignoring the coupling or the power is visibly wrong
    if spec.coupling or spec.spacing_power:
        wrong = tune.expected_counts(
            _synthetic_dv(proposal_d), proposal_d,
            {p: spec.spacing.get(p) for p in spec.parameters}, {}, 0.0, n=1).reshape(10, 4)
        assert np.abs(wrong.sum(axis=1) - true_counts).sum() / 2 > 0.12  # 0.2-0.3 measured
