"""The adaptive spacing (vcrbench.corruptions.adaptive): a flat Δv on synthetic Δv maps (a
monotone one, one with a gap no parameter reaches, one of four parameters), determinism, the
reachable bins against a slow reference, the exact quotas of the flat pick, and visual / linear
runs unchanged byte for byte."""

from __future__ import annotations

import hashlib
import itertools
import json

import numpy as np
import pytest

from vcrbench.corruptions import adaptive
from vcrbench.corruptions.registry import CORRUPTIONS, get_corruption
from vcrbench.corruptions.sampling import (
    sample_parameters,
    sampling_definition,
    uniform_samples,
)
from vcrbench.curves import reachability
from vcrbench.errors import VcrbenchError
from vcrbench.evaluation.samples import make_samples, pilot_samples

BINS, N, L = 40, 2000, 20


def _noise_map(points):
    """A monotone Δv map of gaussian_noise's sigma, log-like as a real one (Δv 0 at 0, 0.95
    at the domain's end), with a little image-to-image spread."""
    sigma = np.array([p["sigma"] for p in points])
    clean = 1.0 - np.exp(-np.log1p(sigma / 0.004) / np.log1p(1.5 / 0.004) * 3.0)
    return clean


def _scorer(dv_map, spread=0.01, seed=0):
    """``score(points, first)`` as the workflow's: the map plus keyed noise per pilot sample."""
    def score(points, first):
        rng = np.random.default_rng([seed, first])
        return np.clip(dv_map(points) + spread * rng.standard_normal(len(points)), 0.0, 1.0)
    return score


def _counts(dv, spread=0.0):
    """Bin counts of Δv, with the image-to-image spread a run's Δv has (keyed noise)."""
    dv = np.clip(dv + spread * np.random.default_rng(99).standard_normal(len(dv)), 0.0, 1.0)
    return np.bincount(reachability.bin_of(dv, BINS), minlength=BINS)


def test_flat_on_a_monotone_map_where_visual_is_not():
    pilot = adaptive.pilot_design("gaussian_noise", 5, N, _scorer(_noise_map), bins=BINS)
    points = adaptive.adaptive_samples("gaussian_noise", 5, N, pilot, bins=BINS)
    assert len(points) == N
    counts = _counts(_noise_map(points), 0.01)
    reach = reachability.reachable_bins(pilot["dv"], BINS)
    assert reach.sum() >= 38  # the map reaches [0, 0.95], the spread a little beyond
    assert (counts[reach] >= L).all(), counts
    # flat: every reachable bin but the last (reached only through the spread) within a
    # factor 2 of the mean; the one before it may hold more (the quotas send it the samples
    # whose spread reaches the last bin)
    inside = counts[reach][:-1]
    assert inside.min() >= inside.mean() / 2, counts
    assert inside[:-1].max() <= 1.7 * inside.mean() and inside[-1] <= 3 * inside.mean(), counts
    # the base design itself is not flat on this map (the test can fail)
    visual = _counts(_noise_map(uniform_samples("gaussian_noise", 5, range(N))))
    assert (visual[reach] < L).sum() >= 3, visual


def _step_map(points):
    """median_blur as at 32 px: the clean image up to ksize 3, then Δv from 0.6 up."""
    k = np.array([p["ksize"] for p in points])
    return np.where(k < 3, 0.0, 0.6 + 0.38 * np.log(np.maximum(k, 3) / 3) / np.log(201 / 3))


def test_a_gap_no_parameter_reaches_is_unreachable_and_not_drawn_into():
    pilot = adaptive.pilot_design("median_blur", 2, N, _scorer(_step_map, spread=0.0), bins=BINS)
    reach = reachability.reachable_bins(pilot["dv"], BINS)
    assert reach[0] and not reach[1:24].any() and reach[24:39].all(), reach
    assert reachability.unreachable_ranges(~reach)[0] == "0.025–0.600"
    points = adaptive.adaptive_samples("median_blur", 2, N, pilot, bins=BINS)
    counts = _counts(_step_map(points))
    assert counts[1:24].sum() == 0
    # every reachable bin filled but, at most, the one just above the jump (the fit snaps the
    # candidates between the last clean and the first blurred pilot point to either side)
    assert (counts[reach] >= L).sum() >= reach.sum() - 1, counts
    assert (counts[25:40] >= 0.7 * N / reach.sum()).all(), counts


def _jitter_map(points):
    """Four parameters: Δv grows with every parameter's distance from its clean value."""
    spec = get_corruption("color_jitter")
    total = np.zeros(len(points))
    for name, (low, high) in spec.parameters.items():
        value = np.array([p[name] for p in points])
        total += np.abs(value - spec.identity[name]) / (high - low) * 2
    return np.clip(total / 2.2, 0.0, 1.0)


def test_flat_enough_with_four_parameters():
    pilot = adaptive.pilot_design("color_jitter", 4, N, _scorer(_jitter_map), bins=BINS)
    points = adaptive.adaptive_samples("color_jitter", 4, N, pilot, bins=BINS)
    counts = _counts(_jitter_map(points), 0.01)
    reach = reachability.reachable_bins(pilot["dv"], BINS)
    assert (counts[reach] >= L).mean() >= 0.95, counts
    visual = _counts(_jitter_map(uniform_samples("color_jitter", 4, range(N))), 0.01)
    assert (counts[reach] >= L).mean() > (visual[reach] >= L).mean()


def _dead_zone_map(points):
    """motion_blur as at 32 px: the image is unchanged (Δv exactly 0) below a blur of half a
    pixel in sigma, whatever the radius; above it Δv grows with both parameters."""
    radius = np.array([p["radius"] for p in points])
    sigma = np.array([p["sigma"] for p in points])
    grow = np.log1p(np.maximum(sigma - 0.5, 0.0)) / np.log1p(8.0) * 0.6 + radius / 15.0 * 0.35
    return np.where(sigma < 0.5, 0.0, np.clip(0.04 + grow, 0.0, 0.97))


def _run_counts(name, dv_map, seed, spread, monkeypatch=None):
    """Bin counts of an adaptive run's Δv (the map plus image spread); with ``monkeypatch``,
    the run's fit has no hurdle (the pilot as the design runs it)."""
    score = _scorer(lambda pts: _spread_zero(dv_map(pts)), spread=spread, seed=seed)
    pilot = adaptive.pilot_design(name, seed, N, score, side=32, bins=BINS)
    if monkeypatch is not None:
        plain = adaptive.nearest_mean
        monkeypatch.setattr(adaptive, "nearest_mean",
                            lambda *a, hurdle=False, **k: plain(*a, **k))
    points = adaptive.adaptive_samples(name, seed, N, pilot, side=32, bins=BINS)
    dv = dv_map(points)
    noisy = np.where(dv == 0, 0.0, np.clip(dv + spread * np.random.default_rng(99)
                                           .standard_normal(len(dv)), 0.0, 1.0))
    return np.bincount(reachability.bin_of(noisy, BINS), minlength=BINS), pilot


def _spread_zero(dv):
    """The scorer's noise leaves an unchanged image at exactly 0, as VIF does."""
    return np.where(dv == 0, -1.0, dv)


def test_an_unchanged_region_is_predicted_unchanged_and_not_drawn_into(monkeypatch):
    counts, pilot = _run_counts("motion_blur", _dead_zone_map, 3, 0.03)
    reach = reachability.reachable_bins(pilot["dv"], BINS)
    assert (counts[reach] >= L).mean() >= 0.95, counts
    assert counts[0] <= 3 * N / reach.sum(), counts  # bin 0: its share, not the dead zone's
    # a plain nearest-neighbour mean across the zone's edge predicts small Δv there and fills
    # bin 0 with samples meant for the low bins (the test can fail)
    plain, _ = _run_counts("motion_blur", _dead_zone_map, 3, 0.03, monkeypatch)
    assert plain[0] > 1.5 * counts[0], (plain, counts)


def test_nearest_mean_hurdle():
    pilot_xy = np.array([[0.0], [0.1], [0.2], [0.3], [0.8], [0.9]])
    dv = np.array([0.0, 0.0, 0.0, 0.3, 0.5, 0.7])
    got = adaptive.nearest_mean(pilot_xy, dv, np.array([[0.05], [0.25], [0.85]]), k=3,
                                hurdle=True)
    # 0.05: all three nearest unchanged -> 0; 0.25: two of three unchanged -> 0;
    # 0.85: the three nearest changed ones (0.3, 0.5, 0.7) -> their mean
    assert got.tolist() == pytest.approx([0.0, 0.0, 0.5])
    assert adaptive.nearest_mean(pilot_xy, dv, np.array([[0.25]]), k=3).tolist() == \
        pytest.approx([0.1])


def _slow_quota_objective(quota, spread, target, n):
    h = np.asarray(quota, float) @ spread
    goal = np.where(target, n / target.sum(), 0.0)
    short = np.maximum(goal - h, 0.0)[target]
    near, far = adaptive.SHORTFALL_COST
    below_half = np.maximum(short - goal[target] / 2, 0.0)
    return (near * (short - below_half).sum() + far * below_half.sum()
            + np.maximum(h - goal, 0.0).sum())


@pytest.mark.parametrize("case", range(4))
def test_spread_quota_is_the_best_allocation_of_a_slow_search(case):
    rng = np.random.default_rng(case)
    bins, n = 4, 12
    spread = rng.dirichlet(np.full(bins, 0.7), size=bins) * 0.5 + np.eye(bins) * 0.5
    available = rng.integers(0, 9, bins)
    available[rng.integers(bins)] += n  # enough candidates in all
    target = np.array([True, True, True, case % 2 == 0])
    quota = adaptive.spread_quota(spread, available, n, target)
    assert quota.sum() == n and (quota >= 0).all() and (quota <= available).all()
    # every integer allocation (the slow, obvious search): the LP's rounding is within one
    # sample's cost of the best one
    best = min(_slow_quota_objective(q, spread, target, n)
               for q in itertools.product(*(range(a + 1) for a in available))
               if sum(q) == n)
    assert _slow_quota_objective(quota, spread, target, n) <= best + max(adaptive.SHORTFALL_COST)
    # no spread: equal shares of the target bins where candidates allow
    flat = adaptive.spread_quota(np.eye(bins), np.full(bins, n), n, target)
    assert flat[target].max() - flat[target].min() <= 1 and flat[~target].sum() == 0


def test_spread_matrix_rows():
    predicted = np.array([0.1, 0.12, 0.5, 0.52, 0.9])
    actual = np.array([0.0, 0.17, 0.5, 0.57, 0.95])
    spread = adaptive.spread_matrix(predicted, actual, 10, k=2, offsets=1)
    assert np.allclose(spread.sum(1), 1.0)
    # bin 1 (centre 0.15): its two nearest predictions are 0.1 (an unchanged image: stays at
    # 0) and 0.12 (+0.05: lands at 0.2, bin 2)
    assert spread[1].tolist() == pytest.approx([0.5, 0, 0.5, 0, 0, 0, 0, 0, 0, 0])
    # bin 5 (centre 0.55): errors 0 and +0.05 -> 0.55 and 0.60
    assert spread[5].tolist() == pytest.approx([0, 0, 0, 0, 0, 0.5, 0.5, 0, 0, 0])


def test_pilot_and_draws_are_deterministic_and_sharded_as_one():
    score = _scorer(_noise_map)
    one = adaptive.pilot_design("gaussian_noise", 9, 300, score, side=32)
    two = adaptive.pilot_design("gaussian_noise", 9, 300, score, side=32)
    assert all(np.array_equal(one[k], two[k]) for k in one)
    assert len(one["dv"]) == 1 + 1 + adaptive.pilot_count(300)  # clean, one corner, the rest
    table = adaptive.pilot_table(one)
    ids = [f"img{k}" for k in range(17)]
    whole = make_samples(ids, "gaussian_noise", seed=9, mode="uniform", n=300, shard_size=300,
                         shard=0, spacing="adaptive", side=32, pilot=table)
    parts = [make_samples(ids, "gaussian_noise", seed=9, mode="uniform", n=300, shard_size=120,
                          shard=k, spacing="adaptive", side=32, pilot=table) for k in range(3)]
    assert [r for p in parts for r in p.to_pylist()] == whole.to_pylist()
    # images and noise seeds are those of any run's samples: only the parameters differ
    visual = make_samples(ids, "gaussian_noise", seed=9, mode="uniform", n=300, shard_size=300,
                          shard=0, side=32)
    for column in ("sample_id", "image_id", "seed", "severity"):
        assert whole.column(column).equals(visual.column(column))
    assert not whole.column("sigma").equals(visual.column("sigma"))
    with pytest.raises(VcrbenchError, match="pilot"):
        make_samples(ids, "gaussian_noise", seed=9, mode="uniform", n=300, shard_size=300,
                     shard=0, spacing="adaptive")


def test_pilot_samples_have_their_own_images_and_noise():
    ids = [f"img{k}" for k in range(50)]
    points = [{"sigma": 0.1 * k} for k in range(6)]
    table = pilot_samples(ids, "gaussian_noise", seed=1, points=points[2:], first=2)
    assert table.column("sample_id").to_pylist() == [2, 3, 4, 5]
    assert table.column("image_id").to_pylist() == adaptive.pilot_images(
        ids, 1, "gaussian_noise", 6)[2:]
    assert table.column("seed").to_pylist() == adaptive.pilot_noise_seeds(1, "gaussian_noise",
                                                                          6)[2:]
    run = make_samples(ids, "gaussian_noise", seed=1, mode="uniform", n=6, shard_size=6, shard=0)
    assert not set(table.column("seed").to_pylist()) & set(run.column("seed").to_pylist())


def _slow_reachable(values, bins, gap):
    """Reference: bin b is reachable iff a value lies in it, or it meets the stretch between two
    consecutive values at most ``gap`` apart."""
    values = sorted(values)
    out = []
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        hit = any(lo <= v < hi or (b == bins - 1 and v == 1.0) for v in values)
        for a, c in zip(values, values[1:], strict=False):
            if c - a <= gap and a < hi and c >= lo:
                hit = True
        out.append(hit)
    return np.array(out)


@pytest.mark.parametrize("seed", range(6))
def test_reachable_bins_match_a_slow_reference(seed):
    rng = np.random.default_rng(seed)
    values = np.concatenate([rng.uniform(0, 0.3, 15), rng.uniform(0.55, 0.9, 20), [0.0, 1.0]])
    values = values[rng.random(len(values)) < 0.8]
    assert np.array_equal(reachability.reachable_bins(values, BINS, 0.1),
                          _slow_reachable(values, BINS, 0.1))


def test_flat_selection_quotas():
    rng = np.random.default_rng(0)
    # bins 0-9 dense, 10-19 sparse (5 candidates each), 20-39 not targeted
    predicted = np.concatenate([rng.uniform(0, 0.25, 5000), (np.arange(50) // 5 + 10.5) / 40,
                                rng.uniform(0.5, 1.0, 3000)])
    target = np.zeros(BINS, bool)
    target[:20] = True
    exclude = np.arange(100)
    picked = adaptive.flat_selection(predicted, 500, target, np.random.default_rng(1), exclude)
    assert len(np.unique(picked)) == 500 and not np.isin(picked, exclude).any()
    counts = _counts(predicted[picked])
    assert (counts[10:20] == 5).all()  # sparse bins give all they have
    assert counts[:10].max() - counts[:10].min() <= 1 and counts[:10].sum() == 450
    assert counts[20:].sum() == 0
    again = adaptive.flat_selection(predicted, 500, target, np.random.default_rng(1), exclude)
    assert np.array_equal(picked, again)
    # fewer targeted candidates than asked: the rest come from the others
    picked = adaptive.flat_selection(predicted, 5200, target, np.random.default_rng(1))
    assert len(np.unique(picked)) == 5200


def test_predict_dv_is_the_mean_of_the_nearest():
    pilot_xy = np.array([[0.0], [0.1], [0.2], [0.9]])
    dv = np.array([0.0, 0.2, 0.4, 1.0])
    assert adaptive.nearest_mean(pilot_xy, dv, np.array([[0.05], [0.95]]), k=2).tolist() == \
        pytest.approx([0.1, 0.7])


def test_monotone_fit_keeps_jumps_and_interpolates_elsewhere():
    distance = np.array([0.0, 0.1, 0.2, 0.3, 0.6, 0.7, 0.8, 0.9])
    dv = np.array([0.0, 0.02, 0.01, 0.0, 0.6, 0.7, 0.65, 0.75])  # two violations, one jump
    xs, ys = adaptive.monotone_fit(distance, dv)
    # isotonic blocks: [0], [0.02, 0.01, 0] -> 0.01, [0.6], [0.7, 0.65] -> 0.675, [0.75]
    assert xs.tolist() == pytest.approx([0.0, 0.0, 0.2, 0.6, 0.75, 0.9, 0.9])
    assert ys.tolist() == pytest.approx([0.0, 0.0, 0.01, 0.6, 0.675, 0.75, 0.75])
    # inside the jump the nearer side's value (nothing predicted in the gap), else linear
    got = adaptive.interpolate_with_jumps(np.array([0.35, 0.45, 0.7, 0.85]), xs, ys)
    assert got.tolist() == pytest.approx([0.01, 0.6, 0.65, 0.725])


def test_extreme_points_hold_clean_and_strongest():
    points = adaptive.extreme_points("color_jitter")
    assert points[0] == {"brightness": 1.0, "contrast": 1.0, "saturation": 1.0, "hue": 0.0}
    assert len(points) == 17 and points[1] == {"brightness": 2.0, "contrast": 2.0,
                                              "saturation": 2.0, "hue": 0.5}
    # at 32 px the pixel parameters move as the run's draws do
    assert adaptive.extreme_points("gaussian_blur", 32)[1]["sigma"] < 40.0


def test_adaptive_definition_and_per_sample_refusal():
    visual = sampling_definition("median_blur", "uniform", "visual", 32)
    adapt = adaptive.adaptive_sampling_definition("median_blur", 32, pilot_share=0.2, bins=20)
    assert {k: v for k, v in adapt.items() if k != "adaptive"} == visual
    with pytest.raises(VcrbenchError, match="adaptive_sampling_definition"):
        sampling_definition("median_blur", "uniform", "adaptive", 32)
    assert adapt["adaptive"]["pilot_share"] == 0.2 and adapt["adaptive"]["bins"] == 20
    with pytest.raises(VcrbenchError, match="pilot"):
        sample_parameters("median_blur", np.random.default_rng(0), "adaptive")
    with pytest.raises(VcrbenchError, match="pilot_share"):
        adaptive.pilot_count(100, 0.0)


#: Digests of visual and linear draws, definitions (less ``implementation``) and samples
#: tables, computed with main's code before the adaptive spacing existed (commit 99e6eca). A
#: deliberate registry change of domains or floors changes them: recompute them then.
DRAWS = "eaf5f68dcbb007ffa8ba12c7f1c87b16bb89d171c2cd2469aa720d4190d3fe0f"
DEFINITIONS = "e87ef9200ea9c5d6731cc72541f3b28251d35fd651d89f18bd17166fc680af7c"
TABLES = "21a7a674a8e60f5920e491a70ae08d1b1704d810b963ce32dc95a650b5767e7b"


def test_visual_and_linear_runs_are_unchanged_byte_for_byte():
    draws, definitions, tables = hashlib.sha256(), hashlib.sha256(), hashlib.sha256()
    for name in sorted(CORRUPTIONS):
        for spacing in ("visual", "linear"):
            for side in (224, 32):
                draws.update(json.dumps(uniform_samples(name, 7, range(60), spacing,
                                                        side)).encode())
            for side in (32, 224):
                definition = sampling_definition(name, "uniform", spacing, side)
                definition.pop("implementation", None)
                definitions.update(json.dumps(definition, sort_keys=True).encode())
    ids = [f"img{k}" for k in range(30)]
    for name in ("gaussian_noise", "color_jitter", "median_blur"):
        for spacing in ("visual", "linear"):
            table = make_samples(ids, name, seed=3, mode="uniform", n=50, shard_size=20, shard=1,
                                 spacing=spacing, side=32)
            tables.update(json.dumps(table.to_pylist()).encode())
    assert (draws.hexdigest(), definitions.hexdigest(), tables.hexdigest()) == (
        DRAWS, DEFINITIONS, TABLES)


def test_config_takes_adaptive_and_its_share_and_leaves_other_runs_as_they_were():
    from vcrbench.config import validate_config

    base = {"dataset": {"source": "builtin"}, "corruptions": ["gaussian_noise"],
            "models": ["efficientnet-lite0"]}
    assert "pilot_share" not in validate_config(dict(base))["sampling"]
    adaptive_run = validate_config({**base, "sampling": {"spacing": "adaptive",
                                                         "pilot_share": 0.2}})
    assert adaptive_run["sampling"]["pilot_share"] == 0.2
    with pytest.raises(VcrbenchError, match="pilot_share"):
        validate_config({**base, "sampling": {"spacing": "adaptive", "pilot_share": 0}})
