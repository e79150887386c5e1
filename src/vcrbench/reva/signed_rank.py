"""The Wilcoxon signed-rank test of paired errors (REVa Table 5), exact where possible.

REVa compares two training methods by grouping, for each, its errors on the perturbation types
(one error per attack, or one uCE per corruption) and testing the paired differences
``d_i = error_i(method) − error_i(baseline)`` with the Wilcoxon signed-rank test. With the six
attacks every difference of one sign gives the exact two-sided p = 2 / 2⁶ = 0.031, the
"0.03" of most of Table 5's cells.

Differences are rounded to :data:`DECIMALS` decimals first: errors are ratios of counts, and
float noise (``3/12 − 1/12 ≠ 4/12 − 2/12`` in the last bit) would otherwise break ties and
zeros. Zero differences are then dropped (Wilcoxon's convention, scipy's
``zero_method="wilcox"``), the others ranked by ``|d|`` (mid-ranks for ties), ``W+`` = the sum
of the ranks of the positive differences. The p-value comes from, in this order:

- ``exact``: no tied ``|d|`` and at most :data:`EXACT_MAX_PAIRS` pairs: the exact null
  distribution of ``W+`` (scipy's ``method="exact"``);
- ``exact permutation``: tied ``|d|`` and at most :data:`PERMUTATION_MAX_PAIRS` pairs: all
  ``2ⁿ`` sign assignments of the mid-ranks (scipy's ``PermutationMethod`` with ``2ⁿ``
  resamples, which enumerates them), exact conditional on the ties;
- ``normal approximation``: otherwise, with scipy's tie correction and no continuity
  correction.

``alternative``: ``two-sided``, or ``less`` (the method's errors are lower: ``d`` tends below
0). scipy's statistic is reported: ``min(W+, W−)`` two-sided, ``W+`` one-sided.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from vcrbench.errors import VcrbenchError

#: Decimals the differences are rounded to before ranking.
DECIMALS = 12
#: Largest number of non-zero differences without ties whose exact distribution is used
#: (scipy's own limit for ``method="auto"``).
EXACT_MAX_PAIRS = 50
#: Largest number of non-zero differences with ties whose 2ⁿ sign assignments are enumerated.
PERMUTATION_MAX_PAIRS = 16
ALTERNATIVES = ("two-sided", "less")
EXACT, PERMUTATION, NORMAL = "exact", "exact permutation", "normal approximation"


@dataclass(frozen=True)
class SignedRankResult:
    """One test: ``statistic`` and ``p_value`` (None: not testable, ``note`` says why),
    ``method`` (None, or one of ``exact``, ``exact permutation``, ``normal approximation``),
    the pairs and how many differences are below, above and at 0."""

    statistic: float | None
    p_value: float | None
    method: str | None
    n_pairs: int
    n_lower: int
    n_higher: int
    n_zero: int
    note: str | None = None


def signed_rank_test(differences, alternative: str = "two-sided") -> SignedRankResult:
    """The Wilcoxon signed-rank test of paired differences ``d`` ``(n,)`` (module docstring).

    Raises:
        VcrbenchError: an unknown alternative, or a non-finite difference.
    """
    if alternative not in ALTERNATIVES:
        raise VcrbenchError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    d = np.asarray(differences, dtype=np.float64).ravel()
    if not np.isfinite(d).all():
        raise VcrbenchError("signed-rank test: every paired difference must be finite")
    d = np.round(d, DECIMALS) + 0.0  # + 0.0: no negative zero
    lower, higher = int(np.sum(d < 0)), int(np.sum(d > 0))
    counts = {"n_pairs": int(d.size), "n_lower": lower, "n_higher": higher,
              "n_zero": int(d.size - lower - higher)}
    nonzero = d[d != 0]
    if nonzero.size == 0:
        note = "no pairs" if d.size == 0 else "every difference is 0: nothing to test"
        return SignedRankResult(None, None, None, note=note, **counts)
    ties = np.unique(np.abs(nonzero)).size < nonzero.size
    if not ties and nonzero.size <= EXACT_MAX_PAIRS:
        method, how = EXACT, "exact"
    elif ties and nonzero.size <= PERMUTATION_MAX_PAIRS:
        method, how = PERMUTATION, stats.PermutationMethod(n_resamples=2**nonzero.size)
    else:
        method, how = NORMAL, "asymptotic"
    result = stats.wilcoxon(nonzero, zero_method="wilcox", alternative=alternative, method=how)
    notes = [f"{counts['n_zero']} zero differences dropped" if counts["n_zero"] else None,
             "tied |differences|: mid-ranks" if ties else None]
    return SignedRankResult(float(result.statistic), float(min(1.0, result.pvalue)), method,
                            note="; ".join(n for n in notes if n) or None, **counts)
