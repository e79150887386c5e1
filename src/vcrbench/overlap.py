"""Corruption overlap, non-overlapping benchmarks, CE / mCE and benchmark balance (NOC paper).

Laugros, Caplier & Ospici, "Increasing the Coverage and Balance of Robustness Benchmarks by
Using Non-Overlapping Corruptions" (ICLR 2021 submission, "NOC" below). Pure arithmetic on
numbers the caller measured; no I/O.

* **Robustness score** (NOC §3.1): ``R_c^m = A_c / A_clean``, the accuracy of model ``m`` on
  the test set corrupted with ``c`` over its clean accuracy (:func:`robustness_score`). The
  paper warns that it is only meaningful when ``A_clean`` is reasonably high.
* **Overlapping score** (NOC §3.1, Eq. (2)). ``m1`` / ``m2`` are trained with ``c1`` / ``c2``
  as data augmentation, ``standard`` without::

      O(c1, c2) = max{0, 1/2 * [ (R_c2^m1 - R_c2^std) / (R_c2^m2 - R_c2^std)
                                + (R_c1^m2 - R_c1^std) / (R_c1^m1 - R_c1^std) ]}

  Each ratio is the gain in robustness to one corruption from training with the *other*,
  normalised by the gain from training with that corruption itself. Eq. (2) is the normalised
  form of the raw transfer sum, Eq. (1) ``(R_c1^m2 - R_c1^std) + (R_c2^m1 - R_c2^std)``. It is
  symmetric in ``(c1, c2)``, 1 for ``c1 = c2``, 0 when neither augmentation transfers (the
  ratios are then null or negative, hence the clipping at 0). Only the lower end is clipped: O
  exceeds 1 when a model trained with ``c1`` is more robust to ``c2`` than the one trained
  with ``c2``. When a denominator is ``<= 0`` (training with ``c`` does not raise the
  robustness to ``c`` itself) Eq. (2) is undefined and the score is NaN (:func:`overlap_score`).
* **Algorithm 1** (NOC §4): among the subsets of the candidate corruptions whose pairwise
  overlapping scores are all within the threshold, keep the largest ones and, among those,
  the one with the lowest mean pairwise overlapping score (:func:`non_overlapping_benchmark`).
  The threshold is "the maximum overlapping score allowed in the benchmark" (Algorithm 1,
  Require), so a pair is allowed when ``O <= threshold`` (step (2)'s "under the threshold" is
  read inclusively; with ``<`` a threshold of 0 could never pair the exactly-0, i.e. fully
  non-overlapping, corruptions that the clipping of Eq. (2) produces). The exact search is a
  maximum-clique search (Bron–Kerbosch with pivoting and size pruning) in the graph whose
  edges are the allowed pairs.
* **CE / mCE** (Hendrycks & Dietterich 2019, used by NOC §4 "How to Use ImageNet-NOC" and
  §5): ``CE_c^f = sum_s E_{s,c}^f / sum_s E_{s,c}^baseline`` over the severities ``s``
  (the baseline is AlexNet in both papers; a single error rate, e.g. over a sample of
  continuously drawn severities as in NOC, is one "severity"), and ``mCE`` is the plain mean
  of the CEs over the corruptions of a benchmark (:func:`corruption_errors`,
  :func:`mean_corruption_error`). Error rates are fractions in [0, 1] and CE / mCE are
  returned as fractions (the papers print them as percentages: 0.89 here is 89 there).
* **Balance** (NOC §5.3): train one model per corruption of a benchmark, compute each model's
  mCE on that benchmark; the more the mCEs spread, the less balanced the benchmark. Spread =
  max − min and the *population* standard deviation (ddof = 0): the paper's 40 / 12.1
  (ImageNet-C, Table 2.a) and 11 / 3.7 (ImageNet-NOC, Table 2.b) are reproduced from the
  printed, rounded mCEs with ddof = 0 (12.07, 3.70), not with ddof = 1 (12.49, 3.96)
  (:func:`balance`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from numbers import Real

import numpy as np

from vcrbench.errors import VcrbenchError

#: Largest |O[i, j] - O[j, i]| (relative to max(1, |O|)) accepted as a symmetric matrix.
SYMMETRY_TOL = 1e-9

# --- robustness and overlapping scores --------------------------------------------------------


def _real(name: str, value: object) -> float:
    """``value`` as a float; bools, non-numbers and NaN raise."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise VcrbenchError(f"{name} must be a real number, got {value!r}")
    out = float(value)
    if math.isnan(out):
        raise VcrbenchError(f"{name} is NaN; pass a measured number")
    return out


def robustness_score(accuracy_corrupted: float, accuracy_clean: float) -> float:
    """``R_c^m = A_c / A_clean`` (NOC §3.1).

    Args:
        accuracy_corrupted: ``A_c >= 0``, accuracy of the model on the test set corrupted with c.
        accuracy_clean: ``A_clean > 0``, its accuracy on the clean test set (same unit).

    Returns:
        The robustness score (1 = no loss; may exceed 1).
    """
    a_c = _real("accuracy_corrupted", accuracy_corrupted)
    a_0 = _real("accuracy_clean", accuracy_clean)
    if not math.isfinite(a_c) or a_c < 0:
        raise VcrbenchError(f"accuracy_corrupted must be finite and >= 0, got {a_c!r}")
    if not math.isfinite(a_0) or a_0 <= 0:
        raise VcrbenchError(
            f"accuracy_clean must be finite and > 0, got {a_0!r}; the robustness score "
            "A_c / A_clean needs a model that classifies clean images"
        )
    return a_c / a_0


def _check_names(corruptions: Sequence[str], standard: str | None = None) -> list[str]:
    if isinstance(corruptions, str):
        raise VcrbenchError(f"corruptions must be a sequence of names, not {corruptions!r}")
    names = list(corruptions)
    if not names:
        raise VcrbenchError("corruptions is empty; pass at least one corruption name")
    seen: set[str] = set()
    for name in names:
        if not isinstance(name, str) or not name:
            raise VcrbenchError(f"corruption names must be non-empty strings, got {name!r}")
        if name in seen:
            raise VcrbenchError(f"corruption {name!r} appears twice; list each once")
        if standard is not None and name == standard:
            raise VcrbenchError(
                f"corruption {name!r} is also the name of the standard model; rename one"
            )
        seen.add(name)
    return names


def _score(r: Mapping[tuple[str, str], float], model: str, corruption: str) -> float:
    try:
        value = r[(model, corruption)]
    except KeyError:
        raise VcrbenchError(
            f"no robustness score r[({model!r}, {corruption!r})]: the model trained with "
            f"{model!r} must be evaluated on {corruption!r}"
        ) from None
    out = _real(f"r[({model!r}, {corruption!r})]", value)
    if not math.isfinite(out):
        raise VcrbenchError(f"r[({model!r}, {corruption!r})] = {out!r} is not finite")
    return out


def overlap_score(
    r: Mapping[tuple[str, str], float], c1: str, c2: str, standard: str = "standard"
) -> float:
    """Overlapping score ``O(c1, c2)`` of NOC Eq. (2) (module docstring).

    Args:
        r: robustness scores ``r[(model, corruption)]``; ``model`` is ``standard`` (trained
            without augmentation) or a corruption name (trained with that corruption), so
            ``r[(c1, c2)] = R_c2^m1``. Needs the six keys ``(standard | c1 | c2, c1 | c2)``.
        c1, c2: the two corruptions (``c1 == c2`` allowed).
        standard: key of the model trained without augmentation.

    Returns:
        ``max(0, (ratio_12 + ratio_21) / 2)`` in ``[0, inf)``; exactly 1 when ``c1 == c2`` and
        exactly symmetric. NaN when ``R_c2^m2 - R_c2^std <= 0`` or ``R_c1^m1 - R_c1^std <= 0``:
        Eq. (2) normalises the transfer by the model's gain on its own corruption; with no gain
        the ratio is a division by zero, and with a loss its sign flips (a harmful transfer
        would read as an overlap), so the models carry no overlap information and no number is
        made up. Rerun the augmentation (or drop the corruption) instead.
    """
    if not isinstance(standard, str) or not standard:
        raise VcrbenchError(f"standard must be a non-empty model name, got {standard!r}")
    for name in (c1, c2):
        if not isinstance(name, str) or not name:
            raise VcrbenchError(f"corruption names must be non-empty strings, got {name!r}")
        if name == standard:
            raise VcrbenchError(
                f"corruption {name!r} is also the name of the standard model; rename one"
            )
    gain_12 = _score(r, c1, c2) - _score(r, standard, c2)  # R_c2^m1 - R_c2^std
    self_2 = _score(r, c2, c2) - _score(r, standard, c2)  # R_c2^m2 - R_c2^std
    gain_21 = _score(r, c2, c1) - _score(r, standard, c1)  # R_c1^m2 - R_c1^std
    self_1 = _score(r, c1, c1) - _score(r, standard, c1)  # R_c1^m1 - R_c1^std
    if self_1 <= 0 or self_2 <= 0:
        return math.nan
    # Swapping c1 and c2 swaps the two ratios; float addition commutes, so O is exactly symmetric.
    return max(0.0, 0.5 * (gain_12 / self_2 + gain_21 / self_1))


def overlap_matrix(
    r: Mapping[tuple[str, str], float], corruptions: Sequence[str], standard: str = "standard"
) -> np.ndarray:
    """All overlapping scores of NOC Eq. (2) between ``corruptions``.

    Args:
        r, standard: as in :func:`overlap_score`; ``r`` needs ``(standard | a, b)`` for every
            corruption ``a``, ``b``.
        corruptions: ``k`` distinct names, the row / column order.

    Returns:
        ``(k, k)`` float64, symmetric; diagonal 1.0 (NaN where training with ``c`` does not
        raise the robustness to ``c``, which also makes that corruption's row NaN).
    """
    names = _check_names(corruptions, standard)
    k = len(names)
    out = np.empty((k, k), dtype=np.float64)
    for i in range(k):
        for j in range(i, k):
            out[i, j] = out[j, i] = overlap_score(r, names[i], names[j], standard)
    return out


# --- Algorithm 1: non-overlapping benchmark ---------------------------------------------------


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
    return _real("threshold", threshold)


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
    names = _check_names(corruptions)
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
    names = _check_names(corruptions)
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


# --- CE, mCE and balance ----------------------------------------------------------------------


def _error_rates(what: str, values: Sequence[float] | float) -> list[float]:
    if isinstance(values, Real) and not isinstance(values, bool):
        items = [values]
    elif isinstance(values, str | bytes | Mapping) or not isinstance(values, Iterable):
        raise VcrbenchError(
            f"{what} must be an error rate or a sequence of per-severity error rates, "
            f"got {values!r}"
        )
    else:
        array = np.asarray(values, dtype=object)
        if array.ndim != 1:
            raise VcrbenchError(f"{what} must be a flat sequence of per-severity error rates")
        items = list(array)
    if not items:
        raise VcrbenchError(f"{what} has no error rate")
    out = [_real(what, v) for v in items]
    for v in out:
        if not 0.0 <= v <= 1.0:
            raise VcrbenchError(f"{what}: error rate {v!r} is outside [0, 1]; pass fractions")
    return out


def corruption_errors(
    errors: Mapping[str, Sequence[float] | float],
    baseline: Mapping[str, Sequence[float] | float],
) -> dict[str, float]:
    """Corruption errors ``CE_c^f = sum_s E_{s,c}^f / sum_s E_{s,c}^baseline`` of one model f.

    Args:
        errors: ``{corruption: error rate(s)}`` of model f, a float (one severity) or one error
            rate per severity, fractions in [0, 1].
        baseline: the same for the baseline model (AlexNet in NOC); must hold every corruption
            of ``errors`` with the same number of severities (extra corruptions are ignored).

    Returns:
        ``{corruption: CE}`` in the order of ``errors``, as fractions (1.0 = the baseline).
    """
    if not isinstance(errors, Mapping) or not isinstance(baseline, Mapping):
        raise VcrbenchError("errors and baseline must be mappings {corruption: error rate(s)}")
    if not errors:
        raise VcrbenchError("errors is empty; pass at least one corruption")
    out = {}
    for corruption, values in errors.items():
        if corruption not in baseline:
            raise VcrbenchError(
                f"baseline has no error rate for corruption {corruption!r}; "
                f"it has: {', '.join(map(repr, baseline)) or 'none'}"
            )
        mine = _error_rates(f"errors[{corruption!r}]", values)
        base = _error_rates(f"baseline[{corruption!r}]", baseline[corruption])
        if len(mine) != len(base):
            raise VcrbenchError(
                f"corruption {corruption!r}: {len(mine)} severities for the model but "
                f"{len(base)} for the baseline; pass one error rate per severity for both"
            )
        denominator = math.fsum(base)
        if denominator <= 0:
            raise VcrbenchError(
                f"baseline error on corruption {corruption!r} is 0, so its CE is undefined"
            )
        out[corruption] = math.fsum(mine) / denominator
    return out


def _finite_values(what: str, values: Mapping[str, float]) -> np.ndarray:
    if not isinstance(values, Mapping):
        raise VcrbenchError(f"{what} must be a mapping {{name: value}}, got {values!r}")
    if not values:
        raise VcrbenchError(f"{what} is empty; pass at least one value")
    out = []
    for key, value in values.items():
        v = _real(f"{what}[{key!r}]", value)
        if not math.isfinite(v):
            raise VcrbenchError(f"{what}[{key!r}] = {v!r} is not finite")
        out.append(v)
    return np.asarray(out, dtype=np.float64)


def mean_corruption_error(ce: Mapping[str, float]) -> float:
    """``mCE``: the mean of the CEs over the corruptions of a benchmark (``{corruption: CE}``,
    e.g. from :func:`corruption_errors`), a fraction like its inputs."""
    values = _finite_values("ce", ce)
    if np.any(values < 0):
        raise VcrbenchError("a CE is negative; CEs are ratios of error rates")
    return math.fsum(values) / values.size


def balance(mce_by_model: Mapping[str, float]) -> dict:
    """Spread of the mCEs of single-corruption-trained models on a benchmark (NOC §5.3).

    Args:
        mce_by_model: ``{model: mCE}``, one model per benchmark corruption (trained with that
            corruption) and its mCE on the benchmark, in any one unit (fractions or %).

    Returns:
        ``range`` (max − min), ``std`` (population, ddof = 0, as NOC; module docstring),
        ``min``, ``max``, ``mean``, floats in the unit of the input. Lower = better balanced.
    """
    values = _finite_values("mce_by_model", mce_by_model)
    mean = math.fsum(values) / values.size
    var = math.fsum((values - mean) ** 2) / values.size
    lo, hi = float(values.min()), float(values.max())
    return {"range": hi - lo, "std": math.sqrt(var), "min": lo, "max": hi, "mean": mean}
