"""REVa's report for one model: the errors, relative errors, groups and R-weak-vs-all tables
(:mod:`~vcrbench.reva.relative_errors`, :mod:`~vcrbench.reva.groups`,
:mod:`~vcrbench.reva.weak_vs_all`, whose docstrings give the schemas) from plain inputs, and
the Markdown that says them in words (:func:`reva_tables`, the one call of the report job).
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa

from vcrbench.core.tables import markdown_table
from vcrbench.reva.categories import ADVERSARIAL, category_of
from vcrbench.reva.groups import RULES, groups_table
from vcrbench.reva.relative_errors import (
    SETS,
    continuous_error,
    errors_table,
    own_classes,
    relative_error,
    relative_errors_table,
    relative_row,
    set_errors,
)
from vcrbench.reva.selection import SET_NAMES
from vcrbench.reva.weak_vs_all import weak_vs_all_table

#: The tables of :func:`reva_tables`, by name (``reva/<name>.parquet``, every model's rows).
TABLES = ("errors", "relative-errors", "groups", "r-weak-vs-all")


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
    draw: str = "weakest",
) -> tuple[dict[str, pa.Table], str]:
    """The four REVa tables of one model and its Markdown report.

    Args:
        model: the model's name (written in every row).
        seed: the run seed (keys the image weights of every replicate).
        n_boot: bootstrap replicates B (``bootstrap.replicates``).
        min_units: ``bootstrap.min_units``.
        weak_index, evaluation_index: the two sets' indexes (``data/index.parquet`` columns).
        clean: set (``weak``, ``evaluation``) -> the model's clean predictions on it
            (``image_id``, ``top1``).
        severities: set -> corruption -> per-sample table of its ImageNet-C sample:
            ``image_id``, ``severity`` (1..5), ``correct`` (bool, null: unlabelled), ``dv``.
        attacks: set -> attack -> per-image table: ``image_id``, ``correct``, ``dv``.
        curves: corruption -> set -> (metrics, replicates) of the set's curves.
        groups: ``{"rule": "worst-per-category" | "threshold", "threshold": float,
            "attacks": "non-robust" | "by-rule"}`` (``reva.groups``; ``attacks`` defaults to
            ``non-robust``, the paper's).
        categories: corruption -> REVa category (default :func:`category_of` of the name:
            ImageNet-C's, else ``other``).
        description: what the pool and the weak set are (the selection's line), for the text.
        draw: ``reva.weak.draw``: ``weakest`` (the paper's weak-robust set) or
            ``random-unselected`` (a random baseline, for which the text states no control).

    Returns:
        ({"errors", "relative-errors", "groups", "r-weak-vs-all"} -> table, Markdown text).
    """
    categories = dict(categories or {})

    def category(name: str) -> str:
        return categories.get(name) or category_of(name)

    indexes = {"weak": weak_index, "evaluation": evaluation_index}
    error_rows, estimates = [], {}
    for s in SETS:
        corruptions = dict(severities.get(s, {}))
        rows, estimates[s] = set_errors(
            model, s, index=indexes[s], clean=clean[s], severities=corruptions,
            attacks=dict(attacks.get(s, {})), categories={c: category(c) for c in corruptions},
            seed=seed, n_boot=n_boot, min_units=min_units,
        )
        error_rows += rows
    baseline = estimates["evaluation"][("clean", "clean")]
    weak = estimates["weak"]
    relative_rows = []
    for c in dict.fromkeys([*severities.get("weak", {}), *curves]):
        if ("corruption", c) in weak:
            relative_rows.append(relative_row(
                model, "corruption", c, category(c), "severity",
                relative_error(weak[("corruption", c)], baseline), baseline))
        if c in curves:
            numerator = continuous_error(*curves[c]["weak"], n_boot)
            relative_rows.append(relative_row(
                model, "corruption", c, category(c), "continuous",
                relative_error(numerator, baseline), baseline))
    for a in attacks.get("weak", {}):
        relative_rows.append(relative_row(
            model, "attack", a, ADVERSARIAL, "severity",
            relative_error(weak[("attack", a)], baseline), baseline))
    tables = {"errors": errors_table(error_rows),
              "relative-errors": relative_errors_table(relative_rows)}
    tables["groups"] = groups_table(tables["relative-errors"], rule=groups["rule"],
                                    threshold=groups["threshold"],
                                    attacks=groups.get("attacks", "non-robust"))
    tables["r-weak-vs-all"] = weak_vs_all_table(model, curves)
    return tables, report_text(model, tables, description=description, groups=groups,
                               n_boot=n_boot, draw=draw)


def _number(x: float | None) -> str:
    return "undefined" if x is None else f"{x:.3f}"


def interval_text(value: float | None, lo: float | None, hi: float | None) -> str:
    """``value [lo, hi]`` with 3 decimals (the other reports' format); "undefined" for None."""
    if value is None:
        return "undefined"
    if lo is None or hi is None:
        return f"{value:.3f}"
    return f"{value:.3f} [{lo:.3f}, {hi:.3f}]"


def _cell(text: str | None) -> str:
    """A note as a table cell."""
    return (text or "").replace("|", "\\|")


def _verdict(flag: bool | None) -> str:
    return {True: "non-robust", False: "robust", None: "–"}[flag]


def report_text(model: str, tables: Mapping[str, pa.Table], *, description: str,
                groups: Mapping, n_boot: int, draw: str = "weakest") -> str:
    """The Markdown section of one model: R_a and R_p weak vs all, the errors, the relative
    errors with both rules' groups, and one sentence per category and measure."""
    lines = [f"## REVa: {model}", ""]
    if draw != "weakest":
        lines += ["> **A random baseline, not REVa's weak-robust set** (`reva.weak.draw: "
                  f"{draw}`): below, the \"weak\" set is clean-correct pool images the analyser "
                  "did not select. Its errors and groups are computed as part 1's would be, but "
                  "they are not part 1's result; compare this run with a weakest-first run of the "
                  "same model (docs/reva.md, \"Part 1's positive control\").", ""]
    if description:
        lines += [description, ""]
    set_name = SET_NAMES[draw]
    lines += _weak_vs_all(tables["r-weak-vs-all"].to_pylist(), tables["groups"].to_pylist(),
                          tables["errors"].to_pylist(), set_name=set_name)
    lines += _errors(tables["errors"].to_pylist(), set_name)
    lines += _relative(tables["relative-errors"].to_pylist(), tables["groups"].to_pylist(),
                       groups)
    lines += [f"Intervals: 95 % percentile intervals over {n_boot} bootstrap replicates that "
              "resample images (every sample of a drawn image comes along), paired across the "
              "errors, the relative errors and the curves; a note says where not.", ""]
    return "\n".join(lines)


#: The curves R is compared on, in the report's order: the area's name and what the curve
#: compares an image with.
_CURVES = {
    "accuracy": ("R_a", "each image against its label, so each set's curve starts at its clean "
                        "accuracy: a weak set that is clean-correct (the ranking model's is, by "
                        "construction) has a head start that can outweigh a steeper fall"),
    "consistency": ("R_p", "each image against the model's own clean prediction on it, which "
                           "removes that head start: the curve to read for the weak set's "
                           "robustness"),
}


def non_robust_corruptions(group_rows: list[dict]) -> tuple[list[str], str | None]:
    """The corruptions the chosen rule calls non-robust, on the ImageNet-C severities where the
    groups have them, else on the continuous measure (groups-table rows); and that measure
    (None without corruption groups)."""
    rows = [g for g in group_rows if g["kind"] == "corruption" and g["chosen"]]
    measures = {g["measure"] for g in rows}
    if not measures:
        return [], None
    measure = "severity" if "severity" in measures else "continuous"
    return [g["perturbation"] for g in rows if g["measure"] == measure and g["non_robust"]], measure


def _short(set_name: str) -> str:
    """The set's name in table headers: ``weak`` or ``baseline``."""
    return "weak" if set_name == SET_NAMES["weakest"] else "baseline"


def _clean_accuracies(error_rows: list[dict], set_name: str) -> str:
    """Each set's clean accuracy, as the errors table has it."""
    clean = {r["set"]: r["error"] for r in error_rows if r["kind"] == "clean"}
    parts = [f"{name} {_number(None if clean.get(s) is None else 1 - clean[s])}"
             for s, name in (("weak", f"{_short(set_name)} set"),
                             ("evaluation", "all evaluation images"))]
    return "Clean accuracy: " + ", ".join(parts) + "."


def _weak_vs_all(rows: list[dict], group_rows: list[dict], error_rows: list[dict], *,
                 set_name: str = SET_NAMES["weakest"]) -> list[str]:
    classes = own_classes(rows)
    rows = [r for r in rows if r["classes"] == classes]
    non_robust, measure = non_robust_corruptions(group_rows)
    lines = []
    for metric, (area, compared) in _CURVES.items():
        part = [r for r in rows if r["metric"] == metric]
        if not part:
            continue
        lines += [f"### {area} on the {set_name} and on all evaluation images: {metric} "
                  "curve", "", f"The {metric} curve compares {compared}. "
                  + _clean_accuracies(error_rows, set_name), ""]
        lines += markdown_table(
            ["corruption", f"{area} ({_short(set_name)})", f"{area} (all)", "difference",
             f"lower on {_short(set_name)}", "note"],
            ([r["corruption"], interval_text(r["R_weak"], r["R_weak_lo"], r["R_weak_hi"]),
              interval_text(r["R_all"], r["R_all_lo"], r["R_all_hi"]),
              interval_text(r["difference"], r["difference_lo"], r["difference_hi"]),
              {True: "yes", False: "not shown", None: "–"}[r["lower_on_weak"]],
              _cell(r["note"])]
             for r in part),
        )
        lower = [r["corruption"] for r in part if r["lower_on_weak"]]
        tested = [r for r in part if r["lower_on_weak"] is not None]
        lines += ["", f"{area} is lower on the {set_name}, with the whole 95 % interval of "
                      "the replicate-wise difference below 0 (paired where the sets share "
                      f"images), for {len(lower)} of the {len(tested)} corruptions with an "
                      "interval" + (f" ({', '.join(lower)})." if lower else ".")]
        if set_name != SET_NAMES["weakest"]:
            lines += ["Part 1's positive control expects nothing of a random baseline: it is "
                      "what a weakest-first run of the same model is compared with."]
        elif non_robust:
            on = {r["corruption"]: r for r in part if r["corruption"] in non_robust}
            shown = [c for c in non_robust if c in on and on[c]["lower_on_weak"]]
            undefined = [c for c in non_robust if c in on and on[c]["lower_on_weak"] is None]
            missing = [c for c in non_robust if c not in on]
            basis = ("the weak set's ImageNet-C errors: the same images, other samples"
                     if measure == "severity" else
                     "the weak set's own 1 − R_a, so this comparison is partly circular")
            lines += [f"Part 1's positive control expects {area} lower on the weak set for the "
                      f"{len(non_robust)} corruptions the chosen rule calls non-robust "
                      f"({', '.join(non_robust)}; from {basis}): shown for {len(shown)}"
                      + (f" ({', '.join(shown)})" if shown else "")
                      + (f"; undefined for {', '.join(undefined)}" if undefined else "")
                      + (f"; no curve for {', '.join(missing)}" if missing else "") + "."]
        lines.append("")
    return lines


def _errors(rows: list[dict], set_name: str) -> list[str]:
    by = {(r["set"], r["kind"], r["perturbation"]): r for r in rows}
    keys = list(dict.fromkeys((r["kind"], r["perturbation"]) for r in rows))
    lines = ["### Errors (top-1; corruptions: uCE, Eq. 7, the mean error over severities 1–5; "
             "attacks: Eq. 5; mCE, Eq. 8; mean adversarial error, Eq. 6)", ""]
    table = []
    for kind, perturbation in keys:
        found = [by.get((s, kind, perturbation)) for s in SETS]
        first = next(r for r in found if r is not None)
        notes = "; ".join(f"{s}: {r['note']}" for s, r in zip(SETS, found, strict=True)
                          if r is not None and r["note"])
        weak = found[0]
        table.append([perturbation, kind, first["category"] or "–",
                      *(interval_text(r["error"], r["error_lo"], r["error_hi"]) if r else "–"
                        for r in found),
                      _number(weak["dv_median"]) if weak and weak["dv_median"] is not None
                      else "–", _cell(notes)])
    column = f"{_short(set_name)} set"
    lines += markdown_table(["perturbation", "kind", "category", column, "evaluation set",
                             f"Δv median ({_short(set_name)})", "note"], table)
    return [*lines, ""]


def _relative(rows: list[dict], group_rows: list[dict], groups: Mapping) -> list[str]:
    if not rows:
        return []
    flag = {(g["kind"], g["perturbation"], g["measure"], g["rule"]): g["non_robust"]
            for g in group_rows}
    baseline = rows[0]["baseline_error"]
    chosen = groups["rule"]
    headers = {"worst-per-category": "worst of its category",
               "threshold": f"> {groups['threshold']:g}"}
    lines = [f"### Relative errors (error on the weak set / clean error on the evaluation set, "
             f"{_number(baseline)}) and groups", ""]
    lines += markdown_table(
        ["perturbation", "category", "measure", "relative error",
         *(headers[rule] + (" (chosen)" if rule == chosen else "") for rule in RULES), "note"],
        ([r["perturbation"], r["category"], r["measure"],
          interval_text(r["value"], r["lo"], r["hi"]),
          *(_verdict(flag.get((r["kind"], r["perturbation"], r["measure"], rule)))
            for rule in RULES), _cell(r["note"])] for r in rows),
    )
    attacks = groups.get("attacks", "non-robust")
    attack_rule = ("every attack is non-robust (the paper, §4.3.2)" if attacks == "non-robust"
                   else "the attacks by the same rule, as one category")
    lines += ["", f"Groups by the {chosen} rule for the corruptions, {attack_rule} (severity: "
                  "ImageNet-C severities and attacks, Eq. 3–4; continuous: 1 − R_a on the weak "
                  "set):", ""]
    for measure in dict.fromkeys(r["measure"] for r in rows):
        part = [r for r in rows if r["measure"] == measure]
        for category in dict.fromkeys(r["category"] for r in part):
            members = [r for r in part if r["category"] == category]
            lines.append(f"- {_sentence(measure, category, members, flag, chosen)}")
    return [*lines, ""]


def _sentence(measure: str, category: str, members: list[dict], flag: Mapping, rule: str
              ) -> str:
    """One sentence: which perturbations of a category are non-robust, which robust."""
    def verdict(r):
        return flag.get((r["kind"], r["perturbation"], r["measure"], rule))

    weak = [f"{r['perturbation']} ({interval_text(r['value'], r['lo'], r['hi'])})" for r in members
            if verdict(r) is True]
    robust = [r["perturbation"] for r in members if verdict(r) is False]
    unknown = [r["perturbation"] for r in members if verdict(r) is None]
    parts = [f"non-robust: {', '.join(weak)}" if weak else "nothing non-robust"]
    if robust:
        parts.append(f"robust: {', '.join(robust)}")
    if unknown:
        parts.append(f"undefined: {', '.join(unknown)}")
    return f"{category} ({measure}): {'; '.join(parts)}."
