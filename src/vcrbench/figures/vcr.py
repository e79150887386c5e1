"""The VCR-Bench figures: curves per corruption, Δv histograms, R per model, R against
ImageNet-C (paper Fig. 5) and before / after fine-tuning (Table 3)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pyarrow as pa
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from vcrbench.core.properties import select
from vcrbench.core.tables import read_table
from vcrbench.curves.binning import bin_index
from vcrbench.errors import VcrbenchError
from vcrbench.figures.style import (
    DV_LABEL,
    HUMAN_COLOUR,
    MARKERS,
    METRIC_LABELS,
    PROPERTY_TITLES,
    SAMPLE_COLOURS,
    UNSUPPORTED_COLOUR,
    grouped_bars,
    legend_below,
    model_colours,
    model_label,
    property_rows,
    save_figure,
    unique_handles,
)


def _present_rates(rates: pa.Table | None, prop: tuple[str, int]) -> tuple[np.ndarray, np.ndarray]:
    if rates is None:
        return np.array([]), np.array([])
    rate = property_rows(rates, *prop)
    if not rate["center"].size:
        return np.array([]), np.array([])
    shown = rate["present"].astype(bool)
    return rate["center"][shown], rate["rate"][shown]


def _metrics_row(metrics: pa.Table | None, prop: tuple[str, int]) -> dict | None:
    if metrics is None:
        return None
    rows = select(metrics, *prop).to_pylist()
    return rows[0] if rows else None


def _unsupported(row: dict | None) -> bool:
    """The metrics row says R is not reported (too little support)."""
    return row is not None and row["R"] is None


def plot_curves(
    curves: Mapping[str, pa.Table],
    rates: Mapping[str, pa.Table],
    *,
    corruption: str,
    paths: Sequence[str | Path],
    metrics: Mapping[str, pa.Table] | None = None,
    human: pa.Table | None = None,
    human_rates: pa.Table | None = None,
    human_metrics: pa.Table | None = None,
    human_source: str | None = None,
    models: Sequence[str] | None = None,
) -> plt.Figure:
    """Per property, each model's fitted curve with its 95 % band and its per-bin rates.

    ``curves`` / ``rates`` / ``metrics``: model name -> its ``curves/<m>/<c>.parquet`` /
    ``rates/…`` / ``metrics/…`` table; a curve whose R is not reported (too few bins) is drawn
    grey and thin, labelled so. ``human`` / ``human_rates`` / ``human_metrics``: the human curve
    (``human/<c>.parquet``, 16-class rows), its per-bin rates and metrics that this corruption is
    compared with, drawn in black with its 95 % band, dashed over the Δv range its data support
    and dotted where it is extrapolated, labelled with ``human_source``. ``models``: the run's
    models, for the colours.
    """
    metrics = metrics or {}
    colours = model_colours(models or list(curves))
    tables = [*curves.values(), *([human] if human is not None else [])]
    present = [p for p in PROPERTY_TITLES if any(property_rows(t, *p)["v"].size for t in tables)]
    present = present or list(PROPERTY_TITLES)[:1]
    cols = min(2, len(present))
    rows_n = math.ceil(len(present) / cols)
    fig, axes = plt.subplots(rows_n, cols, figsize=(5.2 * cols, 3.9 * rows_n), squeeze=False)
    human_name = f"humans ({human_source})" if human_source else "humans"
    for ax, prop in zip(axes.flat, present, strict=False):
        for model in sorted(curves):
            curve = property_rows(curves[model], *prop)
            colour = colours[model]
            thin = _unsupported(_metrics_row(metrics.get(model), prop))
            if thin:
                colour = UNSUPPORTED_COLOUR
            if curve["v"].size:
                ax.fill_between(
                    curve["v"], curve["lo95"], curve["hi95"], color=colour, alpha=0.18, linewidth=0
                )
                label = model_label(model) + (" (too few bins: R not reported)" if thin else "")
                ax.plot(curve["v"], curve["s"], color=colour, linewidth=1 if thin else 2,
                        label=label)
            centers, values = _present_rates(rates.get(model), prop)
            if centers.size:
                ax.scatter(
                    centers, values, s=14, color=colour, edgecolor="white", linewidth=0.4, zorder=3
                )
        if human is not None:
            curve = property_rows(human, *prop)
            if curve["v"].size:
                ax.fill_between(
                    curve["v"],
                    curve["lo95"],
                    curve["hi95"],
                    facecolor="none",
                    edgecolor=HUMAN_COLOUR,
                    hatch="////",
                    alpha=0.35,
                    linewidth=0,
                )
                row = _metrics_row(human_metrics, prop)
                lo, hi = (0.0, 1.0) if row is None else (row["dv_min"], row["dv_max"])
                inside = (curve["v"] >= lo - 1e-9) & (curve["v"] <= hi + 1e-9)
                ax.plot(
                    np.where(inside, curve["v"], np.nan), curve["s"], color=HUMAN_COLOUR,
                    linewidth=2, linestyle="--", label=human_name,
                )
                if not inside.all():
                    ax.plot(np.where(inside, np.nan, curve["v"]), curve["s"], color=HUMAN_COLOUR,
                            linewidth=1, linestyle=":",
                            label=f"{human_name}: no data (extrapolated)")
            centers, values = _present_rates(human_rates, prop)
            if centers.size:
                ax.scatter(
                    centers, values, s=22, marker="s", facecolor="white",
                    edgecolor=HUMAN_COLOUR, linewidth=1, zorder=4,
                )
        ax.set_title(PROPERTY_TITLES[prop], fontsize=10)
        ax.set_xlim(0, 1)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel(DV_LABEL)
        ax.set_ylabel(METRIC_LABELS[prop[0]])
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(present) :]:
        ax.axis("off")
    handles, labels = unique_handles(axes.flat)
    dots = [Line2D([], [], marker="o", color="0.4", linestyle="none", markersize=4)]
    dot_labels = ["per-bin rate (models: dots)"]
    if human is not None:
        dots.append(Line2D([], [], marker="s", markerfacecolor="white", markeredgecolor="black",
                           linestyle="none", markersize=5))
        dot_labels.append("per-bin rate (humans: squares)")
    legend_below(fig, handles + dots, labels + dot_labels, ncol=3)
    fig.suptitle(
        f"{corruption}: fitted curves (lines) with 95 % bootstrap bands (shaded) and per-bin "
        "rates (points)",
        fontsize=11,
    )
    fig.tight_layout()
    save_figure(fig, paths)
    return fig


def read_dv(paths: Iterable[str | Path]) -> dict[str, list[float]]:
    """Δv per corruption from scored shards ``…/<corruption>/shard-<k>.parquet`` (``dv`` only)."""
    dv: dict[str, list[float]] = {}
    for path in paths:
        dv.setdefault(Path(path).parent.name, []).extend(
            read_table(path, ["dv"]).column("dv").to_pylist()
        )
    return dv


def plot_dv_histograms(
    dv: Mapping[str, Sequence[float]],
    *,
    bins: int,
    min_count: int,
    paths: Sequence[str | Path],
    imagenet_c: Mapping[str, Sequence[float]] | None = None,
) -> plt.Figure:
    """Histogram of Δv per corruption over M bins, with the coverage threshold L marked.

    ``dv``: corruption -> Δv of its uniform sample; ``imagenet_c``: corruption -> Δv of its
    ImageNet-C severity sample, drawn as a black outline on the same bins (paper, Fig. 4).
    """
    imagenet_c = imagenet_c or {}
    names = list(dv)
    cols = min(4, len(names))
    rows_n = math.ceil(len(names) / cols)
    fig, axes = plt.subplots(rows_n, cols, figsize=(3.4 * cols, 2.9 * rows_n), squeeze=False)
    edges = np.linspace(0, 1, bins + 1)

    def counts_of(values: Sequence[float]) -> np.ndarray:
        return np.bincount(bin_index(np.asarray(values, dtype=float), bins), minlength=bins)

    for ax, name in zip(axes.flat, names, strict=False):
        counts = counts_of(dv[name])
        title = f"{name}\ncoverage {np.mean(counts >= min_count):.2f} uniform"
        ax.bar(
            edges[:-1],
            counts,
            width=np.diff(edges),
            align="edge",
            color=SAMPLE_COLOURS["uniform"],
            edgecolor="white",
            linewidth=0.3,
            label="uniform sample (parameters drawn over their whole domain)",
        )
        if name in imagenet_c:
            ic = counts_of(imagenet_c[name])
            ax.stairs(
                ic, edges, color=SAMPLE_COLOURS["imagenet-c"], linewidth=1.4,
                label="ImageNet-C sample (severities 1–5)",
            )
            title += f", {np.mean(ic >= min_count):.2f} ImageNet-C"
        ax.axhline(
            min_count, color=SAMPLE_COLOURS["threshold"], linewidth=1, linestyle="--",
            label=f"L = {min_count}: least samples of a covered bin",
        )
        ax.set_title(title, fontsize=9)
        ax.set_xlim(0, 1)
        ax.set_xlabel(DV_LABEL, fontsize=8)
        ax.set_ylabel("samples per bin", fontsize=8)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(names) :]:
        ax.axis("off")
    handles, labels = unique_handles(axes.flat)
    order = sorted(range(len(labels)), key=lambda i: labels[i].startswith("L ="))  # L last
    legend_below(fig, [handles[i] for i in order], [labels[i] for i in order], ncol=3)
    sizes = sorted({len(v) for v in dv.values()})
    n_text = f"N = {sizes[0]} per corruption, " if len(sizes) == 1 else ""
    fig.suptitle(
        f"Δv of the corrupted samples ({n_text}{bins} bins; coverage = fraction of bins "
        f"with at least L = {min_count} samples)",
        fontsize=11,
    )
    fig.tight_layout()
    save_figure(fig, paths)
    return fig


def _has_values(column: pa.ChunkedArray) -> bool:
    return len(column) > column.null_count


def plot_robustness(
    summary: pa.Table, *, paths: Sequence[str | Path], models: Sequence[str] | None = None
) -> plt.Figure:
    """R with 95 % intervals per corruption, one bar per model, one panel per property."""
    data = summary.to_pylist()
    shown = sorted({r["model"] for r in data})
    colours = model_colours(models or shown)
    props = [p for p in PROPERTY_TITLES if _has_values(select(summary, *p).column("R"))]
    props = props or list(PROPERTY_TITLES)[:1]
    corruptions = list(dict.fromkeys(r["corruption"] for r in data))
    fig, axes = plt.subplots(
        len(props),
        1,
        figsize=(max(6, 0.6 * len(corruptions) * len(shown) + 2), 2.8 * len(props)),
        squeeze=False,
    )
    for ax, prop in zip(axes[:, 0], props, strict=True):
        rows = select(summary, *prop).to_pylist()
        grouped_bars(ax, rows, column="R", corruptions=corruptions, models=shown, colours=colours)
        ax.set_xticklabels(corruptions, rotation=35, ha="right", fontsize=8)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel(r"$R$ = area under $s$ (0–1)")
        ax.set_title(PROPERTY_TITLES[prop], fontsize=10)
    legend_below(fig, *unique_handles(axes.flat))
    fig.suptitle("Robustness R per corruption and model (95 % bootstrap intervals)", fontsize=11)
    fig.tight_layout()
    save_figure(fig, paths)
    return fig


#: Properties tried in turn for R against ImageNet-C: the paper's, then fallbacks.
IMAGENET_C_PROPERTIES = (("accuracy", 1000), ("accuracy", 16), ("consistency", 1000),
                         ("consistency", 16))


def plot_r_vs_imagenet_c(
    summary: pa.Table, *, paths: Sequence[str | Path], models: Sequence[str] | None = None
) -> plt.Figure:
    """R against the ImageNet-C mean over the five severities (paper, Fig. 5).

    One point per model × corruption (colour: model, marker: corruption) with R's 95 % interval,
    for 1000-class accuracy; a run without labelled images falls back to 16-class accuracy,
    then consistency, and says so in the title. The dotted diagonal is R = ImageNet-C mean.
    """
    data = summary.to_pylist()
    colours = model_colours(models or {r["model"] for r in data})
    chosen, rows = IMAGENET_C_PROPERTIES[0], []
    for prop in IMAGENET_C_PROPERTIES:
        rows = [
            r for r in select(summary, *prop).to_pylist()
            if r["R"] is not None and r["imagenet_c_mean"] is not None
        ]
        if rows:
            chosen = prop
            break
    metric, classes = chosen
    corruptions = list(dict.fromkeys(r["corruption"] for r in rows))
    markers = {c: MARKERS[i % len(MARKERS)] for i, c in enumerate(corruptions)}
    fig, ax = plt.subplots(figsize=(6.4, 5.6))
    ax.plot([0, 1], [0, 1], color="0.5", linestyle=":", linewidth=1, zorder=1)
    for r in rows:
        lo = r["R"] - (r["R_lo"] if r["R_lo"] is not None else r["R"])
        hi = (r["R_hi"] if r["R_hi"] is not None else r["R"]) - r["R"]
        ax.errorbar(
            r["imagenet_c_mean"], r["R"], yerr=[[max(0.0, lo)], [max(0.0, hi)]],
            color=colours[r["model"]], marker=markers[r["corruption"]], markersize=7,
            markeredgecolor="white", markeredgewidth=0.5, linestyle="none", elinewidth=0.8,
            capsize=2, zorder=3,
        )
    symbol = "R_a" if metric == "accuracy" else "R_p"
    ax.set_xlim(-0.02, 1.02)  # points at 0 or 1 stay whole
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal")
    ax.set_xlabel(f"ImageNet-C: mean {metric} over severities 1–5 (fraction)")
    ax.set_ylabel(f"${symbol}$ = area under the {metric} curve (0–1)")
    ax.grid(alpha=0.3)
    title = f"${symbol}$ against ImageNet-C mean {metric}, {classes} classes"
    if chosen != IMAGENET_C_PROPERTIES[0]:
        title += "\n(no 1000-class accuracy: the images have no ImageNet labels)"
    if not rows:
        title += "\n(no corruption has both R and an ImageNet-C mean)"
    ax.set_title(title, fontsize=10)
    shown_models = sorted({r["model"] for r in rows})
    handles = [Patch(color=colours[m]) for m in shown_models] + [
        Line2D([], [], marker=markers[c], color="0.3", linestyle="none", markersize=7)
        for c in corruptions
    ]
    labels = [model_label(m) for m in shown_models] + corruptions
    handles.append(Line2D([], [], color="0.5", linestyle=":"))
    labels.append("R = ImageNet-C mean")
    ax.legend(
        handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False, fontsize=8,
        title="colour: model; marker: corruption", title_fontsize=8,
    )
    fig.tight_layout()
    save_figure(fig, paths)
    return fig


RETRAINING_PANELS = (("R", "accuracy", 1000), ("R", "accuracy", 16), ("R", "consistency", 1000),
                     ("HMRI", "accuracy", 16), ("MRSI", "accuracy", 16))


def plot_retraining(
    table: pa.Table, *, paths: Sequence[str | Path], models: Sequence[str] | None = None
) -> plt.Figure:
    """Before (grey) and after fine-tuning (the fine-tuned model's colour), with 95 % intervals,
    per corruption; a row of panels per fine-tuned model (R_a, R_p and, with human data, HMRI and
    MRSI); a star marks a change beyond its interval (the table's verdict)."""
    data = table.to_pylist()
    finetuned = list(dict.fromkeys(r["finetuned"] for r in data))
    colours = model_colours(models or finetuned)
    panels = [p for p in RETRAINING_PANELS
              if any((r["quantity"], r["metric"], r["classes"]) == p and r["after"] is not None
                     for r in data)]
    if not finetuned or not panels:
        raise VcrbenchError("retraining figure: the retraining table has no values to plot")
    corruptions = list(dict.fromkeys(r["corruption"] for r in data))
    fig, axes = plt.subplots(len(finetuned), len(panels), squeeze=False,
                             figsize=(max(3.2, 0.45 * len(corruptions) + 1.6) * len(panels),
                                      3.0 * len(finetuned) + 0.6))
    x = np.arange(len(corruptions))
    for i, name in enumerate(finetuned):
        for ax, panel in zip(axes[i], panels, strict=True):
            rows = {r["corruption"]: r for r in data if r["finetuned"] == name
                    and (r["quantity"], r["metric"], r["classes"]) == panel}
            sides = ((-0.15, "before", "0.55", "before (base model)"),
                     (0.15, "after", colours[name], "after fine-tuning"))
            for offset, side, colour, label in sides:
                value = np.array([np.nan if rows.get(c, {}).get(side) is None else rows[c][side]
                                  for c in corruptions])
                lo = np.array([np.nan if rows.get(c, {}).get(f"{side}_lo") is None
                               else rows[c][f"{side}_lo"] for c in corruptions])
                hi = np.array([np.nan if rows.get(c, {}).get(f"{side}_hi") is None
                               else rows[c][f"{side}_hi"] for c in corruptions])
                err = np.vstack([np.clip(value - lo, 0, None), np.clip(hi - value, 0, None)])
                ax.errorbar(x + offset, value, yerr=np.nan_to_num(err), fmt="o", ms=4,
                            color=colour, capsize=2, lw=1, label=label)
            for j, c in enumerate(corruptions):
                if rows.get(c, {}).get("verdict") in ("higher", "lower"):
                    top = max(v for v in (rows[c]["after_hi"], rows[c]["after"]) if v is not None)
                    ax.annotate("*", (j, top), ha="center", va="bottom", fontsize=12)
            quantity, metric, classes = panel
            symbol = {"accuracy": "a", "consistency": "p"}[metric]
            title = f"{quantity}$_{symbol}$" + (" (16 cl.)" if classes == 16 else "")
            ax.set_title(f"{model_label(name)}\n{title}", fontsize=8)
            ax.set_xticks(x)
            ax.set_xticklabels(corruptions, rotation=35, ha="right", fontsize=8)
            ax.set_ylim(0, 1.05)
            ax.set_xlim(-0.6, len(corruptions) - 0.4)
    legend_below(fig, *unique_handles(axes.flat), ncol=2)
    fig.suptitle("Before and after fine-tuning (95 % bootstrap intervals; * change beyond its "
                 "interval)", fontsize=10)
    fig.tight_layout()
    save_figure(fig, paths)
    return fig
