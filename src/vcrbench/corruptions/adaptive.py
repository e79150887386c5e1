"""The ``adaptive`` spacing: a pilot measures where a corruption's parameters land in Δv on the
run's images at the run's size, then the run's samples are drawn so that Δv is about uniform over
the Δv range the corruption can reach there.

Design (one code path for every corruption, whatever its number of parameters):

1. **Candidate pool.** ``pool_size(n)`` parameter points, half from each of two designs:
   candidate ``j`` takes the uniform (and copula) draws of ``parameter_rng(seed, c, j)``; an
   odd ``j`` keeps them as they are (``linear``, the paper's law, dense where the image is
   destroyed), an even ``j`` spaces them as ``visual`` with every log floor ``f`` deepened to
   ``f ** POOL_DEPTH`` (dense next to the clean value, reaching into the stretch that ``visual``
   leaves out as negligible at 224 px but that holds the low Δv bins at other sizes: at 32 px
   the smallest visual Gaussian noise is already at Δv 0.16). Then moved to the run's side
   (``scale_point``), so both ends of every parameter have candidates. Parameters only:
   cheap and deterministic from the seed. Each candidate gets coordinates in
   ``[0, 1]^P``: per parameter, its mid-rank among the pool's values of that parameter (the
   pool's marginal quantile), so every parameter weighs the same in distances whatever
   its unit or spacing.
2. **Pilot** (its own rule and file, :func:`pilot_design`): ``pilot_count(n, share)`` scored
   samples (default 10 % of N) on the run's images (drawn by their own key) at the run's size
   with the run's VIF, in rounds (column ``round``). 0: the domain's extreme points, the clean
   values and every corner (each parameter at an end; at most 16), so that the reachable range
   includes the identity and the strongest settings. 1 (a third): the pool's first candidates,
   as the pool draws them. 2 (a third, exploring): candidates picked from a fit of rounds 0–1
   (interpolated across jumps) flat in predicted Δv over every bin between the lowest and the
   highest Δv seen, so that a stretch rounds 0–1 missed is measured, and a real jump shows as
   one. 3 (the rest, filling): from a fit of rounds 0–2 (jumps kept), flat over the bins
   reachable so far, so that the fit is dense where the run will draw.
3. **Fit** (:func:`predict_dv`). One parameter: Δv is a non-decreasing function of the
   distance from the clean value on each side (isotonic regression), interpolated linearly
   between its blocks but not across a jump of more than :data:`GAP` (whole-pixel kernels).
   Several parameters: the biweighted mean Δv of the ``k`` nearest pilot samples in the
   coordinates of step 1 (no monotonicity needed), with a hurdle: where most of them left the
   image unchanged (Δv exactly 0: at 32 px a blur under half a pixel, whatever its other
   parameters) the prediction is 0, elsewhere the mean of the nearest changed ones. Both
   average over the pilot's images: the image-to-image spread of Δv at fixed parameters stays
   in the run's Δv.
4. **Draw.** The run's N samples are candidates picked by :func:`flat_selection`, a keyed
   random subset of each bin of predicted Δv (M bins, ``binning.bins``) of the size
   :func:`spread_quota` gives it: the pilot's errors (each pilot sample's Δv against its
   prediction from the other pilot samples, :func:`pilot_predictions`) give the share of the
   samples predicted in bin p that land in bin a (:func:`spread_matrix`), and a linear
   programme chooses the counts per predicted bin whose *expected* histogram is flattest over
   the reachable bins (step 5), a shortfall costing more than an excess. So the spread that
   the fit cannot aim at is deconvolved: a bin at the edge of the reachable range, reached only
   through the spread across images, draws from its neighbours, and a predicted bin whose
   samples mostly land elsewhere gives way.
   Sample ``i`` of the run takes the parameters of the ``i``-th picked candidate (in pool
   order, which is random with respect to Δv), its image and noise seed as any run's sample
   ``i``.
5. **Reachability** (:mod:`vcrbench.curves.reachability`, shared with the coverage table and
   the summary): the Δv values the pilot saw, merged into intervals wherever two consecutive
   values are at most :data:`~vcrbench.curves.reachability.GAP` apart; a bin meeting no
   interval is unreachable: no parameter value gets there at this size (e.g. box and median
   blur between the clean image and their smallest whole-pixel kernel at 32 px). A bin where
   the run's own samples land is reachable whatever the pilot saw
   (:func:`~vcrbench.curves.reachability.reached_bins`). The coverage table and the summary's
   note say which bins are unreachable
   (:func:`~vcrbench.curves.reachability.unreachable_ranges`).

The pilot's samples do **not** join the estimate: they come from other designs (the pool's
draws, the domain's corners, flat picks from fits of part of the pilot), so pooling them
with the run's samples would change the law of the parameters behind each Δv bin without weights
that make them one design; and the run's N stays the N of the configuration. Their cost is the
pilot's share of the scoring (10 % by default, at least 40, plus at most 17 extreme points).

Everything is deterministic: the pool from ``parameter_rng``, the pilot's images and noise from
their own keys, every random pick from :func:`selection_rng`, ties broken by candidate order.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np

from vcrbench.core.seeding import IMAGE_ORDER, NOISE_STREAM, SAMPLE, Stream, parameter_rng, seed_of
from vcrbench.corruptions.registry import get_corruption
from vcrbench.corruptions.sampling import (
    REFERENCE_SIDE,
    couple_draws,
    sampling_definition,
    scale_point,
    space_towards_clean,
)
from vcrbench.curves.reachability import GAP, bin_of, reachable_bins
from vcrbench.errors import VcrbenchError

#: The designs the candidates come from (module docstring, step 1).
BASE_SPACING = "linear+visual"
#: Default share of N the pilot scores (``sampling.pilot_share``).
PILOT_SHARE = 0.1
#: The fewest pilot samples of rounds 1 to 3 together, whatever N.
MIN_PILOT = 40
#: Candidates per run sample, and the fewest candidates.
POOL_FACTOR, MIN_POOL = 10, 5000
#: The candidates' log floors are the registry's raised to this power (more decades).
POOL_DEPTH = 2.0
#: Nearest pilot samples averaged per prediction (smoothing and several parameters).
NEIGHBOURS = 8
#: Pilot samples (nearest in predicted Δv) whose errors give one row of :func:`spread_matrix`.
SPREAD_NEIGHBOURS = 24
#: Cost of a sample short of the flat goal g in a reachable bin (down to g / 2, and below g / 2),
#: against 1 for a sample in excess: a bin below half its share is nearly empty for the curve
#: (L is 0.4 g at the paper's N = 2,000 and M = 40), worth many samples sent to its neighbours.
SHORTFALL_COST = (2.0, 12.0)
#: Most corner points the pilot scores (2^P, P parameters; P <= 4 in the registry).
MAX_CORNERS = 16
#: Pilot rounds (the ``round`` column of the pilot table).
EXTREMES, BASE, EXPLORE, FILL = 0, 1, 2, 3
_SELECT = Stream("the picks of the adaptive design", salt=0xADA7)


def pool_size(n: int) -> int:
    """Candidates drawn for a run of ``n`` samples."""
    return max(POOL_FACTOR * int(n), MIN_POOL)


def pilot_count(n: int, share: float = PILOT_SHARE) -> int:
    """Pilot samples of rounds 1 to 3 together for a run of ``n`` samples (round 0's extreme
    points come on top)."""
    if not 0 < share <= 1:
        raise VcrbenchError(f"sampling.pilot_share must lie in (0, 1], got {share!r}")
    return max(MIN_PILOT, math.ceil(share * int(n)))


def selection_rng(seed: int, corruption: str, what: str) -> np.random.Generator:
    """The keyed generator of one pick (``what``: ``pilot`` or ``run``)."""
    return _SELECT.rng(seed, corruption, what)


def pool_point(name: str, seed: int, j: int) -> dict[str, float]:
    """Candidate ``j`` at 224 px: the linear draw (odd ``j``) or the visual one with deepened
    floors (even ``j``; module docstring, step 1)."""
    spec = get_corruption(name)
    rng = parameter_rng(seed, name, j)
    draws = {p: float(rng.uniform(low, high)) for p, (low, high) in spec.parameters.items()}
    if j % 2:
        return draws
    if spec.coupling > 0:
        draws = couple_draws(draws, spec, float(rng.standard_normal()))
    return {p: space_towards_clean(u, *spec.parameters[p], spec.identity[p],
                                   None if p not in spec.spacing else
                                   spec.spacing[p] ** POOL_DEPTH,
                                   spec.spacing_power.get(p, 1.0))
            for p, u in draws.items()}


def candidates(name: str, seed: int, n: int, side: int = REFERENCE_SIDE
               ) -> list[dict[str, float]]:
    """The candidate pool of a run of ``n`` samples (module docstring, step 1)."""
    spec = get_corruption(name)
    return [scale_point(spec, pool_point(name, seed, j), side) for j in range(pool_size(n))]


def as_matrix(name: str, points: list[dict[str, float]]) -> np.ndarray:
    """Points as a float64 array (len(points), P), in the registry's parameter order."""
    names = list(get_corruption(name).parameters)
    return np.array([[float(p[k]) for k in names] for p in points], np.float64).reshape(
        len(points), len(names))


def coordinates(pool: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Each point's per-parameter mid-rank among the pool's values, in [0, 1]; shape of
    ``points``. (Values below every pool value give 0, above every one 1.)"""
    ordered = np.sort(pool, axis=0)
    out = np.empty_like(points, dtype=np.float64)
    for j in range(points.shape[1]):
        below = np.searchsorted(ordered[:, j], points[:, j], side="left")
        upto = np.searchsorted(ordered[:, j], points[:, j], side="right")
        out[:, j] = (below + upto) / (2.0 * len(ordered))
    return out


def predict_dv(pilot_xy: np.ndarray, pilot_dv: np.ndarray, query_xy: np.ndarray,
               k: int = NEIGHBOURS, block: int = 2048, *,
               clean_xy: np.ndarray | None = None, jumps: bool = True) -> np.ndarray:
    """Predicted Δv of each query point from the pilot (coordinates of :func:`coordinates`);
    shape (len(query_xy),).

    One parameter (``clean_xy``: the clean value's coordinate, shape (1,)): on each side of the
    clean value, Δv is fitted as a non-decreasing function of the distance from it (isotonic
    regression, :func:`monotone_fit`), interpolated linearly between the centres of the fit's
    constant blocks, so that predictions are continuous (a few steps would be cut unevenly by the
    bins), except across a jump of more than :data:`GAP` between two knots, which stays a jump
    (:func:`interpolate_with_jumps`: the pilot saw no Δv in between, so nothing is predicted
    there; ``jumps`` False: interpolated too, as the pilot's exploring round wants). Several
    parameters (or no ``clean_xy``): :func:`nearest_mean` of the query with its hurdle (0 where
    most neighbours left the image unchanged), each of the ``k`` nearest pilot points weighted
    by the biweight ``(1 − (d / h)²)²``, ``h`` the distance to the (k+1)-th.
    """
    pilot_xy = np.asarray(pilot_xy, np.float64)
    pilot_dv = np.asarray(pilot_dv, np.float64)
    query_xy = np.asarray(query_xy, np.float64)
    if len(pilot_dv) == 0:
        raise VcrbenchError("the pilot has no scored samples; re-run the pilot rule")
    if pilot_xy.shape[1] == 1 and clean_xy is not None:
        c = float(np.asarray(clean_xy).ravel()[0])
        x, q = pilot_xy[:, 0], query_xy[:, 0]
        out = np.empty(len(q), np.float64)
        for sign, on_side in ((1.0, q >= c), (-1.0, q < c)):
            mine = sign * (x - c) >= 0
            if not mine.any() or not on_side.any():
                mine = np.ones(len(x), bool)  # a side without pilot points: the whole fit
            xs, ys = monotone_fit(np.abs(x[mine] - c), pilot_dv[mine])
            out[on_side] = interpolate_with_jumps(np.abs(q[on_side] - c), xs, ys,
                                                  GAP if jumps else np.inf)
        return out
    return nearest_mean(pilot_xy, pilot_dv, query_xy, k, block, weighted=True, hurdle=True)


def interpolate_with_jumps(x: np.ndarray, xs: np.ndarray, ys: np.ndarray,
                           gap: float = GAP) -> np.ndarray:
    """``np.interp(x, xs, ys)``, except between two knots whose values differ by more than
    ``gap``: there the nearer knot's value (ties: the lower knot)."""
    out = np.interp(x, xs, ys)
    right = np.clip(np.searchsorted(xs, x, side="right"), 1, len(xs) - 1)
    left = right - 1
    jump = (np.abs(ys[right] - ys[left]) > gap) & (x > xs[left]) & (x < xs[right])
    nearer = np.where(x - xs[left] <= xs[right] - x, left, right)
    out[jump] = ys[nearer[jump]]
    return out


def monotone_fit(distance: np.ndarray, dv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Isotonic (non-decreasing) fit of Δv on ``distance`` (ties averaged, weighted by their
    count; ``scipy.optimize.isotonic_regression``), as the knots of a piecewise-linear curve:
    each constant block's mean distance and value, plus the first and last distances."""
    from scipy.optimize import isotonic_regression

    xs, where = np.unique(distance, return_inverse=True)
    counts = np.bincount(where).astype(np.float64)
    means = np.bincount(where, dv) / counts
    fit = isotonic_regression(means, weights=counts, increasing=True).x
    starts = np.flatnonzero(np.concatenate([[True], np.diff(fit) != 0]))
    ends = np.concatenate([starts[1:], [len(fit)]])
    knots_x = [float(np.average(xs[a:b], weights=counts[a:b])) for a, b in zip(starts, ends,
                                                                              strict=True)]
    knots_y = [float(fit[a]) for a in starts]
    knots_x = [float(xs[0]), *knots_x, float(xs[-1])]
    knots_y = [knots_y[0], *knots_y, knots_y[-1]]
    return np.array(knots_x), np.array(knots_y)


def nearest_mean(pilot_xy: np.ndarray, pilot_dv: np.ndarray, query_xy: np.ndarray,
                 k: int = NEIGHBOURS, block: int = 2048, weighted: bool = False,
                 hurdle: bool = False) -> np.ndarray:
    """Mean Δv of the ``k`` nearest pilot points (Euclidean; ties by pilot order) of each query
    point, plain or biweighted (:func:`predict_dv`); shape (len(query_xy),).

    ``hurdle``: the clean image (Δv exactly 0) is a class of its own. A query whose neighbours
    are mostly (weighted share above 1/2) unchanged images is predicted 0; any other query the
    weighted mean of its changed neighbours only. At small sizes a whole region of a
    corruption's domain leaves every pixel as it was (a blur narrower than half a pixel), and a
    plain mean across its edge predicts small Δv there that the run's samples then never have.
    """
    if hurdle:
        changed = pilot_dv != 0.0
        share = nearest_mean(pilot_xy, changed.astype(np.float64), query_xy, k, block, weighted)
        if not changed.any():
            return np.zeros(len(query_xy), np.float64)
        mean = nearest_mean(pilot_xy[changed], pilot_dv[changed], query_xy, k, block, weighted)
        return np.where(share >= 0.5, mean, 0.0)
    k = min(k, len(pilot_dv))
    out = np.empty(len(query_xy), np.float64)
    for start in range(0, len(query_xy), block):
        q = query_xy[start:start + block]
        dist = np.sqrt(((q[:, None, :] - pilot_xy[None, :, :]) ** 2).sum(-1))
        order = np.argsort(dist, axis=1, kind="stable")
        nearest = order[:, :k]
        if not weighted or k == len(pilot_dv):
            out[start:start + block] = pilot_dv[nearest].mean(axis=1)
            continue
        rows = np.arange(len(q))[:, None]
        h = dist[rows[:, 0], order[:, k]][:, None]
        w = np.clip(1.0 - (dist[rows, nearest] / np.maximum(h, 1e-12)) ** 2, 0.0, 1.0) ** 2
        w[w.sum(axis=1) == 0] = 1.0  # k + 1 points at one distance: a plain mean
        out[start:start + block] = (w * pilot_dv[nearest]).sum(1) / w.sum(1)
    return out


def flat_selection(predicted: np.ndarray, n: int, target: np.ndarray,
                   rng: np.random.Generator, exclude: np.ndarray | None = None,
                   fill_empty: bool = True, quota: np.ndarray | None = None) -> np.ndarray:
    """Indices (sorted) of ``n`` candidates whose predicted Δv is as flat as possible over the
    bins where ``target`` (boolean, (bins,)) is true (module docstring, step 4).

    Each target bin gets an equal share of ``n`` (the remainder to bins in a keyed random
    order). A bin holding predictions takes its share as a keyed random subset of them; one with
    fewer than its share gives them all and the rest goes to the others. A target bin holding no
    prediction (reached in the pilot only through the spread of Δv across images, e.g. beyond the
    strongest setting's mean) takes its share from the candidates predicted nearest its centre,
    so the design still sends samples its way (``fill_empty``; else the empty bins' share goes
    to the others, as the pilot's exploring and filling rounds do). If the
    candidates run short, the rest are picked at random among the others. ``exclude``:
    candidate indices not to pick. ``quota``: (bins,) int64 counts per bin of predicted Δv
    summing to ``n`` (:func:`spread_quota`) instead of equal shares of the target bins.
    """
    bins = len(target)
    which = bin_of(predicted, bins)
    allowed = np.ones(len(predicted), bool)
    if exclude is not None:
        allowed[np.asarray(exclude, np.int64)] = False
    if allowed.sum() < n:
        raise VcrbenchError(f"{allowed.sum()} candidates for {n} samples; raise the pool size")
    members = [rng.permutation(np.flatnonzero(allowed & (which == b))) for b in range(bins)]
    left = n
    if quota is not None:
        quota = np.asarray(quota, np.int64).copy()
        if quota.shape != (bins,) or quota.sum() != n or (quota < 0).any():
            raise ValueError(f"quota must be {bins} non-negative counts summing to {n}")
        targets, left = np.flatnonzero(quota), 0
    else:
        targets = np.flatnonzero(target)
        if not fill_empty and any(len(members[b]) for b in targets):
            targets = np.array([b for b in targets if len(members[b])], np.int64)
        quota = np.zeros(bins, np.int64)
        if len(targets):
            _share_out(quota, targets, n, rng)
            left = 0
    full = [b for b in targets if len(members[b])]
    while True:  # bins short of candidates pass their rest on to the others
        for b in full:
            over = quota[b] - len(members[b])
            if over > 0:
                quota[b] -= over
                left += over
        full = [b for b in full if quota[b] < len(members[b])]
        if left == 0 or not full:
            break
        _share_out(quota, np.array(full), left, rng)
        left = 0
    taken = np.zeros(len(predicted), bool)
    for b in range(bins):
        taken[members[b][:quota[b]]] = True
    for b in targets:
        if len(members[b]) == 0 and quota[b]:  # nearest predictions to an empty bin
            free = np.flatnonzero(allowed & ~taken)
            gap = np.abs(predicted[free] - (b + 0.5) / bins)
            taken[free[np.argsort(gap, kind="stable")[:quota[b]]]] = True
    if left > 0:
        taken[rng.permutation(np.flatnonzero(allowed & ~taken))[:left]] = True
    return np.flatnonzero(taken).astype(np.int64)


def pilot_predictions(pilot_xy: np.ndarray, pilot_dv: np.ndarray, rows: np.ndarray, *,
                      clean_xy: np.ndarray | None) -> np.ndarray:
    """Pilot samples ``rows``' Δv as the fit predicts a candidate's, for their errors
    (:func:`spread_matrix`); shape (len(rows),).

    Several parameters: left out of the fit one at a time (a sample is its own nearest
    neighbour, so its own Δv would hide the error a candidate near it has). One parameter: the
    fit of all samples (a monotone fit averages each sample with its block; leaving one out
    of a steep stretch would move the blocks there and overstate the errors)."""
    rows = np.asarray(rows, np.int64)
    if pilot_xy.shape[1] == 1 and clean_xy is not None:
        return predict_dv(pilot_xy, pilot_dv, pilot_xy[rows], clean_xy=clean_xy)
    out = np.empty(len(rows), np.float64)
    for i, row in enumerate(rows):
        others = np.arange(len(pilot_dv)) != row
        out[i] = predict_dv(pilot_xy[others], pilot_dv[others], pilot_xy[row:row + 1],
                            clean_xy=clean_xy)[0]
    return out


def spread_matrix(predicted: np.ndarray, actual: np.ndarray, bins: int,
                  k: int = SPREAD_NEIGHBOURS, offsets: int = 5) -> np.ndarray:
    """(bins, bins) ``T[p, a]``: the share of samples predicted in Δv bin ``p`` that land in
    bin ``a``, from the pilot's errors (``predicted``: :func:`pilot_predictions`, ``actual``:
    scored).

    Row ``p``: the ``k`` pilot samples predicted nearest bin ``p``'s centre; each lands at
    ``x + (actual − predicted)`` for ``offsets`` positions ``x`` spread evenly inside the bin
    (clipped to [0, 1]), except that an unchanged image (Δv 0) stays at 0: a hurdle miss does
    not move with the prediction. Rows sum to 1."""
    predicted, actual = np.asarray(predicted, np.float64), np.asarray(actual, np.float64)
    k = min(k, len(actual))
    if k == 0:
        return np.eye(bins)
    spread = np.zeros((bins, bins), np.float64)
    error = actual - predicted
    inside = (np.arange(offsets) + 0.5) / offsets
    for b in range(bins):
        centre = (b + 0.5) / bins
        nearest = np.argsort(np.abs(predicted - centre), kind="stable")[:k]
        x = (b + inside[:, None]) / bins
        landed = np.where(actual[nearest] == 0.0, 0.0, np.clip(x + error[nearest], 0.0, 1.0))
        spread[b] = np.bincount(bin_of(landed.ravel(), bins), minlength=bins) / landed.size
    return spread


def spread_quota(spread: np.ndarray, available: np.ndarray, n: int,
                 target: np.ndarray) -> np.ndarray:
    """(bins,) int64 candidates to pick per bin of predicted Δv so that the *expected* Δv
    histogram ``h = quota @ spread`` is as flat as possible over the ``target`` bins and empty
    elsewhere: the linear programme (``scipy.optimize.linprog``, HiGHS) minimising the cost of
    the shortfalls (:data:`SHORTFALL_COST` a sample down to ``g / 2``, and below it) plus the
    excesses (1 a sample) over ``0 <= quota <= available``, ``Σ quota = n``,
    ``g = n / #target`` (a shortfall costs more than an excess: coverage needs every bin filled,
    and a sample sent to a neighbour to reach a bin is an excess there), then rounded by largest
    remainders (ties: the lower bin).

    It deconvolves the spread of Δv across images and parameters that the fit cannot see: a bin
    at the edge of the reachable range, reached only through that spread, draws from its
    neighbours, and a predicted bin whose samples mostly land elsewhere gives way."""
    from scipy.optimize import linprog

    bins = len(target)
    available = np.asarray(available, np.int64)
    if available.sum() < n:
        raise VcrbenchError(f"{available.sum()} candidates for {n} samples; raise the pool size")
    goal = np.where(target, n / max(1, int(target.sum())), 0.0)
    eye, zero = np.eye(bins), np.zeros((bins, bins))
    # variables: quota, shortfall down to half the goal, shortfall below it, excess (bins each)
    cost = np.concatenate([np.zeros(bins), np.where(target, SHORTFALL_COST[0], 0.0),
                           np.where(target, SHORTFALL_COST[1], 0.0), np.ones(bins)])
    upper_rows = np.vstack([np.hstack([-spread.T, -eye, -eye, zero]),   # h + shortfall >= goal
                            np.hstack([spread.T, zero, zero, -eye])])   # h - excess <= goal
    result = linprog(cost, A_ub=upper_rows, b_ub=np.concatenate([-goal, goal]),
                     A_eq=np.concatenate([np.ones(bins), np.zeros(3 * bins)])[None],
                     b_eq=[float(n)],
                     bounds=[(0.0, float(a)) for a in available]
                     + [(0.0, g / 2) for g in goal] + [(0.0, None)] * (2 * bins),
                     method="highs")
    if not result.success:
        raise VcrbenchError(f"the adaptive design's quotas could not be solved: {result.message}")
    shares = np.clip(result.x[:bins], 0.0, available)
    quota = np.minimum(np.floor(shares + 1e-9).astype(np.int64), available)
    while quota.sum() > n:  # rounding up to the tolerance may overshoot: the largest give one
        quota[np.argmax(quota)] -= 1
    rest = n - int(quota.sum())
    order = np.argsort(-(shares - quota), kind="stable")
    for b in itertools.cycle(order):
        if rest == 0:
            break
        if quota[b] < available[b]:
            quota[b] += 1
            rest -= 1
    return quota


def _share_out(quota: np.ndarray, bins: np.ndarray, count: int,
               rng: np.random.Generator) -> None:
    """Add ``count`` to ``quota`` over ``bins`` as equally as possible, the remainder to bins in
    a keyed random order."""
    order = rng.permutation(bins)
    share, extra = divmod(count, len(order))
    for rank, b in enumerate(order):
        quota[b] += share + (rank < extra)


def extreme_points(name: str, side: int = REFERENCE_SIDE) -> list[dict[str, float]]:
    """The clean values, then every corner of the domain (each parameter at one of its ends,
    ends equal to the clean value left out; at most :data:`MAX_CORNERS`, the ones farthest from
    the clean values first), moved to ``side`` as the run's draws are (``scale_point``)."""
    spec = get_corruption(name)
    ends = []
    for param, (low, high) in spec.parameters.items():
        clean = spec.identity[param]
        options = [v for v in (high, low) if v != clean] or [clean]
        options.sort(key=lambda v: -abs(v - clean))
        ends.append([(param, float(v)) for v in options])
    corners = [dict(c) for c in itertools.product(*ends)][:MAX_CORNERS]
    points = [{p: float(v) for p, v in spec.identity.items()}, *corners]
    return [scale_point(spec, p, side) for p in points]


def pilot_images(image_ids: list[str], seed: int, corruption: str, count: int) -> list[str]:
    """The images of the pilot's samples 0 … count − 1 (their own keyed permutation)."""
    order = IMAGE_ORDER.rng(seed, corruption, "pilot").permutation(len(image_ids))
    return [image_ids[order[j % len(image_ids)]] for j in range(count)]


def pilot_noise_seeds(seed: int, corruption: str, count: int) -> list[int]:
    """The pixel-noise seeds of the pilot's samples 0 … count − 1 (their own keys)."""
    return [seed_of(SAMPLE.key(seed, corruption, "pilot", spawn=(j, NOISE_STREAM)))
            for j in range(count)]


Scorer = Callable[[list[dict[str, float]], int], np.ndarray]


def pilot_design(name: str, seed: int, n: int, score: Scorer, *, side: int = REFERENCE_SIDE,
                 share: float = PILOT_SHARE, bins: int = 40) -> dict[str, np.ndarray]:
    """Run the pilot of corruption ``name`` for a run of ``n`` samples (module docstring, step 2).

    ``score(points, first)`` returns the Δv (float64, (len(points),)) of pilot samples
    ``first`` … ``first + len(points) − 1`` with those parameters (the workflow corrupts and
    scores them on the run's images, :func:`pilot_images`, :func:`pilot_noise_seeds`).
    Returns columns ``round`` (int8, 0 to 3: extremes, pool, exploring, filling),
    ``candidate`` (int64, pool index; −1 for round 0),
    one per parameter (float64) and ``dv`` (float64), one row per pilot sample in order.
    """
    spec = get_corruption(name)
    pool_points = candidates(name, seed, n, side)
    pool = as_matrix(name, pool_points)
    pool_xy = coordinates(pool, pool)
    clean_xy = _clean_xy(name, pool)
    total = pilot_count(n, share)
    extremes = extreme_points(name, side)
    sizes = {BASE: total // 3, EXPLORE: total // 3}
    sizes[FILL] = total - 2 * sizes[BASE]
    rounds = [np.full(len(extremes), EXTREMES)]
    chosen = [np.full(len(extremes), -1)]
    matrix = [as_matrix(name, extremes)]
    dv = [np.asarray(score(extremes, 0), np.float64)]
    done = len(extremes)

    def add(kind: int, picked: np.ndarray) -> None:
        nonlocal done
        rounds.append(np.full(len(picked), kind))
        chosen.append(picked)
        matrix.append(pool[picked])
        dv.append(np.asarray(score([pool_points[j] for j in picked], done), np.float64))
        done += len(picked)

    add(BASE, np.arange(sizes[BASE]))
    for kind in (EXPLORE, FILL):
        seen, used = np.concatenate(dv), np.concatenate(chosen)
        predicted = predict_dv(coordinates(pool, np.concatenate(matrix)), seen, pool_xy,
                               clean_xy=clean_xy, jumps=kind == FILL)
        if kind == EXPLORE:  # every bin between the extremes seen, gaps included
            target = np.zeros(bins, bool)
            target[int(bin_of(seen.min(), bins)[0]):int(bin_of(seen.max(), bins)[0]) + 1] = True
        else:
            target = reachable_bins(seen, bins)
        add(kind, flat_selection(predicted, sizes[kind], target,
                                 selection_rng(seed, name, f"pilot-{kind}"),
                                 exclude=used[used >= 0], fill_empty=False))
    out = {"round": np.concatenate(rounds).astype(np.int8),
           "candidate": np.concatenate(chosen).astype(np.int64)}
    stacked = np.concatenate(matrix)
    for j, param in enumerate(spec.parameters):
        out[param] = stacked[:, j]
    out["dv"] = np.concatenate(dv)
    return out


def _clean_xy(name: str, pool: np.ndarray) -> np.ndarray | None:
    """The clean value's coordinate for a one-parameter corruption, else None."""
    spec = get_corruption(name)
    if len(spec.parameters) != 1:
        return None
    return coordinates(pool, np.array([[spec.identity[p] for p in spec.parameters]]))[0]


def pilot_table(columns: dict[str, np.ndarray]):
    """The pilot's columns (:func:`pilot_design`) as the Arrow table of ``pilot/<c>.parquet``:
    ``round`` int8, ``candidate`` int64, the parameters and ``dv`` float64."""
    import pyarrow as pa

    kinds = {"round": pa.int8(), "candidate": pa.int64()}
    return pa.table({k: pa.array(v, kinds.get(k, pa.float64())) for k, v in columns.items()})


def adaptive_samples(name: str, seed: int, n: int, pilot: dict[str, np.ndarray], *,
                     side: int = REFERENCE_SIDE, bins: int = 40) -> list[dict[str, float]]:
    """The parameters of the run's samples 0 … n − 1 (module docstring, step 4), from the pilot
    table of :func:`pilot_design` (columns as there; any mapping of arrays)."""
    spec = get_corruption(name)
    pool_points = candidates(name, seed, n, side)
    pool = as_matrix(name, pool_points)
    pilot_xy = np.column_stack([np.asarray(pilot[p], np.float64) for p in spec.parameters])
    dv = np.asarray(pilot["dv"], np.float64)
    clean_xy = _clean_xy(name, pool)
    pilot_at = coordinates(pool, pilot_xy)
    predicted = predict_dv(pilot_at, dv, coordinates(pool, pool), clean_xy=clean_xy)
    drawn = np.flatnonzero(np.asarray(pilot["round"]) != EXTREMES)  # from the pool's laws
    spread = spread_matrix(pilot_predictions(pilot_at, dv, drawn, clean_xy=clean_xy), dv[drawn],
                           bins)
    available = np.bincount(bin_of(predicted, bins), minlength=bins)
    target = reachable_bins(dv, bins)
    picked = flat_selection(predicted, n, target, selection_rng(seed, name, "run"),
                            quota=spread_quota(spread, available, n, target))
    return [dict(pool_points[j]) for j in picked]


def adaptive_definition(share: float, bins: int) -> dict[str, object]:
    """What the adaptive design adds to the base design's sampling definition."""
    return {"spacing": "adaptive", "base": BASE_SPACING, "pilot_share": float(share),
            "min_pilot": MIN_PILOT, "pool": [POOL_FACTOR, MIN_POOL],
            "depth": POOL_DEPTH, "neighbours": NEIGHBOURS, "fit": "hurdle",
            "quota": "deconvolved", "spread_neighbours": SPREAD_NEIGHBOURS,
            "shortfall_cost": list(SHORTFALL_COST),
            "gap": GAP, "max_corners": MAX_CORNERS, "bins": int(bins)}


def adaptive_sampling_definition(name: str, side: int = REFERENCE_SIDE, *,
                                 pilot_share: float | None = None,
                                 bins: int | None = None) -> dict[str, object]:
    """The sampling definition of an adaptive run (uniform mode; the samples rule's parameter):
    the ``visual`` definition (the candidates' base design,
    :func:`vcrbench.corruptions.sampling.sampling_definition`) with an ``adaptive`` key, the
    pilot's settings (``pilot_share``, default :data:`PILOT_SHARE`) and the run's M ``bins``
    (default 40)."""
    out = sampling_definition(name, "uniform", "visual", side)
    out["adaptive"] = adaptive_definition(
        PILOT_SHARE if pilot_share is None else pilot_share, 40 if bins is None else bins)
    return out
