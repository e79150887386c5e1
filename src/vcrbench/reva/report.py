"""REVa's report for one model: errors, relative errors, groups, R on the weak set against all
images (tables of :mod:`~vcrbench.reva.relative_errors`, :mod:`~vcrbench.reva.groups`,
:mod:`~vcrbench.reva.weak_vs_all`) and the Markdown that says them in words."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pyarrow as pa

from vcrbench.reva.categories import ADVERSARIAL, category_of
from vcrbench.reva.groups import groups_table
from vcrbench.reva.relative_errors import (
    SCHEMA_ERRORS,
    SCHEMA_RELATIVE,
    Estimate,
    clean_wrong,
    error_estimate,
    known,
    mean_estimate,
    relative,
    uce_estimate,
)
from vcrbench.reva.weak_vs_all import weak_vs_all_table

SETS = ("weak", "evaluation")


def _median(table: pa.Table) -> float | None:
    dv = table.column("dv").to_numpy()
    return float(np.median(dv)) if dv.size else None


def _error_row(model, set_name, kind, perturbation, category, estimate: Estimate, *,
               n_images, n_samples, dv_median=None) -> dict:
    lo, hi = estimate.interval()
    return {"model": model, "set": set_name, "kind": kind, "perturbation": perturbation,
            "category": category, "error": estimate.value, "error_lo": lo, "error_hi": hi,
            "n_images": n_images, "n_samples": n_samples, "dv_median": dv_median,
            "resampled": estimate.resampled, "note": estimate.note}


def _relative_row(model, kind, perturbation, category, measure, estimate: Estimate,
                  baseline: Estimate) -> dict:
    lo, hi = estimate.interval()
    return {"model": model, "kind": kind, "perturbation": perturbation, "category": category,
            "measure": measure, "value": estimate.value, "lo": lo, "hi": hi,
            "baseline_error": baseline.value, "resampled": estimate.resampled,
            "note": estimate.note}


def _continuous(curves: tuple[pa.Table, pa.Table], n_boot: int) -> Estimate:
    """1 − R_a (1000 classes) of the weak set's curve, with its replicate areas."""
    from vcrbench.curves.tables import replicate_areas

    metrics, replicates = curves
    rows = [r for r in metrics.to_pylist() if r["metric"] == "accuracy" and r["classes"] == 1000]
    if not rows or rows[0]["R"] is None:
        note = rows[0]["note"] if rows else "no 1000-class accuracy curve"
        return Estimate(None, np.full(n_boot, np.nan), "", f"R_a on the weak set: {note}")
    areas = replicate_areas(replicates, "accuracy", 1000)
    reps = np.full(n_boot, np.nan)
    reps[: min(n_boot, areas.size)] = 1.0 - areas[:n_boot]
    return Estimate(1.0 - rows[0]["R"], reps, rows[0]["resampled"])


def reva_tables(
    *,
    model: str,
    seed: int,
    n_boot: int,
    min_units: int,
    weak_index: pa.Table,
    evaluation_index: pa.Table,
    clean: Mapping[str, pa.Table],
    severities: Mapping[str, Mapping[str, pa.Table]],
    attacks: Mapping[str, Mapping[str, pa.Table]],
    curves: Mapping[str, Mapping[str, tuple[pa.Table, pa.Table]]],
    groups: Mapping,
    categories: Mapping[str, str] | None = None,
    description: str = "",
) -> tuple[dict[str, pa.Table], str]:
    """The four REVa tables of one model and its report section.

    Args:
        clean: set -> clean predictions (``image_id``, ``top1``).
        severities: set -> corruption -> ``image_id, severity, correct, dv`` per sample.
        attacks: set -> attack -> ``image_id, correct, dv`` per adversarial image.
        curves: corruption -> set -> (metrics, replicates) of the set's curves.
        groups: ``{"rule": ..., "threshold": ...}`` (``reva.groups``).
        categories: corruption -> category (default :func:`category_of` without visual class).
    """
    categories = dict(categories or {})

    def category(name: str) -> str:
        return categories.get(name) or category_of(name)

    indexes = {"weak": weak_index, "evaluation": evaluation_index}
    common = {"seed": seed, "n_boot": n_boot, "min_units": min_units}
    errors, estimates = [], {}
    for s in SETS:
        ids, wrong = clean_wrong(indexes[s], clean[s])
        estimates[(s, "clean")] = e = error_estimate(ids, wrong, name=f"{s}/clean", **common)
        errors.append(_error_row(model, s, "clean", "clean", "", e, n_images=len(ids),
                                 n_samples=len(ids)))
        uces = []
        for c, table in severities.get(s, {}).items():
            ids, wrong, rows = known(table)
            e = uce_estimate(ids, rows.column("severity").to_numpy(), wrong,
                             name=f"{s}/{c}", **common)
            estimates[(s, c)] = e
            uces.append(e)
            errors.append(_error_row(model, s, "corruption", c, category(c), e,
                                     n_images=len(set(ids)), n_samples=len(ids),
                                     dv_median=_median(rows)))
        advs = []
        for a, table in attacks.get(s, {}).items():
            ids, wrong, rows = known(table)
            e = error_estimate(ids, wrong, name=f"{s}/{a}", **common)
            estimates[(s, a)] = e
            advs.append(e)
            errors.append(_error_row(model, s, "attack", a, ADVERSARIAL, e,
                                     n_images=len(set(ids)), n_samples=len(ids),
                                     dv_median=_median(rows)))
        for name, terms in (("mCE", uces), ("mean_adversarial", advs)):
            if terms:
                errors.append(_error_row(model, s, "mean", name, "", mean_estimate(terms),
                                         n_images=indexes[s].num_rows, n_samples=0))
    baseline = estimates[("evaluation", "clean")]
    relative_rows = []
    for c in severities.get("weak", {}):
        relative_rows.append(_relative_row(model, "corruption", c, category(c), "severity",
                                           relative(estimates[("weak", c)], baseline), baseline))
    for a in attacks.get("weak", {}):
        relative_rows.append(_relative_row(model, "attack", a, ADVERSARIAL, "severity",
                                           relative(estimates[("weak", a)], baseline), baseline))
    for c, by_set in curves.items():
        relative_rows.append(_relative_row(model, "corruption", c, category(c), "continuous",
                                           relative(_continuous(by_set["weak"], n_boot),
                                                    baseline), baseline))
    tables = {
        "errors": pa.Table.from_pylist(errors, schema=SCHEMA_ERRORS),
        "relative-errors": pa.Table.from_pylist(relative_rows, schema=SCHEMA_RELATIVE),
    }
    tables["groups"] = groups_table(tables["relative-errors"], rule=groups["rule"],
                                    threshold=groups["threshold"])
    tables["r-weak-vs-all"] = weak_vs_all_table(model, curves)
    return tables, report_text(model, tables, description, groups)


def _num(value, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _interval(lo, hi, digits: int = 3) -> str:
    return "" if lo is None or hi is None else f" [{lo:.{digits}f}, {hi:.{digits}f}]"


def report_text(model: str, tables: Mapping[str, pa.Table], description: str,
                groups: Mapping) -> str:
    """The Markdown section of one model."""
    from vcrbench.core.tables import markdown_table

    lines = [f"## {model}", "", description, ""]
    weak_vs_all = [r for r in tables["r-weak-vs-all"].to_pylist()
                   if r["metric"] == "accuracy" and r["classes"] == 1000]
    if weak_vs_all:
        lines += ["### R_a on the weak-robust set against all evaluation images", ""]
        lines += markdown_table(
            ["corruption", "R_a weak", "R_a all", "difference", "lower on weak", "note"],
            [[r["corruption"], _num(r["R_weak"]) + _interval(r["R_weak_lo"], r["R_weak_hi"]),
              _num(r["R_all"]) + _interval(r["R_all_lo"], r["R_all_hi"]),
              _num(r["difference"]) + _interval(r["difference_lo"], r["difference_hi"]),
              {True: "yes", False: "not shown", None: "–"}[r["lower_on_weak"]],
              r["note"] or ""] for r in weak_vs_all])
        lower = sum(r["lower_on_weak"] is True for r in weak_vs_all)
        lines += ["", f"R_a is lower on the weak set, with the whole 95 % interval of the "
                      f"difference below 0, for {lower} of {len(weak_vs_all)} corruptions.", ""]
    errors = tables["errors"].to_pylist()
    lines += ["### Errors (top-1; corruptions: uCE over the five severities)", ""]
    by = {(r["set"], r["perturbation"]): r for r in errors}
    names = list(dict.fromkeys(r["perturbation"] for r in errors))
    lines += markdown_table(
        ["perturbation", "category", "weak set", "evaluation set", "Δv median (weak)"],
        [[p, (by.get(("weak", p)) or by.get(("evaluation", p)))["category"]]
         + [_num(by[(s, p)]["error"]) + _interval(by[(s, p)]["error_lo"], by[(s, p)]["error_hi"])
            if (s, p) in by else "–" for s in SETS]
         + [_num((by.get(("weak", p)) or {}).get("dv_median"))] for p in names])
    resampled = sorted({r["resampled"] for r in errors if r["resampled"]})
    lines += ["", f"Intervals: 95 % percentile, resampling {'; '.join(resampled) or 'nothing'}.",
              ""]
    group_rows = {(g["perturbation"], g["measure"], g["rule"]): g["non_robust"]
                  for g in tables["groups"].to_pylist()}
    relative_rows = tables["relative-errors"].to_pylist()
    if relative_rows:
        lines += ["### Relative errors (error on the weak set / clean evaluation error) and "
                  "groups", ""]
        lines += markdown_table(
            ["perturbation", "category", "measure", "relative error", "worst of category",
             f"> {groups['threshold']:g}", "note"],
            [[r["perturbation"], r["category"], r["measure"],
              _num(r["value"], 2) + _interval(r["lo"], r["hi"], 2)]
             + [{True: "non-robust", False: "robust", None: "–"}[
                 group_rows.get((r["perturbation"], r["measure"], rule))]
                for rule in ("worst-per-category", "threshold")]
             + [r["note"] or ""] for r in relative_rows])
        chosen = [g["perturbation"] for g in tables["groups"].to_pylist()
                  if g["chosen"] and g["non_robust"] and g["measure"] == "severity"]
        lines += ["", f"Non-robust by the {groups['rule']} rule (ImageNet-C severities and "
                      f"attacks): {', '.join(chosen) or 'none'}.", ""]
    return "\n".join(lines)
