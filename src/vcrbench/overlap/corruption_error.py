"""Corruption errors and benchmark balance (NOC §4–5; CE / mCE of Hendrycks & Dietterich).

Laugros, Caplier & Ospici, "Increasing the Coverage and Balance of Robustness Benchmarks by
Using Non-Overlapping Corruptions" (ICLR 2021 submission, "NOC" below). Pure arithmetic on
numbers the caller measured; no I/O.

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
from vcrbench.overlap.scores import real_number


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
    out = [real_number(what, v) for v in items]
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
        v = real_number(f"{what}[{key!r}]", value)
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
