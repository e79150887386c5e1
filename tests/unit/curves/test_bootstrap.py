"""Bootstrap curve estimates: bands, intervals, coverage of the true R."""

from __future__ import annotations

import numpy as np
import pytest

from vcrbench.curves.areas import GRID
from vcrbench.curves.binning import bin_index
from vcrbench.curves.bootstrap import estimate_curve, metric_interval
from vcrbench.curves.resampling import SampleResampling
from vcrbench.errors import VcrbenchError


def logistic(v):
    return 0.8 / (1.0 + np.exp((v - 0.6) * 12.0))


def human_curve(v):
    return 0.9 / (1.0 + np.exp((v - 0.5) * 10.0))


FINE = np.linspace(0.0, 1.0, 200_001)


def simulate(curve, n: int, seed: int):
    rng = np.random.default_rng(seed)
    dv = rng.uniform(0.0, 1.0, n)
    return dv, rng.uniform(size=n) < curve(dv)


def test_estimate_shapes_bands_and_determinism() -> None:
    dv, ok = simulate(logistic, 2000, 0)
    e = estimate_curve(dv, ok, bins=40, min_count=20, anchor=0.8, n_boot=200, seed=3)
    g = GRID.size
    assert e.grid.shape == e.curve.shape == (g,)
    assert e.replicates.shape == (200, g)
    assert e.n_samples == 2000
    assert np.all(np.diff(e.replicates, axis=1) <= 1e-12)
    assert np.all((e.replicates >= 0) & (e.replicates <= 1))
    np.testing.assert_allclose(e.replicates[:, 0], 0.8, atol=1e-9)
    assert np.all(e.band95[0] <= e.band83[0] + 1e-12) and np.all(e.band83[1] <= e.band95[1] + 1e-12)
    assert np.all(e.band83[0] <= e.band83[1])
    assert e.area_lo < e.area < e.area_hi
    assert e.area == pytest.approx(e.spline.integral())
    assert e.replicate_areas is not None and e.replicate_areas.shape == (200,)
    again = estimate_curve(dv, ok, bins=40, min_count=20, anchor=0.8, n_boot=200, seed=3)
    np.testing.assert_array_equal(again.replicates, e.replicates)
    other = estimate_curve(dv, ok, bins=40, min_count=20, anchor=0.8, n_boot=200, seed=4)
    assert not np.array_equal(other.replicates, e.replicates)


def test_sample_resampling_matches_drawing_the_samples() -> None:
    """The multinomial over distinct rows ≡ drawing N samples with replacement: moments."""
    rng = np.random.default_rng(0)
    dv, ok = simulate(logistic, 300, 1)
    idx = bin_index(dv, 10)
    values = np.zeros((300, 20))
    values[np.arange(300), idx] = 1.0
    values[np.arange(300)[ok], 10 + idx[ok]] = 1.0
    totals = SampleResampling(20_000, 5, "samples").totals(values)
    bc, bs = totals[:, :10], totals[:, 10:]
    picks = rng.integers(0, 300, size=(20_000, 300))
    dc = np.stack([np.bincount(r, minlength=10) for r in idx[picks]])
    ds = np.stack(
        [np.bincount(r[o], minlength=10) for r, o in zip(idx[picks], ok[picks], strict=True)]
    )
    counts = np.bincount(idx, minlength=10)
    assert np.all(bc.sum(axis=1) == 300)
    for a, b in ((bc, dc), (bs, ds)):
        np.testing.assert_allclose(a.mean(axis=0), b.mean(axis=0), atol=0.15)
        np.testing.assert_allclose(a.var(axis=0), b.var(axis=0), rtol=0.06, atol=0.1)
    # the covariance of two bins' counts is −n_i n_j / N (a bootstrap over samples)
    cov = np.cov(bc[:, 0], bc[:, 1])[0, 1]
    assert cov == pytest.approx(-counts[0] * counts[1] / 300, abs=0.5)


def test_interval_covers_the_true_area() -> None:
    """95 % interval of R covers the true R in ≥ 90 of 100 seeded data sets.

    Small problem to stay fast (N = 400, M = 10, L = 20, 6 knots, B = 200 each); the benchmark
    repeats this at M = 40, N = 2000 for three curve shapes.
    """
    r_true = float(np.trapezoid(logistic(FINE), FINE))
    covered = 0
    for s in range(100):
        dv, ok = simulate(logistic, 400, 1000 + s)
        e = estimate_curve(dv, ok, bins=10, min_count=20, anchor=0.8, n_boot=200, seed=s, n_knots=6)
        covered += e.area_lo <= r_true <= e.area_hi
    assert covered >= 90, covered


def test_area_is_accurate_at_large_n() -> None:
    dv, ok = simulate(logistic, 200_000, 5)
    e = estimate_curve(dv, ok, bins=40, min_count=20, anchor=0.8, n_boot=20, seed=0)
    r_true = float(np.trapezoid(logistic(FINE), FINE))
    assert abs(e.area - r_true) < 0.01
    assert e.area_hi - e.area_lo < 0.02


def test_measured_anchor_is_reestimated_in_every_replicate() -> None:
    dv, ok = simulate(logistic, 1000, 6)
    clean = (np.arange(1000) % 5 != 0).astype(float)  # clean accuracy 0.8
    clean[::7] = np.nan  # samples that measure nothing about s(0)
    e = estimate_curve(dv, ok, bins=20, min_count=20, anchor_outcomes=clean, n_boot=50, seed=0)
    known = clean[np.isfinite(clean)]
    assert e.anchor == pytest.approx(known.mean())
    assert e.curve[0] == pytest.approx(known.mean())
    # each replicate starts at its own resampled clean accuracy: the band has width at Δv = 0
    assert np.ptp(e.replicates[:, 0]) > 0.01
    assert e.band95[0][0] < e.anchor < e.band95[1][0]
    with pytest.raises(VcrbenchError, match="not both"):
        estimate_curve(dv, ok, bins=20, min_count=20, anchor=0.8, anchor_outcomes=clean,
                       n_boot=10)
    with pytest.raises(VcrbenchError, match="shape"):
        estimate_curve(dv, ok, bins=20, min_count=20, anchor_outcomes=clean[:10], n_boot=10)


def test_free_anchor_support_starts_at_the_first_present_bin() -> None:
    rng = np.random.default_rng(3)
    dv = rng.uniform(0.3, 1.0, 2000)
    ok = rng.uniform(size=2000) < logistic(dv)
    e = estimate_curve(dv, ok, bins=20, min_count=20, n_boot=20, seed=0)
    assert e.anchor is None and e.dv_min == pytest.approx(0.3) and e.dv_max == 1.0
    fixed = estimate_curve(dv, ok, bins=20, min_count=20, anchor=0.8, n_boot=20, seed=0)
    assert fixed.dv_min == 0.0


def test_right_anchor_applies_only_where_the_last_bin_is_missing() -> None:
    rng = np.random.default_rng(4)
    dv = rng.uniform(0.0, 0.67, 3000)
    ok = rng.uniform(size=3000) < logistic(dv)
    e = estimate_curve(dv, ok, bins=40, min_count=20, anchor=0.8, right_anchor=0.001,
                       n_boot=20, seed=0)
    assert e.right_anchor == 0.001 and e.curve[-1] == pytest.approx(0.001)
    assert np.allclose(e.replicates[:, -1], 0.001)
    assert e.dv_max == pytest.approx(0.675)
    full = rng.uniform(0.0, 1.0, 3000)
    e_full = estimate_curve(full, rng.uniform(size=3000) < logistic(full), bins=40, min_count=20,
                            anchor=0.8, right_anchor=0.001, n_boot=20, seed=0)
    assert e_full.right_anchor is None and e_full.dv_max == 1.0


def test_missing_single_and_no_present_bins_and_exact_ends() -> None:
    # 25 samples at v = 0 (bin 0), 25 at v = 1 (last bin), a few scattered: 2 present bins
    dv = np.concatenate([np.zeros(25), np.ones(25), [0.3, 0.5, 0.7]])
    ok = np.concatenate([np.ones(25, bool), np.zeros(25, bool), [True, False, True]])
    e = estimate_curve(dv, ok, bins=40, min_count=20, anchor=1.0, n_boot=30, seed=1)
    assert e.rates.present.sum() == 2 and e.rates.present[0] and e.rates.present[-1]
    assert e.curve[0] == 1.0 and e.curve[-1] < 0.1
    # one present bin
    dv1 = np.concatenate([np.full(30, 0.5), [0.1, 0.9]])
    ok1 = np.concatenate([np.arange(30) < 12, [True, False]])
    e1 = estimate_curve(dv1, ok1, bins=40, min_count=20, anchor=0.9, n_boot=30, seed=1)
    assert e1.rates.present.sum() == 1
    assert np.all(np.diff(e1.replicates, axis=1) <= 1e-12)
    # none present
    with pytest.raises(VcrbenchError, match=r"no bin has at least L=20 samples.*binning.min_count"):
        estimate_curve(dv1[:19], ok1[:19], bins=40, min_count=20, anchor=0.9, n_boot=10)


def test_replicate_without_present_bin_falls_back() -> None:
    # exactly L samples in one bin: some resamples have fewer than L there
    dv = np.concatenate([np.full(20, 0.5), np.full(5, 0.9)])
    ok = np.arange(25) % 2 == 0
    e = estimate_curve(dv, ok, bins=10, min_count=20, anchor=1.0, n_boot=50, seed=0)
    assert np.all(np.isfinite(e.replicates))


def test_bad_arguments() -> None:
    dv, ok = simulate(logistic, 200, 7)
    for kw in ({"n_boot": 0}, {"seed": -1}, {"n_boot": 2.5}):
        with pytest.raises(VcrbenchError):
            estimate_curve(dv, ok, bins=10, min_count=5, anchor=0.8, **kw)
    with pytest.raises(VcrbenchError, match="boolean or 0/1"):
        estimate_curve(dv, ok * 2.0, bins=10, min_count=5, n_boot=5)
    with pytest.raises(VcrbenchError, match="min_count"):
        estimate_curve(dv, ok, bins=10, min_count=0, n_boot=5)


def test_metric_interval() -> None:
    v = np.arange(1001) / 1000.0
    assert metric_interval(v, 0.95) == pytest.approx((0.025, 0.975))
    assert metric_interval(np.array([np.nan, 0.5]), 0.9) == (0.5, 0.5)
    lo, hi = metric_interval(np.array([np.nan]))
    assert np.isnan(lo) and np.isnan(hi)
    with pytest.raises(VcrbenchError):
        metric_interval(v, 1.0)


def test_an_interval_fixed_by_the_anchors_is_flagged() -> None:
    """Both ends anchored and λ at the top of the grid: every replicate is the same straight
    line whatever the data, so the (zero-width) interval must not be reported as one."""
    rng = np.random.default_rng(8)
    dv = rng.uniform(0.0, 0.9, 1500)
    ok = rng.uniform(size=1500) < np.where(dv < 0.5, 0.95, 0.4)
    e = estimate_curve(dv, ok, bins=20, min_count=20, anchor=1.0, right_anchor=0.0625,
                       lam=100.0, n_boot=30, seed=0)
    assert e.area_hi - e.area_lo < 1e-12 and e.interval_degenerate
    assert "no interval" in e.interval_note
    free = estimate_curve(dv, ok, bins=20, min_count=20, anchor=1.0, n_boot=30, seed=0)
    assert not free.interval_degenerate and free.interval_note is None
