"""REVa's figures: the pool's robustness scores with the weak-robust set marked, R on the weak
set against all images, the relative errors with the non-robust perturbations marked, and the
errors of the compared training methods per perturbation.

Tables: ``reva/resilience.parquet``, ``reva/ranking.parquet``, ``reva/r-weak-vs-all.parquet``,
``reva/relative-errors.parquet``, ``reva/groups.parquet``, ``reva/comparison/errors.parquet``
(schemas in docs/reva.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
from matplotlib.colors import TwoSlopeNorm
from matplotlib.lines import Line2D

from vcrbench.figures.heatmap import HeatPanel, plot_heatmaps
from vcrbench.figures.style import (
    MAX_FIGURE_WIDTH,
    UNSUPPORTED_COLOUR,
    error_extent,
    legend_below,
    model_colours,
    model_label,
    plt,
    save_figure,
    unique_handles,
)

#: Fill of a non-robust bar; robust bars are hatched outlines.
NON_ROBUST = "tab:red"
MEASURE_TITLES = {
    "severity": "ImageNet-C severities (uCE, Eq. 4) and attacks (Eq. 3)",
    "continuous": r"continuous: $(1 - R_a^{weak})\,/\,Err$",
}

#: What the figures call the set REVa part 1 selects (``set_name``: the rules pass a random
#: baseline's name where ``reva.weak.draw`` makes one; vcrbench.reva.selection.SET_NAMES).
WEAK_SET = "weak-robust set"


def _empty(paths: Sequence[str | Path], title: str) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(5, 2))
    ax.axis("off")
    ax.text(0.5, 0.5, f"{title}: no data", ha="center", va="center")
    save_figure(fig, paths)
    return fig


def plot_resilience_scores(resilience: pa.Table, ranking: pa.Table, *, score_label: str,
                           category_names: Sequence[str] | None = None,
                           paths: Sequence[str | Path],
                           set_name: str = WEAK_SET) -> plt.Figure:
    """Scores of the pool images per group (the 16 categories when every image has one, else the
    whole pool), one dot per image: the selected set (red; ``set_name``, the weak-robust set or a
    random baseline), other clean-correct images (grey), clean-misclassified images, which are
    not weak robust samples (open circles)."""
    rows = resilience.to_pylist()
    if not rows:
        return _empty(paths, "robustness scores")
    selected = {r["image_id"] for r in ranking.to_pylist() if r["selected"]}
    by_category = category_names is not None and all(r["category16"] >= 0 for r in rows)
    groups = ([category_names[r["category16"]] for r in rows] if by_category
              else ["pool"] * len(rows))
    names = sorted(set(groups))
    fig, ax = plt.subplots(figsize=(max(5.0, 0.55 * len(names) + 2.5), 4.0))
    rng = np.random.default_rng(0)
    kinds = ((set_name, lambda r: r["image_id"] in selected, dict(color=NON_ROBUST)),
             ("other clean-correct images",
              lambda r: r["clean_correct"] and r["image_id"] not in selected, dict(color="0.55")),
             ("clean-misclassified (not weak robust)", lambda r: not r["clean_correct"],
              dict(facecolors="none", edgecolors="black")))
    for label, keep, style in kinds:
        picked = [(names.index(g), r["score"]) for g, r in zip(groups, rows, strict=True)
                  if keep(r)]
        if picked:
            x, y = np.array(picked, dtype=float).T
            ax.scatter(x + rng.uniform(-0.3, 0.3, x.size), y, s=9, lw=0.6, label=label, **style)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=35, ha="right", fontsize=8)
    ax.set_xlim(-0.6, len(names) - 0.4)
    ax.set_ylabel(score_label, fontsize=9)
    ax.set_title(f"Robustness scores of the {len(rows)} pool images "
                 f"({len(selected)} in the {set_name}); higher = less robust", fontsize=9)
    fig.tight_layout()  # the rotated names inside the figure, so the legend goes under them
    legend_below(fig, *unique_handles([ax]), ncol=3)
    save_figure(fig, paths)
    return fig


#: The most models the weak-vs-all legend names with each set; more: one entry per model
#: (its colour) and one per set (filled or open).
COMBINED_LEGEND = 3


def plot_weak_vs_all(r_weak_vs_all: pa.Table, *, models: Sequence[str],
                     paths: Sequence[str | Path], set_name: str = WEAK_SET) -> plt.Figure:
    """R per corruption on the weak-robust set (``set_name``: or a random baseline; filled) and
    on all images (open), with 95 % intervals, one row of panels per property; a null R is a
    grey cross at the axis. Each corruption's group widens with the models (up to
    MAX_FIGURE_WIDTH); beyond :data:`COMBINED_LEGEND` models the legend gives a colour per model
    and a fill per set."""
    rows = r_weak_vs_all.to_pylist()
    if not rows:
        return _empty(paths, "R on the weak set against all images")
    properties = list(dict.fromkeys((r["metric"], r["classes"]) for r in rows))
    corruptions = list(dict.fromkeys(r["corruption"] for r in rows))
    shown = [m for m in models if any(r["model"] == m for r in rows)]
    colours = model_colours(models)
    # one row per property, the corruptions side by side: wide enough for their names
    row = 2.8 if len(properties) <= 2 else 2.0  # ImageNet's four rows stay legible
    # each corruption's group of points widens with the models, up to MAX_FIGURE_WIDTH
    group = max(0.9, 0.3 + 0.1 * len(shown))
    fig, axes = plt.subplots(len(properties), 1, squeeze=False, sharex=True,
                             figsize=(min(MAX_FIGURE_WIDTH,
                                          max(4.0, group * len(corruptions) + 1.5)),
                                      1.0 + row * len(properties)))
    axes = axes[:, 0]
    width = 0.8 / max(1, len(shown))
    first = {}
    for r in rows:
        first.setdefault((r["model"], r["corruption"], r["metric"], r["classes"]), r)
    for ax, (metric, classes) in zip(axes, properties, strict=True):
        for j, model in enumerate(shown):
            for i, c in enumerate(corruptions):
                r = first.get((model, c, metric, classes))
                if r is None:
                    continue
                x = i - 0.4 + width * (j + 0.5)
                for dx, key, filled, label in ((-0.12, "R_weak", True, set_name),
                                               (0.12, "R_all", False, "all evaluation images")):
                    value, lo, hi = r[key], r[f"{key}_lo"], r[f"{key}_hi"]
                    if value is None:
                        ax.plot(x + dx * width, 0.02, "x", color=UNSUPPORTED_COLOUR,
                                label="R not reported")
                        continue
                    ax.errorbar(x + dx * width, value, yerr=error_extent(value, lo, hi), fmt="o",
                                ms=5, capsize=2, color=colours[model],
                                mfc=colours[model] if filled else "white",
                                label=f"{model_label(model)}, {label}")
        ax.set_xticks(range(len(corruptions)))
        ax.set_xticklabels(corruptions, rotation=35, ha="right", fontsize=8)
        ax.set_ylim(0, 1.02)
        area = {"accuracy": "R_a", "consistency": "R_p"}.get(metric, "R")
        ax.set_title(f"{metric} curve ({area}), {classes} classes", fontsize=9)
        ax.set_ylabel(f"{area} (area over Δv)", fontsize=9)
        ax.grid(axis="y", lw=0.3)
    fig.suptitle(f"R on the {set_name} against all evaluation images (95 % image-bootstrap "
                 "intervals)", fontsize=10)
    fig.tight_layout()  # the rotated names inside the figure, so the legend goes under them
    handles, labels = unique_handles(axes)
    if len(shown) > COMBINED_LEGEND:  # a colour per model, a marker fill per set
        missing = [(h, t) for h, t in zip(handles, labels, strict=True)
                   if t == "R not reported"]
        handles = [Line2D([], [], marker="o", ls="none", color=colours[m]) for m in shown]
        labels = [model_label(m) for m in shown]
        handles += [Line2D([], [], marker="o", ls="none", color="black"),
                    Line2D([], [], marker="o", ls="none", color="black", mfc="white")]
        labels += [set_name, "all evaluation images"]
        handles += [h for h, _ in missing]
        labels += [t for _, t in missing]
    legend_below(fig, handles, labels, ncol=2 if len(shown) <= COMBINED_LEGEND else 4)
    save_figure(fig, paths)
    return fig


#: The most panels (model × measure) the relative-error figure stacks as bars; more: one heat
#: map per measure, a row per model.
STACKED_PANELS = 2


def _relative_heatmaps(rows: list[dict], flags: Mapping[tuple, bool | None], rule: str,
                       paths: Sequence[str | Path], set_name: str) -> plt.Figure:
    """Relative errors per model (rows) and perturbation (columns, by category, attacks last),
    one heat map per measure, a star on the non-robust ones: the layout of
    :func:`plot_relative_errors` for more than :data:`STACKED_PANELS` panels."""
    models = list(dict.fromkeys(r["model"] for r in rows))
    measures = list(dict.fromkeys(r["measure"] for r in rows))
    keys = sorted(dict.fromkeys((r["kind"] == "attack", r["category"], r["perturbation"])
                                for r in rows), key=lambda k: k[:2])
    found = {(r["model"], r["measure"], r["perturbation"]): r["value"] for r in rows}
    values = [v for v in found.values() if v is not None]
    norm = TwoSlopeNorm(1.0, min(0.99, min(values, default=1.0)),
                        max(1.01, max(values, default=1.0)))
    panels = []
    for measure in measures:
        grid = np.array([[np.nan if found.get((m, measure, k[2])) is None
                          else found[(m, measure, k[2])] for k in keys] for m in models])
        texts = [["n/a" if np.isnan(v) else f"{v:.2f}"
                  + ("*" if flags.get((m, k[2], measure)) else "")
                  for v, k in zip(row, keys, strict=True)]
                 for m, row in zip(models, grid, strict=True)]
        panels.append(HeatPanel(MEASURE_TITLES.get(measure, measure), grid, texts))
    fig = plot_heatmaps(
        panels, rows=[model_label(m) for m in models],
        columns=[f"{k[2]} ({k[1]})" for k in keys], cmap="RdBu_r", norm=norm,
        colour_label="error / clean error (1: the clean error)",
        title=f"Relative errors on the {set_name} per model (rows); * non-robust ({rule}); "
              "95 % image-bootstrap intervals in the table")
    save_figure(fig, paths)
    return fig


def plot_relative_errors(relative_errors: pa.Table, groups: pa.Table, *, models: Sequence[str],
                         paths: Sequence[str | Path], set_name: str = WEAK_SET) -> plt.Figure:
    """Relative errors per perturbation (grouped by category, attacks last) with 95 % intervals,
    one panel per measure and model; non-robust perturbations of the chosen rule filled red,
    robust ones hatched; a dashed line at 1 (the clean error). More than
    :data:`STACKED_PANELS` panels (several models): one heat map per measure instead, a row per
    model, a star on the non-robust perturbations."""
    rows = relative_errors.to_pylist()
    if not rows:
        return _empty(paths, "relative errors")
    flags = {(g["model"], g["perturbation"], g["measure"]): g["non_robust"]
             for g in groups.to_pylist() if g["chosen"]}
    rule = next((g["rule"] for g in groups.to_pylist() if g["chosen"]), "")
    panels = list(dict.fromkeys((r["model"], r["measure"]) for r in rows))
    if len(panels) > STACKED_PANELS:
        return _relative_heatmaps(rows, flags, rule, paths, set_name)
    fig, axes = plt.subplots(len(panels), 1, squeeze=False,
                             figsize=(max(5.0, 0.55 * len(rows) / max(1, len(panels)) + 2.5),
                                      3.0 * len(panels)))
    for ax, (model, measure) in zip(axes[:, 0], panels, strict=True):
        part = sorted([r for r in rows if (r["model"], r["measure"]) == (model, measure)],
                      key=lambda r: (r["kind"] == "attack", r["category"]))
        for i, r in enumerate(part):
            flag = flags.get((model, r["perturbation"], measure))
            if r["value"] is None:
                ax.text(i, 0.05, "n/a", ha="center", fontsize=7, rotation=90)
                continue
            style = (dict(color=NON_ROBUST, label=f"non-robust ({rule})") if flag else
                     dict(facecolor="white", edgecolor="0.3", hatch="///", label="robust"))
            ax.bar(i, r["value"], width=0.7, **style)
            if r["lo"] is not None:
                ax.errorbar(i, r["value"], yerr=error_extent(r["value"], r["lo"], r["hi"]),
                            fmt="none", ecolor="black", capsize=2, lw=0.8)
        ax.axhline(1.0, ls="--", lw=0.8, color="0.4", label="= clean error")
        ax.set_xticks(range(len(part)))
        ax.set_xticklabels([f"{r['perturbation']}\n({r['category']})" for r in part],
                           rotation=40, ha="right", fontsize=7)
        ax.set_ylabel("error / clean error", fontsize=8)
        ax.set_title(f"{model_label(model)}: {MEASURE_TITLES.get(measure, measure)}", fontsize=9)
    fig.suptitle(f"Relative errors on the {set_name} (95 % image-bootstrap intervals)",
                 fontsize=10)
    fig.tight_layout()
    legend_below(fig, *unique_handles(axes[:, 0]), ncol=3)
    save_figure(fig, paths)
    return fig


#: Panels of the comparison figure: which ``kind`` rows each shows, and its title.
COMPARISON_PANELS = (
    (("clean", "white-box"), "clean; white-box attacks\n(crafted on each model)"),
    (("transfer",), "attacks transferred from {source}\n(crafted on its model)"),
    (("corruption",), "corruptions: uCE\n(mean error over severities 1–5)"),
)
#: The means drawn last in their panel, after a dotted line.
COMPARISON_MEANS = ("mean_adversarial", "mCE")


def plot_comparison_errors(errors: pa.Table, *, methods: Mapping[str, str],
                           models: Sequence[str], paths: Sequence[str | Path]) -> plt.Figure:
    """Top-1 error per perturbation (x) and method (a dot in its model's colour, with its 95 %
    image-bootstrap interval), one panel per setting (clean and white-box attacks; attacks
    transferred from the source; corruptions' uCE), the means (mean adversarial error, mCE)
    last in each panel; an undefined error is a grey cross at 0.

    Args:
        errors: ``reva/comparison/errors.parquet``.
        methods: label -> model, in legend order (default: the table's order).
        models: the run's models (fixes the colours, :func:`model_colours`).
    """
    rows = errors.to_pylist()
    if not rows:
        return _empty(paths, "comparison of training methods")
    methods = dict(methods) or {r["method"]: r["model"] for r in rows}
    colours = model_colours([*models, *methods.values()])
    source = next((r["crafted_on"] for r in rows if r["kind"] == "transfer"), "")
    source = next((label for label, model in methods.items() if model == source),
                  model_label(source or ""))
    panels = []
    for kinds, title in COMPARISON_PANELS:
        part = [r for r in rows if r["kind"] in kinds]
        if part:
            keys = list(dict.fromkeys((r["kind"], r["perturbation"]) for r in part))
            keys.sort(key=lambda k: k[1] in COMPARISON_MEANS)
            panels.append((keys, title.format(source=source), part))
    fig, axes = plt.subplots(
        1, len(panels), squeeze=False, sharey=True,
        figsize=(min(16.0, max(6.0, 0.62 * sum(len(k) for k, _, _ in panels) + 2.0)), 4.2),
        gridspec_kw={"width_ratios": [max(2, len(k)) for k, _, _ in panels]})
    width = 0.7 / max(1, len(methods))
    for ax, (keys, title, part) in zip(axes[0], panels, strict=True):
        by = {(r["method"], r["kind"], r["perturbation"]): r for r in part}
        for j, (label, model) in enumerate(methods.items()):
            for i, key in enumerate(keys):
                r = by.get((label, *key))
                if r is None:
                    continue
                x = i + (j - (len(methods) - 1) / 2) * width
                if r["value"] is None:
                    ax.plot(x, 0.0, "x", color=UNSUPPORTED_COLOUR, label="undefined")
                    continue
                ax.errorbar(x, r["value"], yerr=error_extent(r["value"], r["lo"], r["hi"]),
                            fmt="o", ms=4.5, capsize=2, lw=0.9, color=colours[model],
                            label=f"{label} ({model_label(model)})")
        means = [i for i, k in enumerate(keys) if k[1] in COMPARISON_MEANS]
        if means and means[0] > 0:
            ax.axvline(means[0] - 0.5, ls=":", lw=0.8, color="0.4")
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels([k[1].replace("mean_adversarial", "mean") for k in keys],
                           rotation=35, ha="right", fontsize=8)
        ax.set_xlim(-0.6, len(keys) - 0.4)
        ax.set_ylim(0, 1.02)
        ax.grid(axis="y", lw=0.3)
        ax.set_title(title, fontsize=9)
    axes[0][0].set_ylabel("top-1 error (fraction)")
    fig.suptitle("Training methods on the evaluation images: error per perturbation (95 % "
                 "image-bootstrap intervals)", fontsize=10)
    fig.tight_layout()
    legend_below(fig, *unique_handles(axes[0]), ncol=4)
    save_figure(fig, paths)
    return fig
