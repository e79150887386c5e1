"""Robust and non-robust perturbations (REVa Sec. 3.1.2 and 4.3.2), from relative errors.

Two rules for the corruptions, both always reported, applied per model and measure:

- ``worst-per-category`` (the paper's: "we chose those with the highest values ... for the
  corresponding standard models in Table 1"; it reproduces Table 1's highlighted cells): within
  each category (:mod:`vcrbench.reva.categories`), the perturbation with the highest relative
  error is non-robust, the others robust; tied maxima are all non-robust.
- ``threshold``: non-robust when the relative error exceeds ``reva.groups.threshold`` (ours; the
  paper states no number).

The attacks (``kind == "attack"``) follow ``reva.groups.attacks``:

- ``non-robust`` (the paper's, §4.3.2: "all the considered adversarial perturbations fall in
  the non-robust group"): every attack is non-robust under both rules;
- ``by-rule``: the rules as for the corruptions, the attacks forming the category
  ``adversarial`` (under ``worst-per-category`` only the worst attack is non-robust).

A perturbation without a value (null relative error) is neither: ``non_robust`` is null, and it
takes no part in its category's maximum.

Schema of ``reva/groups.parquet`` (one row per perturbation × measure × rule, in the order of
the relative-errors table, each model's and measure's rows once per rule): ``model``,
``kind``, ``perturbation``, ``category``, ``measure`` (strings, as in the relative-errors
table), ``rule`` (``worst-per-category`` | ``threshold``), ``value`` (float64, the relative
error), ``non_robust`` (bool; null when ``value`` is), ``chosen`` (bool: ``rule`` is
``reva.groups.rule``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pyarrow as pa

from vcrbench.errors import VcrbenchError

#: Values of ``reva.groups.rule``.
RULES = ("worst-per-category", "threshold")
#: Values of ``reva.groups.attacks``.
ATTACK_RULES = ("non-robust", "by-rule")

SCHEMA = pa.schema([
    ("model", pa.string()), ("kind", pa.string()), ("perturbation", pa.string()),
    ("category", pa.string()), ("measure", pa.string()), ("rule", pa.string()),
    ("value", pa.float64()), ("non_robust", pa.bool_()), ("chosen", pa.bool_()),
])


def worst_per_category(categories: Sequence[str], values: Sequence[float | None]
                       ) -> list[bool | None]:
    """Non-robust flags of the worst-per-category rule: True for the highest value of each
    category (every tied maximum), False for the others, None where the value is None."""
    worst: dict[str, float] = {}
    for category, value in zip(categories, values, strict=True):
        if value is not None:
            worst[category] = max(value, worst.get(category, value))
    return [None if v is None else v == worst[c] for c, v in zip(categories, values, strict=True)]


def above_threshold(values: Sequence[float | None], threshold: float) -> list[bool | None]:
    """Non-robust flags of the threshold rule: ``value > threshold`` (None where None)."""
    return [None if v is None else v > threshold for v in values]


def groups_table(relative_errors: pa.Table, *, rule: str = "worst-per-category",
                 threshold: float = 2.0, attacks: str = "non-robust") -> pa.Table:
    """Both rules on every model and measure of a relative-errors table (module docstring).

    Args:
        relative_errors: ``reva/relative-errors.parquet`` rows (``model``, ``kind``,
            ``perturbation``, ``category``, ``measure``, ``value`` are read).
        rule: the rule marked ``chosen`` (``reva.groups.rule``).
        threshold: the threshold rule's bound on the relative error (``reva.groups.threshold``).
        attacks: ``non-robust`` (every attack, the paper's) or ``by-rule``
            (``reva.groups.attacks``).
    """
    if rule not in RULES:
        raise VcrbenchError(f"reva.groups.rule must be one of {RULES}, got {rule!r}")
    if attacks not in ATTACK_RULES:
        raise VcrbenchError(f"reva.groups.attacks must be one of {ATTACK_RULES}, got "
                            f"{attacks!r}")
    if isinstance(threshold, bool) or not math.isfinite(float(threshold)):
        raise VcrbenchError(f"reva.groups.threshold must be a finite number, got {threshold!r}")
    rows = relative_errors.to_pylist()
    out = []
    for model, measure in dict.fromkeys((r["model"], r["measure"]) for r in rows):
        part = [r for r in rows if r["model"] == model and r["measure"] == measure]
        values = [r["value"] for r in part]
        flags = {
            "worst-per-category": worst_per_category([r["category"] for r in part], values),
            "threshold": above_threshold(values, float(threshold)),
        }
        for name in RULES:
            for r, flag in zip(part, flags[name], strict=True):
                if attacks == "non-robust" and r["kind"] == "attack":
                    flag = None if r["value"] is None else True
                out.append({"model": model, "kind": r["kind"], "perturbation": r["perturbation"],
                            "category": r["category"], "measure": measure, "rule": name,
                            "value": r["value"], "non_robust": flag, "chosen": name == rule})
    return pa.Table.from_pylist(out, schema=SCHEMA)
