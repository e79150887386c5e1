"""Robust and non-robust perturbations (REVa Sec. 3.1.2), from relative errors.

Two rules, both always reported:

- ``worst-per-category`` (the paper's, which reproduces the highlighted cells of its Table 1):
  within each category (:mod:`vcrbench.reva.categories`; all attacks form one), the
  perturbation with the highest relative error is non-robust, the others robust; tied maxima
  are all non-robust.
- ``threshold``: non-robust when the relative error exceeds ``threshold`` (ours; the paper
  gives no number).

A perturbation without a value (null relative error) is neither (``non_robust`` null).
Schema of ``reva/groups.parquet``: ``model``, ``kind``, ``perturbation``, ``category``,
``measure``, ``rule``, ``value``, ``non_robust`` (bool, nullable), ``chosen`` (bool: the rule
is ``reva.groups.rule``). Rules are applied per model and measure.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from vcrbench.errors import VcrbenchError

RULES = ("worst-per-category", "threshold")

SCHEMA = pa.schema([
    ("model", pa.string()), ("kind", pa.string()), ("perturbation", pa.string()),
    ("category", pa.string()), ("measure", pa.string()), ("rule", pa.string()),
    ("value", pa.float64()), ("non_robust", pa.bool_()), ("chosen", pa.bool_()),
])


def worst_per_category(categories: Sequence[str], values: Sequence[float | None]
                       ) -> list[bool | None]:
    """Non-robust flags of the worst-per-category rule (module docstring)."""
    worst: dict[str, float] = {}
    for category, value in zip(categories, values, strict=True):
        if value is not None:
            worst[category] = max(value, worst.get(category, value))
    return [None if v is None else v == worst[c] for c, v in zip(categories, values, strict=True)]


def above_threshold(values: Sequence[float | None], threshold: float) -> list[bool | None]:
    """Non-robust flags of the threshold rule."""
    return [None if v is None else v > threshold for v in values]


def groups_table(relative_errors: pa.Table, *, rule: str = "worst-per-category",
                 threshold: float = 2.0) -> pa.Table:
    """Both rules on every model and measure of a relative-errors table (module docstring)."""
    if rule not in RULES:
        raise VcrbenchError(f"reva.groups.rule must be one of {RULES}, got {rule!r}")
    rows = relative_errors.to_pylist()
    out = []
    keys = dict.fromkeys((r["model"], r["measure"]) for r in rows)
    for model, measure in keys:
        part = [r for r in rows if r["model"] == model and r["measure"] == measure]
        values = [r["value"] for r in part]
        flags = {
            "worst-per-category": worst_per_category([r["category"] for r in part], values),
            "threshold": above_threshold(values, threshold),
        }
        for name in RULES:
            for r, flag in zip(part, flags[name], strict=True):
                out.append({"model": model, "kind": r["kind"], "perturbation": r["perturbation"],
                            "category": r["category"], "measure": measure, "rule": name,
                            "value": r["value"], "non_robust": flag, "chosen": name == rule})
    return pa.Table.from_pylist(out, schema=SCHEMA)
