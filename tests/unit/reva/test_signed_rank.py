"""The Wilcoxon signed-rank test of paired errors against two references: scipy on known pairs,
and a slow enumeration of all 2ⁿ sign assignments of the (mid-)ranks for small n."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from vcrbench.errors import VcrbenchError
from vcrbench.reva.signed_rank import EXACT, NORMAL, PERMUTATION, signed_rank_test


def _midranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``values``, ties sharing the mean of their ranks (a slow double loop)."""
    ranks = np.empty(values.size)
    for i, v in enumerate(values):
        below = sum(1 for w in values if w < v)
        equal = sum(1 for w in values if w == v)
        ranks[i] = below + (equal + 1) / 2
    return ranks


def _enumerated_p(d, alternative: str) -> float:
    """The p-value of W+ over all 2ⁿ sign assignments of the non-zero |d|'s mid-ranks."""
    d = np.asarray([x for x in d if x != 0], dtype=float)
    ranks = _midranks(np.abs(d))
    observed = ranks[d > 0].sum()
    null = np.array([sum(r for r, s in zip(ranks, signs, strict=True) if s)
                     for signs in itertools.product((False, True), repeat=d.size)])
    p_less = np.mean(null <= observed + 1e-9)
    if alternative == "less":
        return float(p_less)
    p_greater = np.mean(null >= observed - 1e-9)
    return float(min(1.0, 2 * min(p_less, p_greater)))


KNOWN = {
    # Table 5's typical cell: six attacks, the method lower on every one
    "six lower": [-0.30, -0.12, -0.25, -0.05, -0.41, -0.18],
    "mixed signs": [0.02, -0.11, -0.07, 0.04, -0.15, -0.09, -0.01],
    "tied |d|": [0.1, -0.1, -0.3, -0.2, -0.2, 0.05],
    "a zero and ties": [0.0, -0.1, -0.1, 0.2, -0.3, -0.4, -0.5, 0.0],
    "one pair": [0.3],
}


@pytest.mark.parametrize("alternative", ["two-sided", "less"])
@pytest.mark.parametrize("name", list(KNOWN))
def test_p_values_match_scipy_and_the_enumeration_of_every_sign(name, alternative):
    d = np.array(KNOWN[name])
    result = signed_rank_test(d, alternative)
    nonzero = d[d != 0]
    ties = np.unique(np.abs(nonzero)).size < nonzero.size
    assert result.method == (PERMUTATION if ties else EXACT)
    assert result.p_value == pytest.approx(_enumerated_p(d, alternative), abs=1e-12)
    how = stats.PermutationMethod(n_resamples=2**nonzero.size) if ties else "exact"
    reference = stats.wilcoxon(nonzero, alternative=alternative, method=how)
    assert result.p_value == pytest.approx(reference.pvalue, abs=1e-12)
    assert result.statistic == pytest.approx(reference.statistic)
    assert (result.n_pairs, result.n_zero) == (d.size, int(np.sum(d == 0)))
    assert result.n_lower + result.n_higher + result.n_zero == d.size


def test_six_same_signs_give_the_exact_two_sided_p_of_table_5():
    result = signed_rank_test([-0.3, -0.1, -0.2, -0.05, -0.4, -0.25])
    assert result.p_value == pytest.approx(2 / 2**6)
    assert (result.n_lower, result.statistic) == (6, 0.0)
    assert signed_rank_test([0.3, 0.1, 0.2, 0.05, 0.4, 0.25], "less").p_value == 1.0


def test_many_tied_pairs_use_the_normal_approximation_as_scipy():
    d = np.repeat([0.01, -0.02, -0.03, 0.04, -0.05], 5)  # 25 pairs, every |d| tied
    result = signed_rank_test(d)
    assert result.method == NORMAL
    assert result.p_value == pytest.approx(stats.wilcoxon(d, method="asymptotic").pvalue)


def test_nothing_to_test_is_said():
    assert signed_rank_test([0.0, 0.0]).p_value is None
    assert "every difference is 0" in signed_rank_test([0.0, 0.0]).note
    assert signed_rank_test([]).note == "no pairs"
    with pytest.raises(VcrbenchError, match="alternative"):
        signed_rank_test([0.1], "greater")
    with pytest.raises(VcrbenchError, match="finite"):
        signed_rank_test([0.1, np.nan])
