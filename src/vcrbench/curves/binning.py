"""Δv bins and per-bin rates (Algorithm 1, first loop).

``M`` equal-width bins on [0, 1]. The bin of ``v`` is ``min(floor(v·M), M − 1)``: bin ``j``
holds ``j/M ≤ v < (j+1)/M`` and the last bin also holds ``v = 1``. A value exactly on an
inner edge ``j/M`` (the float ``j / M``) belongs to bin ``j`` only, so it is counted once.
A bin with fewer than ``min_count`` (L) samples is *missing*.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vcrbench.errors import VcrbenchError


def _check_bins(bins: int) -> int:
    if isinstance(bins, bool) or int(bins) != bins or int(bins) < 1:
        raise VcrbenchError(f"binning.bins must be a positive integer, got {bins!r}")
    return int(bins)


def _check_dv(dv: np.ndarray) -> np.ndarray:
    dv = np.asarray(dv, dtype=np.float64)
    if dv.ndim != 1:
        raise VcrbenchError(f"Δv must be a 1-D array, got shape {dv.shape}")
    bad = ~((dv >= 0.0) & (dv <= 1.0))  # also catches NaN
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise VcrbenchError(
            f"Δv must lie in [0, 1]; {int(bad.sum())} value(s) do not (first: index {first}, "
            f"value {dv[first]!r}); check the VIF scores"
        )
    return dv


def bin_index(dv: np.ndarray, bins: int) -> np.ndarray:
    """Bin of each Δv value.

    Args:
        dv: ``(N,)`` visual change in [0, 1] (NaN or values outside raise ``VcrbenchError``).
        bins: number of bins ``M``.

    Returns:
        ``(N,)`` int64 in ``[0, M − 1]``: ``min(floor(v·M), M − 1)``, corrected so that a value
        equal to the float edge ``j / M`` always lands in bin ``j`` (``v·M`` can round below
        ``j``).
    """
    m = _check_bins(bins)
    dv = _check_dv(dv)
    j = np.minimum(np.floor(dv * m).astype(np.int64), m - 1)
    # Exact edge handling against the float edges j / M (guards v·M rounding either way).
    up = (j + 1 < m) & (dv >= (j + 1) / m)
    j = j + up
    down = (j > 0) & (dv < j / m)
    j = j - down
    return j.astype(np.int64)


@dataclass(frozen=True)
class BinnedRates:
    """Per-bin counts and rates.

    Attributes:
        edges: ``(M + 1,)`` bin edges ``j / M``.
        centers: ``(M,)`` bin centres ``(j + 0.5) / M``.
        counts: ``(M,)`` int64 samples per bin.
        successes: ``(M,)`` int64 successes (correct / consistent predictions) per bin.
        rates: ``(M,)`` float ``successes / counts`` in [0, 1]; NaN where the bin is missing.
        present: ``(M,)`` bool, ``counts >= min_count``.
        min_count: L, the minimum count of a present bin.
    """

    edges: np.ndarray
    centers: np.ndarray
    counts: np.ndarray
    successes: np.ndarray
    rates: np.ndarray
    present: np.ndarray
    min_count: int = 20

    @property
    def bins(self) -> int:
        """Number of bins ``M``."""
        return int(self.counts.shape[0])


def _check_success(success: np.ndarray, n: int) -> np.ndarray:
    s = np.asarray(success)
    if s.shape != (n,):
        raise VcrbenchError(f"success must have shape ({n},) like Δv, got {s.shape}")
    if s.dtype != np.bool_:
        sf = s.astype(np.float64)
        if not np.all((sf == 0.0) | (sf == 1.0)):
            raise VcrbenchError("success must be boolean or 0/1")
        s = sf == 1.0
    return s


def _check_min_count(min_count: int) -> int:
    if isinstance(min_count, bool) or int(min_count) != min_count or int(min_count) < 1:
        raise VcrbenchError(f"binning.min_count must be a positive integer, got {min_count!r}")
    return int(min_count)


def rates_from_counts(counts: np.ndarray, successes: np.ndarray, min_count: int) -> BinnedRates:
    """:class:`BinnedRates` from ``(M,)`` counts and successes (e.g. a bootstrap replicate)."""
    counts = np.asarray(counts, dtype=np.int64)
    successes = np.asarray(successes, dtype=np.int64)
    m = counts.shape[0]
    present = counts >= min_count
    rates = np.full(m, np.nan)
    rates[present] = successes[present] / counts[present]
    edges = np.arange(m + 1) / m
    centers = (np.arange(m) + 0.5) / m
    return BinnedRates(edges, centers, counts, successes, rates, present, int(min_count))


def bin_rates(
    dv: np.ndarray, success: np.ndarray, bins: int = 40, min_count: int = 20
) -> BinnedRates:
    """Counts, successes and rates per Δv bin.

    Args:
        dv: ``(N,)`` visual change in [0, 1].
        success: ``(N,)`` bool (or 0/1): prediction correct (accuracy) or unchanged
            (consistency).
        bins: M.
        min_count: L; bins with fewer samples are missing (rate NaN, ``present`` False).
    """
    m = _check_bins(bins)
    lmin = _check_min_count(min_count)
    idx = bin_index(dv, m)
    s = _check_success(success, idx.shape[0])
    counts = np.bincount(idx, minlength=m).astype(np.int64)
    successes = np.bincount(idx[s], minlength=m).astype(np.int64)
    return rates_from_counts(counts, successes, lmin)


def coverage(dv: np.ndarray, bins: int = 40, min_count: int = 20) -> float:
    """Δv coverage: fraction of the M bins with at least L samples (paper, Table 2), in [0, 1]."""
    m = _check_bins(bins)
    lmin = _check_min_count(min_count)
    counts = np.bincount(bin_index(dv, m), minlength=m)
    return float(np.count_nonzero(counts >= lmin) / m)


def expected_coverage(dv: np.ndarray, n: int, bins: int = 40, min_count: int = 20) -> float:
    """Δv coverage that a sample of ``n`` of these samples would have, on average over every
    subsample of that size drawn without replacement (``n`` at most their number N).

    Exact: a bin holding ``K`` of the N samples gets a hypergeometric ``(N, K, n)`` count, so the
    expected coverage is the mean over the M bins of ``P(count >= L)``. It puts a large sample
    on the footing of a small one (e.g. the uniform sample next to the ImageNet-C sample).
    """
    m = _check_bins(bins)
    lmin = _check_min_count(min_count)
    values = _check_dv(np.asarray(dv, dtype=np.float64))
    total = values.size
    if isinstance(n, bool) or int(n) != n or not 0 <= n <= total:
        raise VcrbenchError(f"subsample size must be an integer in [0, {total}], got {n!r}")
    counts = np.bincount(bin_index(values, m), minlength=m)
    # imported here: scipy.stats adds about 0.5 s to the start of every rates and curves job,
    # which never call this
    from scipy.stats import hypergeom

    return float(np.mean(hypergeom.sf(lmin - 1, total, counts, int(n))))
