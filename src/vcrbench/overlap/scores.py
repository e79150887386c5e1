"""Robustness and overlapping scores of corruptions (NOC paper §3.1).

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
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from numbers import Real

import numpy as np

from vcrbench.errors import VcrbenchError


def real_number(name: str, value: object) -> float:
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
    a_c = real_number("accuracy_corrupted", accuracy_corrupted)
    a_0 = real_number("accuracy_clean", accuracy_clean)
    if not math.isfinite(a_c) or a_c < 0:
        raise VcrbenchError(f"accuracy_corrupted must be finite and >= 0, got {a_c!r}")
    if not math.isfinite(a_0) or a_0 <= 0:
        raise VcrbenchError(
            f"accuracy_clean must be finite and > 0, got {a_0!r}; the robustness score "
            "A_c / A_clean needs a model that classifies clean images"
        )
    return a_c / a_0


def check_names(corruptions: Sequence[str], standard: str | None = None) -> list[str]:
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
    out = real_number(f"r[({model!r}, {corruption!r})]", value)
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
    names = check_names(corruptions, standard)
    k = len(names)
    out = np.empty((k, k), dtype=np.float64)
    for i in range(k):
        for j in range(i, k):
            out[i, j] = out[j, i] = overlap_score(r, names[i], names[j], standard)
    return out
