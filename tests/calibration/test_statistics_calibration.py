"""Calibration of the statistics by simulation (issue "Statistics that mean what they say").

* The 95 % interval of R covers the true R when images differ in difficulty (image random
  effects), at 20 images: the image-level (cluster) bootstrap (200 images: the benchmark).
* R stays unbiased when the data stop at Δv ≈ 0.67 (the right-end anchor at chance).
* Two human data sets with the same true curve are called similar, clearly different ones
  different (the simultaneous test on curves whose replicates carry the anchor's uncertainty).

Each simulation is seeded, so every run gives the same counts; the thresholds leave room for the
binomial noise of 40 (or 20, or 10) replicates around the nominal rates. The full study (100
and 40 replicates, the counts docs/statistics.md reports) is ``benchmarks/bench_statistics.py``;
these smaller versions keep CI's time down and still fail for an interval or test that is off.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from scipy.stats import norm

from vcrbench.curves.bootstrap import estimate_curve
from vcrbench.curves.resampling import cluster_resampling
from vcrbench.human.curves import human_curves
from vcrbench.human.similarity import HumanCurve, compare_curves
from vcrbench.human.trials import TRIALS_SCHEMA

FINE = np.linspace(0.0, 1.0, 200_001)

# --- intervals with image random effects ----------------------------------------------------

#: Image difficulty a_i ~ N(MU, SIGMA²); a sample at Δv v is correct when a_i − BETA·v + ε > 0.
MU, SIGMA, BETA = 1.6, 1.0, 4.0


def population_curve(v: np.ndarray) -> np.ndarray:
    """The true curve: accuracy at Δv v averaged over the image population."""
    return norm.cdf((MU - BETA * v) / np.sqrt(1.0 + SIGMA**2))


R_POPULATION = float(np.trapezoid(population_curve(FINE), FINE))


def images_with_random_effects(n_images: int, n: int, seed: int):
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(MU, SIGMA, n_images)
    image = np.arange(n) % n_images
    dv = rng.uniform(0.0, 1.0, n)
    ok = rng.normal(size=n) < difficulty[image] - BETA * dv
    clean = (rng.normal(size=n_images) < difficulty).astype(np.float64)
    return dv, ok, image.astype(str), clean[image]


def test_image_level_interval_covers_the_population_r() -> None:
    n_images = 20  # where resampling samples fails; 200 images: benchmarks/bench_statistics.py
    covered = covered_by_samples = 0
    for s in range(40):
        dv, ok, image, clean = images_with_random_effects(n_images, 1000, 1000 + s)
        by_image = cluster_resampling({"images": image}, n_boot=200, seed=s)
        e = estimate_curve(dv, ok, bins=20, min_count=20, anchor_outcomes=clean, n_boot=200,
                           resampling=by_image)
        covered += e.area_lo <= R_POPULATION <= e.area_hi
        if s < 10:  # the old sample-level bootstrap, for contrast
            old = estimate_curve(dv, ok, bins=20, min_count=20, anchor=float(clean.mean()),
                                 n_boot=200, seed=s)
            covered_by_samples += old.area_lo <= R_POPULATION <= old.area_hi
    assert covered >= 36, covered  # of 40 (39)
    # resampling samples ignores the images: far too narrow
    assert covered_by_samples <= 7, covered_by_samples  # of 10 (5)


# --- the right end ----------------------------------------------------------------------------


def right_end_bias(midpoint: float, seeds: int = 10) -> tuple[float, float]:
    """Mean bias of R (anchored at chance, free) when the data stop at Δv 0.67, for a logistic
    curve falling to chance around ``midpoint`` (N = 4,000, M = 40)."""

    def truth(v):
        return 0.001 + 0.85 / (1.0 + np.exp((np.asarray(v) - midpoint) / 0.1))

    r_true = float(np.trapezoid(truth(FINE), FINE))
    anchored, free = [], []
    for s in range(seeds):
        rng = np.random.default_rng(s)
        dv = rng.uniform(0.0, 0.67, 4000)
        ok = rng.uniform(size=4000) < truth(dv)
        fit = dict(bins=40, min_count=20, anchor=float(truth(0.0)), n_boot=1, seed=s)
        anchored.append(estimate_curve(dv, ok, right_anchor=0.001, **fit).area)
        free.append(estimate_curve(dv, ok, **fit).area)
    return float(np.mean(anchored)) - r_true, float(np.mean(free)) - r_true


@pytest.mark.parametrize("midpoint", [0.35, 0.5, 0.6])
def test_r_is_unbiased_when_the_data_stop_at_two_thirds(midpoint: float) -> None:
    anchored, free = right_end_bias(midpoint)
    assert abs(anchored) < 0.02, anchored
    if midpoint >= 0.5:  # a curve still falling where the data stop: the free spline overshoots
        assert free > anchored


# --- human curves: similar and different ------------------------------------------------------

LABELS = np.array(["dog", "cat", "car", "boat", "chair", "clock"])


def human_trials(curve, seed: int, n: int = 4000, subjects: int = 20) -> pa.Table:
    """Generic trials: 10 % at Δv = 0, the rest uniform; answers right with prob. curve(Δv)."""
    rng = np.random.default_rng(seed)
    dv = np.where(rng.uniform(size=n) < 0.1, 0.0, rng.uniform(0.0, 1.0, n))
    which = rng.integers(0, LABELS.size, n)
    label = LABELS[which]
    right = rng.uniform(size=n) < curve(dv)
    wrong = LABELS[(which + rng.integers(1, LABELS.size, n)) % LABELS.size]
    return pa.Table.from_pylist([
        {"subject": f"s{i % subjects}", "image_id": f"{seed}-{i}", "condition": None,
         "dv": float(dv[i]), "response": str(label[i] if right[i] else wrong[i]),
         "label": str(label[i]), "clean_response": None, "order": i} for i in range(n)],
        schema=TRIALS_SCHEMA)


def human_curve(trials: pa.Table, name: str) -> HumanCurve:
    _, curves, replicates, metrics = human_curves(
        trials, corruption=name, source="sim", bins=20, min_count=20, n_boot=100, seed=0)
    return HumanCurve.from_tables(name, curves, replicates, metrics)


def test_identical_human_curves_are_similar_and_different_ones_are_not() -> None:
    def same(v):
        return 0.9 / (1.0 + np.exp((np.asarray(v) - 0.5) / 0.1))

    def later(v):
        return 0.9 / (1.0 + np.exp((np.asarray(v) - 0.62) / 0.1))

    similar = different = 0
    seeds = 20
    for s in range(seeds):
        a = human_curve(human_trials(same, 2 * s), "a")
        b = human_curve(human_trials(same, 2 * s + 1), "b")
        c = human_curve(human_trials(later, 2 * s + 1), "c")
        rows = compare_curves({"a": a, "b": b, "c": c}).to_pylist()
        similar += rows[0]["similar"] is True
        different += rows[1]["similar"] is False
    assert similar >= 0.8 * seeds, similar
    assert different >= 0.95 * seeds, different
