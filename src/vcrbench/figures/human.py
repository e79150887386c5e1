"""The human-comparison figures: HMRI / MRSI bars and human curves by similarity class (paper
Fig. 8)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pyarrow as pa
from matplotlib.colors import Normalize

from vcrbench.core.properties import HUMAN_CLASSES, METRICS, select
from vcrbench.figures.heatmap import HeatPanel, plot_heatmaps
from vcrbench.figures.style import (
    DV_LABEL,
    LINESTYLES,
    MAX_FIGURE_WIDTH,
    METRIC_LABELS,
    grouped_bars,
    legend_below,
    model_colours,
    model_label,
    property_rows,
    save_figure,
    unique_handles,
)


def _human_tick(corruption: str, source: str | None, *, slanted: bool = False) -> str:
    """Tick label: the corruption, and the corruption whose human curve it borrows (below it,
    or after it on a ``slanted`` label)."""
    if source and " via " in source:
        return f"{corruption}{' ' if slanted else chr(10)}via {source.rsplit(' via ', 1)[1]}"
    return corruption


#: Corruptions whose names stand level under the bars; beyond, they are slanted.
SLANT_BEYOND = 4


def _indices_heatmaps(by_metric: Mapping[str, list[dict]], metrics: Sequence[str],
                      models: Sequence[str], corruptions: Sequence[str], ticks: Sequence[str],
                      paths: Sequence[str | Path]) -> plt.Figure:
    """HMRI and MRSI per model (rows) and corruption (columns) as heat maps, rows HMRI / MRSI,
    a column per metric: the layout of :func:`plot_human_indices` where its bars would be
    wider than MAX_FIGURE_WIDTH."""
    panels = []
    for column in ("HMRI", "MRSI"):
        for metric in metrics:
            found = {(r["model"], r["corruption"]): r[column] for r in by_metric[metric]}
            values = np.array([[np.nan if found.get((m, c)) is None else found[(m, c)]
                                for c in corruptions] for m in models])
            texts = [["n/a" if np.isnan(v) else f"{v:.2f}" for v in row] for row in values]
            panels.append(HeatPanel(f"{column}, 16-class {metric}", values, texts))
    fig = plot_heatmaps(
        panels, rows=[model_label(m) for m in models], columns=ticks, cmap="viridis",
        norm=Normalize(0.0, 1.0), colour_label="HMRI (1: never below humans) / "
        "MRSI (0: never above humans)", cols=len(metrics),
        title="Models (rows) against the human curve; 95 % bootstrap intervals in the summary "
              "table\nHMRI: share of the humans' area the model reaches; MRSI: share of the "
              "model's area above the humans; 'via c': the human curve of corruption c")
    save_figure(fig, paths)
    return fig


def plot_human_indices(
    summary: pa.Table, *, paths: Sequence[str | Path], models: Sequence[str] | None = None
) -> plt.Figure:
    """HMRI and MRSI with 95 % intervals: rows HMRI / MRSI, one column per metric.

    Uses the summary's 16-class rows with a human comparison (non-null ``HMRI``); bars per model
    (colour), corruptions on the x axis, their names level up to :data:`SLANT_BEYOND`
    corruptions and slanted beyond (or where level names would make the figure wider than
    MAX_FIGURE_WIDTH); bars wider than that even so: heat maps of models × corruptions. A run
    whose models have no such row (no image with a 16-class label) gets one panel saying so.
    """
    by_metric = {
        metric: [r for r in select(summary, metric, HUMAN_CLASSES).to_pylist()
                 if r["HMRI"] is not None]
        for metric in METRICS
    }
    data = [r for rows in by_metric.values() for r in rows]
    shown = sorted({r["model"] for r in data})
    colours = model_colours(models or shown)
    metrics = [m for m in METRICS if by_metric[m]]
    if not metrics:
        fig, ax = plt.subplots(figsize=(6, 2.5))
        ax.axis("off")
        ax.text(
            0.5, 0.5,
            "No model has a 16-class row with a human comparison\n"
            "(the run's images need labels in the 16 categories).",
            ha="center", va="center", fontsize=10,
        )
        fig.suptitle("HMRI and MRSI against human curves", fontsize=11)
        save_figure(fig, paths)
        return fig
    corruptions = list(dict.fromkeys(r["corruption"] for r in data))
    sources = {r["corruption"]: r["human_source"] for r in data}
    # a few corruptions: their names level under the bars; more, or bars too wide for level
    # names: slanted names under narrower groups; bars too wide even so: heat maps
    level = max(5.0, (0.9 + 0.35 * len(shown)) * len(corruptions) + 1.5)
    slanted = (len(corruptions) > SLANT_BEYOND
               or level * len(metrics) > MAX_FIGURE_WIDTH)
    width = max(5.0, 0.3 * len(corruptions) * (len(shown) + 0.5) + 1.5) if slanted else level
    ticks = [_human_tick(c, sources.get(c), slanted=slanted) for c in corruptions]
    if width * len(metrics) > MAX_FIGURE_WIDTH:
        return _indices_heatmaps(by_metric, metrics, shown, corruptions, ticks, paths)
    fig, axes = plt.subplots(2, len(metrics), squeeze=False, sharey=True,
                             figsize=(width * len(metrics), 6.2 + (1.2 if slanted else 0.0)))
    ylabels = {
        "HMRI": "HMRI\n(1: never below humans)",
        "MRSI": "MRSI\n(0: never above humans)",
    }
    for col, metric in enumerate(metrics):
        rows = by_metric[metric]
        for row_i, column in enumerate(("HMRI", "MRSI")):
            ax = axes[row_i, col]
            grouped_bars(
                ax, rows, column=column, corruptions=corruptions, models=shown, colours=colours
            )
            # slanted names once, under the MRSI row (the HMRI row above has the same)
            ax.set_xticklabels([""] * len(ticks) if slanted and row_i == 0 else ticks,
                               fontsize=9, rotation=35 if slanted else 0,
                               ha="right" if slanted else "center")
            ax.set_ylim(0, 1.18)
            ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
            ax.set_title(f"{column}, 16-class {metric}", fontsize=10)
            if col == 0:
                ax.set_ylabel(ylabels[column])
    legend_below(fig, *unique_handles(axes.flat))
    fig.suptitle(
        "Models against the human curve (95 % bootstrap intervals; values on the bars)\n"
        "HMRI: share of the humans' area the model reaches; MRSI: share of the model's area "
        "above the humans; 'via c': compared with the human curve of corruption c",
        fontsize=10,
    )
    fig.tight_layout()
    save_figure(fig, paths)
    return fig


def plot_human_similarity(
    curves: Mapping[str, pa.Table],
    groups: pa.Table,
    *,
    paths: Sequence[str | Path],
    metric: str = "accuracy",
) -> plt.Figure:
    """Human 16-class curves with 83 % bands on one axes, coloured by class (paper, Fig. 8).

    ``curves``: corruption -> ``human/<c>.parquet``; ``groups``: ``curve-groups.parquet``
    (``corruption``, ``group``). Two corruptions share a class when the simultaneous test of
    :mod:`vcrbench.human.similarity` does not show their curves different at the 5 % level over
    the Δv range both data sets support (directly or through a chain); the 83 % bands are drawn
    as the paper draws them, for reference.
    """
    group = dict(
        zip(groups.column("corruption").to_pylist(), groups.column("group").to_pylist(),
            strict=True)
    )
    palette = plt.get_cmap("Dark2")
    next_group = max(group.values(), default=-1) + 1
    for corruption in curves:
        if corruption not in group:
            group[corruption], next_group = next_group, next_group + 1
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    members: dict[int, int] = {}
    for corruption in sorted(curves, key=lambda c: (group[c], list(curves).index(c))):
        curve = property_rows(curves[corruption], metric, 16)
        if not curve["v"].size:
            continue
        g = group[corruption]
        colour = palette(g % 8)
        style = LINESTYLES[members.get(g, 0) % len(LINESTYLES)]
        members[g] = members.get(g, 0) + 1
        ax.fill_between(curve["v"], curve["lo83"], curve["hi83"], color=colour, alpha=0.2,
                        linewidth=0)
        for edge in ("lo83", "hi83"):
            ax.plot(curve["v"], curve[edge], color=colour, linewidth=0.6, linestyle=style,
                    alpha=0.8)
        ax.plot(curve["v"], curve["s"], color=colour, linewidth=2, linestyle=style,
                label=f"{corruption} (class {g + 1})")
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(DV_LABEL)
    ax.set_ylabel(f"human {METRIC_LABELS[metric]}, 16 classes")
    ax.grid(alpha=0.3)
    ax.set_title(
        f"Human {metric} curves with 83 % bootstrap bands; colour: class of visually similar\n"
        "corruptions (not shown different by a simultaneous 5 % test where both have data)",
        fontsize=10,
    )
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False, fontsize=9)
    fig.tight_layout()
    save_figure(fig, paths)
    return fig
