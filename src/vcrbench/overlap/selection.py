"""NOC Algorithm 1: the largest set of candidate corruptions that overlap at most a threshold.

Laugros, Caplier & Ospici, "Increasing the Coverage and Balance of Robustness Benchmarks by
Using Non-Overlapping Corruptions" (ICLR 2021 submission, "NOC" below). Pure arithmetic on
numbers the caller measured; no I/O.

* **Algorithm 1** (NOC §4): among the subsets of the candidate corruptions whose pairwise
  overlapping scores are all within the threshold, keep the largest ones and, among those,
  the one with the lowest mean pairwise overlapping score (:func:`non_overlapping_benchmark`).
  The threshold is "the maximum overlapping score allowed in the benchmark" (Algorithm 1,
  Require), so a pair is allowed when ``O <= threshold`` (step (2)'s "under the threshold" is
  read inclusively; with ``<`` a threshold of 0 could never pair the exactly-0, i.e. fully
  non-overlapping, corruptions that the clipping of Eq. (2) produces). The exact search is a
  maximum-clique search (Bron–Kerbosch with pivoting and size pruning) in the graph whose
  edges are the allowed pairs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from vcrbench.errors import VcrbenchError
from vcrbench.overlap.scores import check_names, real_number

#: Largest |O[i, j] - O[j, i]| (relative to max(1, |O|)) accepted as a symmetric matrix.
SYMMETRY_TOL = 1e-9


def _check_overlap(names: list[str], overlap: np.ndarray) -> np.ndarray:
    try:
        mat = np.asarray(overlap, dtype=np.float64)
    except (TypeError, ValueError):
        raise VcrbenchError("overlap must be a (k, k) array of numbers") from None
    k = len(names)
    if mat.ndim != 2 or mat.shape[0] != mat.shape[1]:
        raise VcrbenchError(f"overlap must be a square (k, k) matrix, got shape {mat.shape}")
    if mat.shape[0] != k:
        raise VcrbenchError(
            f"overlap is {mat.shape[0]} x {mat.shape[1]} but there are {k} corruptions"
        )
    for i in range(k):
        for j in range(i + 1, k):
            a, b = mat[i, j], mat[j, i]
            if math.isnan(a) or math.isnan(b):
                raise VcrbenchError(
                    f"overlap of {names[i]!r} and {names[j]!r} is NaN (training with one of "
                    "them does not improve robustness to itself); Algorithm 1 needs every "
                    "pair, so drop that corruption from the candidates"
                )
            if not (a == b or abs(a - b) <= SYMMETRY_TOL * max(1.0, abs(a), abs(b))):
                raise VcrbenchError(
                    f"overlap is not symmetric: [{names[i]!r}, {names[j]!r}] = {a!r} but "
                    f"[{names[j]!r}, {names[i]!r}] = {b!r}"
                )
    return mat


def _check_threshold(threshold: object) -> float:
    return real_number("threshold", threshold)


def _maximum_cliques(adjacency: list[int]) -> list[int]:
    """Every clique of maximum size (as bitmasks) of the graph with neighbour bitmasks
    ``adjacency``: Bron–Kerbosch with Tomita pivoting, skipping branches that cannot reach the
    best size found so far (ties kept, so every maximum clique is listed once)."""
    best = 0
    found: list[int] = []

    def expand(clique: int, size: int, cand: int, excl: int) -> None:
        nonlocal best
        if not cand and not excl:
            if size > best:
                best = size
                found.clear()
            if size == best:
                found.append(clique)
            return
        if size + cand.bit_count() < best:
            return
        pivot_from = cand | excl
        pivot, most = -1, -1
        while pivot_from:
            low = pivot_from & -pivot_from
            u = low.bit_length() - 1
            n_u = (cand & adjacency[u]).bit_count()
            if n_u > most:
                pivot, most = u, n_u
            pivot_from ^= low
        todo = cand & ~adjacency[pivot]
        while todo:
            low = todo & -todo
            v = low.bit_length() - 1
            expand(clique | low, size + 1, cand & adjacency[v], excl & adjacency[v])
            cand &= ~low
            excl |= low
            todo ^= low
            if size + cand.bit_count() < best:
                return

    expand(0, 0, (1 << len(adjacency)) - 1, 0)
    return found


def _members(mask: int) -> tuple[int, ...]:
    return tuple(i for i in range(mask.bit_length()) if mask >> i & 1)


def _mean_overlap(mat: np.ndarray, members: tuple[int, ...]) -> float:
    """Mean of ``mat[i, j]``, ``i < j`` in ``members`` (exactly rounded sum); 0.0 for one."""
    pairs = [mat[i, j] for n, i in enumerate(members) for j in members[n + 1 :]]
    return math.fsum(pairs) / len(pairs) if pairs else 0.0


def _benchmark(
    names: list[str], mat: np.ndarray, threshold: float
) -> tuple[tuple[str, ...], float]:
    k = len(names)
    adjacency = [0] * k
    for i in range(k):
        for j in range(i + 1, k):
            if mat[i, j] <= threshold:
                adjacency[i] |= 1 << j
                adjacency[j] |= 1 << i
    best: tuple[float, tuple[int, ...]] | None = None
    for mask in _maximum_cliques(adjacency):
        members = _members(mask)
        key = (_mean_overlap(mat, members), members)
        if best is None or key < best:
            best = key
    assert best is not None  # k >= 1, so there is at least one clique
    mean, members = best
    return tuple(names[i] for i in members), mean


def non_overlapping_benchmark(
    corruptions: Sequence[str], overlap: np.ndarray, threshold: float
) -> tuple[tuple[str, ...], float]:
    """NOC Algorithm 1, steps (2)–(3), for one overlapping threshold.

    Args:
        corruptions: ``k >= 1`` distinct candidate names (the set S), the order of ``overlap``.
        overlap: ``(k, k)`` overlapping scores (e.g. :func:`overlap_matrix`), symmetric within
            :data:`SYMMETRY_TOL`; the diagonal is ignored, an off-diagonal NaN raises (the
            algorithm needs every pair).
        threshold: the maximum overlapping score allowed: a pair may be in the benchmark when
            ``overlap <= threshold`` (module docstring).

    Returns:
        ``(benchmark, mean_overlap)``: the largest subset whose pairs are all allowed with, among
        those, the lowest mean pairwise overlap (in the order of ``corruptions``), and that mean
        (0.0 for a one-corruption benchmark, which has no pair). Equal means (exact float
        equality of exactly rounded sums) go to the subset whose sorted index tuple comes first
        lexicographically. Exact search, exponential in the worst case; milliseconds for the
        ~20 candidates of the paper.
    """
    names = check_names(corruptions)
    mat = _check_overlap(names, overlap)
    return _benchmark(names, mat, _check_threshold(threshold))


def non_overlapping_benchmarks(
    corruptions: Sequence[str], overlap: np.ndarray, thresholds: Iterable[float]
) -> list[dict]:
    """:func:`non_overlapping_benchmark` for each threshold (NOC Appendix B, Figure 7).

    Returns:
        One dict per threshold, in the given order: ``threshold`` (float), ``corruptions``
        (tuple of names), ``size`` (int), ``mean_overlap`` (float).
    """
    names = check_names(corruptions)
    mat = _check_overlap(names, overlap)
    if isinstance(thresholds, str) or not isinstance(thresholds, Iterable):
        raise VcrbenchError(f"thresholds must be a sequence of numbers, got {thresholds!r}")
    rows = []
    for threshold in thresholds:
        t = _check_threshold(threshold)
        chosen, mean = _benchmark(names, mat, t)
        rows.append(
            {"threshold": t, "corruptions": chosen, "size": len(chosen), "mean_overlap": mean}
        )
    return rows
