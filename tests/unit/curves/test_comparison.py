"""Simultaneous (max-t) test of two curves' difference: a slow reference, calibration by
simulation against the pointwise 83 %-band rule, range restriction, pinned points, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vcrbench.curves.areas import GRID
from vcrbench.curves.comparison import MIN_PAIRS, CurveDifference, curve_difference
from vcrbench.errors import VcrbenchError

B = 200
N_SEEDS = 200
K = 6  # cosine/sine pairs of the smooth noise
MEAN = 0.9 / (1.0 + np.exp((GRID - 0.5) * 10.0))
#: SD of a curve estimate at v; 0 at v = 0 (both curves pinned to the same anchor there).
SD = 0.04 * np.sqrt(GRID)
_FREQ = np.pi * np.arange(1, K + 1)
#: Random combinations of these rows are smooth Gaussian noise with unit variance at every v.
BASIS = np.concatenate([np.cos(np.outer(_FREQ, GRID)), np.sin(np.outer(_FREQ, GRID))]) / np.sqrt(K)


def noise(rng: np.random.Generator, n: int) -> np.ndarray:
    """``(n, G)`` smooth perturbations with SD ``SD(v)``: random cosines and sines."""
    # einsum, not @: a multithreaded BLAS is slow for this small product on a busy machine
    return np.einsum("nk,kg->ng", rng.standard_normal((n, 2 * K)), BASIS) * SD


def simulate(seed: int, shift: np.ndarray | float = 0.0):
    """Point curves and ``(B, G)`` replicates of two independent estimates; the true curve of
    ``a`` is ``MEAN + shift``, of ``b`` ``MEAN``. A replicate is its point curve plus an
    independent draw of the same noise (the bootstrap world mirrors the real one)."""
    rng = np.random.default_rng(seed)
    ea, eb = noise(rng, B + 1), noise(rng, B + 1)
    curve_a, curve_b = MEAN + shift + ea[0], MEAN + eb[0]
    return curve_a, curve_b, curve_a + ea[1:], curve_b + eb[1:]


def pointwise_83_separate(reps_a: np.ndarray, reps_b: np.ndarray) -> bool:
    """The old rule: the pointwise 83 % percentile bands fail to intersect at some point."""
    lo_a, hi_a = band83(reps_a)
    lo_b, hi_b = band83(reps_b)
    return bool(np.any(np.maximum(lo_a, lo_b) > np.minimum(hi_a, hi_b)))


def band83(reps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.percentile(reps, [8.5, 91.5], axis=0)`` (the bootstrap's 83 % band), from one sort
    (several times faster than ``np.percentile`` along axis 0)."""
    srt = np.sort(reps, axis=0)
    out = []
    for q in (0.085, 0.915):
        pos = q * (len(reps) - 1)
        i = int(pos)
        out.append(srt[i] + (pos - i) * (srt[i + 1] - srt[i]))
    return out[0], out[1]


def test_band83_is_the_percentile_band() -> None:
    reps = np.random.default_rng(0).normal(size=(B, 7))
    np.testing.assert_allclose(band83(reps), np.percentile(reps, [8.5, 91.5], axis=0))


# --- an independent, slow reference ----------------------------------------------------------


def reference(curve_a, curve_b, reps_a, reps_b, v, v_range, level):
    """Loops over pairs and points: (T, c, different, p, n_pairs). No pinned points assumed."""
    cols = [j for j in range(len(v)) if v_range[0] - 1e-9 <= v[j] <= v_range[1] + 1e-9]
    pairs = []
    for i in range(min(len(reps_a), len(reps_b))):
        row = [reps_a[i][j] - reps_b[i][j] for j in cols]
        if all(math.isfinite(x) for x in row):
            pairs.append(row)
    n = len(pairs)
    d_hat = [curve_a[j] - curve_b[j] for j in cols]
    se = []
    for k in range(len(cols)):
        mean = sum(p[k] for p in pairs) / n
        se.append(math.sqrt(sum((p[k] - mean) ** 2 for p in pairs) / (n - 1)))
    t_boot = sorted(
        max(abs(p[k] - d_hat[k]) / se[k] for k in range(len(cols))) for p in pairs
    )
    crit = t_boot[math.ceil(level * (n - 1))]  # the 'higher' order statistic
    t_obs = max(abs(d_hat[k]) / se[k] for k in range(len(cols)))
    p_value = (1 + sum(1 for t in t_boot if t >= t_obs)) / (1 + n)
    return t_obs, crit, t_obs > crit, p_value, n


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_a_slow_reference(seed) -> None:
    rng = np.random.default_rng(seed)
    g = 41
    v = np.linspace(0.0, 1.0, g)
    reps_a = rng.normal(0.5, 0.05, (60, g)).cumsum(axis=1) / np.arange(1, g + 1)
    reps_b = rng.normal(0.5, 0.04, (55, g)).cumsum(axis=1) / np.arange(1, g + 1)
    curve_a = reps_a[1:].mean(axis=0) + (0.03 if seed == 2 else 0.0)
    curve_b = reps_b[2:].mean(axis=0)
    reps_a[[3, 17], 20] = np.nan  # dropped pairwise
    reps_b[40, 25] = np.inf
    reps_b[41, 1] = np.nan  # outside the range: kept
    v_range = (0.1, 0.9)
    got = curve_difference(curve_a, curve_b, reps_a, reps_b, v=v, v_range=v_range, level=0.9)
    t_obs, crit, diff, p_value, n = reference(
        curve_a.tolist(), curve_b.tolist(), reps_a.tolist(), reps_b.tolist(), v.tolist(),
        v_range, 0.9,
    )
    assert got.n_replicates == n == 55 - 3
    assert got.statistic == pytest.approx(t_obs, rel=1e-10)
    assert got.critical == pytest.approx(crit, rel=1e-10)
    assert got.different is diff
    assert got.p_value == pytest.approx(p_value)
    lo, hi = got.band
    inside = (v >= 0.1 - 1e-9) & (v <= 0.9 + 1e-9)
    assert np.all(np.isnan(lo[~inside])) and np.all(np.isnan(hi[~inside]))
    np.testing.assert_allclose((lo + hi)[inside] / 2, (curve_a - curve_b)[inside])
    excludes = (lo[inside] > 0) | (hi[inside] < 0)
    assert got.separated_fraction == pytest.approx(excludes.mean())
    assert (got.first_separation is not None) is diff is bool(excludes.any())
    if diff:
        assert got.first_separation == pytest.approx(v[inside][np.flatnonzero(excludes)[0]])


# --- calibration by simulation ---------------------------------------------------------------


def test_size_is_controlled_where_the_pointwise_rule_is_not() -> None:
    max_t = pointwise = 0
    for seed in range(N_SEEDS):
        curve_a, curve_b, reps_a, reps_b = simulate(seed)
        result = curve_difference(curve_a, curve_b, reps_a, reps_b)
        assert result.n_replicates == B and result.reason is None
        assert result.different is (result.p_value <= 0.05)  # exact at B = 200, level 0.95
        max_t += result.different
        pointwise += pointwise_83_separate(reps_a, reps_b)
    # measured: max-t 14 / 200 (7 %; 5.85 % over 2,000 other seeds), pointwise 83 % bands
    # 103 / 200 (52 %; 53 % over 2,000)
    assert max_t / N_SEEDS <= 0.08
    assert pointwise / N_SEEDS >= 0.25
    assert pointwise >= 3 * max_t


def test_clear_differences_are_detected() -> None:
    region = (GRID >= 0.3) & (GRID <= 0.7)
    shift = np.where(region, 3.0 * np.sqrt(2.0) * SD, 0.0)  # 3 SE of the difference
    hits = 0
    for seed in range(N_SEEDS):
        result = curve_difference(*simulate(10_000 + seed, shift))
        hits += result.different
        if result.different:
            assert 0.3 - 0.05 <= result.first_separation <= 0.7
    # measured: 194 / 200 (97.4 % over 1,000 other seeds)
    assert hits / N_SEEDS >= 0.95


# --- range restriction -----------------------------------------------------------------------


def test_only_differences_inside_the_range_count() -> None:
    shift = np.where(GRID >= 0.7, 0.2, 0.0)  # 5–7 SE, only above v = 0.7
    curve_a, curve_b, reps_a, reps_b = simulate(7, shift)
    whole = curve_difference(curve_a, curve_b, reps_a, reps_b)
    below = curve_difference(curve_a, curve_b, reps_a, reps_b, v_range=(0.0, 0.6))
    above = curve_difference(curve_a, curve_b, reps_a, reps_b, v_range=(0.7, 1.0))
    assert whole.different and above.different
    assert below.different is False and below.first_separation is None
    assert below.separated_fraction == 0.0
    assert (below.v_min, below.v_max) == (0.0, 0.6)
    assert above.first_separation == pytest.approx(0.7)
    lo, hi = below.band
    assert np.isnan(lo[601]) and not np.isnan(lo[600]) and np.isnan(hi[-1])


# --- pinned points and not-testable cases ----------------------------------------------------


def test_points_pinned_to_one_value_are_ignored() -> None:
    curve_a, curve_b, reps_a, reps_b = simulate(3)
    assert np.all(reps_a[:, 0] == reps_b[:, 0])  # both at the anchor MEAN(0): se = 0, d̂ = 0
    result = curve_difference(curve_a, curve_b, reps_a, reps_b)
    assert np.isfinite(result.statistic) and np.isfinite(result.critical)
    assert result.band[0][0] == result.band[1][0] == 0.0
    # all points pinned and equal: nothing to test, not different
    flat = np.full((30, GRID.size), 0.5)
    same = curve_difference(flat[0], flat[0], flat, flat)
    assert same.different is False and same.p_value == 1.0
    assert same.statistic == same.critical == 0.0 and same.first_separation is None


def test_points_pinned_to_different_values_separate_certainly() -> None:
    curve_a, curve_b, reps_a, reps_b = simulate(4)
    curve_a, reps_a = curve_a.copy(), reps_a.copy()
    curve_a[0] = reps_a[:, 0] = MEAN[0] - 0.1  # two different fixed anchors
    result = curve_difference(curve_a, curve_b, reps_a, reps_b)
    assert result.different is True and result.statistic == math.inf
    assert result.p_value == pytest.approx(1 / (B + 1))
    assert result.first_separation == 0.0
    assert result.band[0][0] == result.band[1][0] == pytest.approx(-0.1)
    # the rest of the range still gets the max-t band
    assert np.isfinite(result.critical) and result.critical > 1.0


def test_too_few_usable_replicates_is_not_testable() -> None:
    curve_a, curve_b, reps_a, reps_b = simulate(5)
    few = curve_difference(curve_a, curve_b, reps_a[: MIN_PAIRS - 1], reps_b)
    assert isinstance(few, CurveDifference)
    assert few.different is None and few.p_value is None and few.statistic is None
    assert few.n_replicates == MIN_PAIRS - 1 and "at least 20" in few.reason
    assert np.all(np.isnan(few.band[0])) and few.separated_fraction is None
    holes = reps_b[:30].copy()
    holes[:15, 500] = np.nan
    nan_rows = curve_difference(curve_a, curve_b, reps_a, holes)
    assert nan_rows.different is None and nan_rows.n_replicates == 15
    assert "15 dropped" in nan_rows.reason
    # the same holes outside the compared range do not matter
    ok = curve_difference(curve_a, curve_b, reps_a, holes, v_range=(0.6, 1.0))
    assert ok.different is not None and ok.n_replicates == 30


# --- argument errors -------------------------------------------------------------------------


def test_bad_arguments_raise_clear_errors() -> None:
    curve_a, curve_b, reps_a, reps_b = simulate(6)
    with pytest.raises(VcrbenchError, match="share one grid"):
        curve_difference(curve_a, curve_b[:-1], reps_a, reps_b)
    with pytest.raises(VcrbenchError, match=r"replicates_b must be a \(B, 1001\)"):
        curve_difference(curve_a, curve_b, reps_a, reps_b[:, :-1])
    bad = curve_a.copy()
    bad[7] = np.nan
    with pytest.raises(VcrbenchError, match="non-finite value at grid index 7"):
        curve_difference(bad, curve_b, reps_a, reps_b)
    for level in (0.0, 1.0, 95, True):
        with pytest.raises(VcrbenchError, match="level"):
            curve_difference(curve_a, curve_b, reps_a, reps_b, level=level)
    with pytest.raises(VcrbenchError, match="at least 2: widen the range"):
        curve_difference(curve_a, curve_b, reps_a, reps_b, v_range=(0.5, 0.5))
    with pytest.raises(VcrbenchError, match="v_min <= v_max"):
        curve_difference(curve_a, curve_b, reps_a, reps_b, v_range=(0.6, 0.5))
    with pytest.raises(VcrbenchError, match="strictly increasing"):
        curve_difference(curve_a, curve_b, reps_a, reps_b, v=GRID[::-1])
