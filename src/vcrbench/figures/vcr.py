"""The VCR-Bench figures: curves per corruption, Δv histograms, R per model, R against
ImageNet-C (paper Fig. 5) and before / after fine-tuning (Table 3)."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pyarrow as pa
from matplotlib.colors import Normalize
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from vcrbench.core.properties import select, table_properties
from vcrbench.core.tables import read_table
from vcrbench.curves.binning import bin_index, coverage, expected_coverage
from vcrbench.errors import VcrbenchError
from vcrbench.figures.heatmap import HeatPanel, plot_heatmaps
from vcrbench.figures.style import (
    DV_LABEL,
    HUMAN_COLOUR,
    MARKERS,
    MAX_FIGURE_WIDTH,
    MAX_PNG_HEIGHT,
    METRIC_LABELS,
    PROPERTY_TITLES,
    SAMPLE_COLOURS,
    UNSUPPORTED_COLOUR,
    grouped_bars,
    legend_below,
    model_colours,
    model_label,
    property_rows,
    property_title,
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


def _data_range(row: dict | None) -> tuple[float, float]:
    """The Δv range a curve's data support (the metrics row's ``dv_min``, ``dv_max``); the
    whole axis where the row does not say."""
    if row is None or row.get("dv_min") is None or row.get("dv_max") is None:
        return 0.0, 1.0
    return float(row["dv_min"]), float(row["dv_max"])


def _split_at_range(v: np.ndarray, s: np.ndarray, lo: float, hi: float
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The curve inside ``[lo, hi]`` and outside it, as two arrays with NaN gaps (the outside
    part repeats the boundary points so that both parts join)."""
    inside = (v >= lo - 1e-9) & (v <= hi + 1e-9)
    outside = ~inside
    joined = outside.copy()
    joined[1:] |= outside[:-1]
    joined[:-1] |= outside[1:]
    return np.where(inside, s, np.nan), np.where(joined, s, np.nan)


#: How the part of a curve without data is drawn (models: dashed; humans: dotted).
EXTRAPOLATED = {"model": "--", "human": ":"}


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
    ``rates/…`` / ``metrics/…`` table. A curve is solid over the Δv range its data support
    (``dv_min`` to ``dv_max`` of its metrics row) and dashed beyond it, where it is only
    extrapolated to the anchors; the Δv outside every shown curve's data is shaded. A curve whose
    R is not reported (too few bins) is drawn grey and thin, labelled with its number of bins.
    ``human`` / ``human_rates`` / ``human_metrics``: the human curve (``human/<c>.parquet``,
    16-class rows), its per-bin rates and metrics that this corruption is compared with, drawn
    in black with its 95 % band (hatched), solid over its data and dotted beyond, labelled with
    ``human_source``. ``models``: the run's models, for the colours. Landscape: at most two
    panels a row.
    """
    metrics = metrics or {}
    colours = model_colours(models or list(curves))
    tables = [*curves.values(), *([human] if human is not None else [])]
    candidates = table_properties(*tables) or list(PROPERTY_TITLES)[:1]
    present = [p for p in candidates if any(property_rows(t, *p)["v"].size for t in tables)]
    present = present or candidates[:1]
    cols = min(2, len(present))
    rows_n = math.ceil(len(present) / cols)
    fig, axes = plt.subplots(rows_n, cols, figsize=(5.6 * cols, 2.9 * rows_n + 0.9),
                             squeeze=False, sharex=True)
    human_name = f"humans ({human_source})" if human_source else "humans"
    extrapolated = False
    for ax, prop in zip(axes.flat, present, strict=False):
        data_lo, data_hi = 1.0, 0.0
        for model in sorted(curves):
            curve = property_rows(curves[model], *prop)
            colour = colours[model]
            row = _metrics_row(metrics.get(model), prop)
            thin = _unsupported(row)
            if thin:
                colour = UNSUPPORTED_COLOUR
            if curve["v"].size:
                lo, hi = _data_range(row)
                data_lo, data_hi = min(data_lo, lo), max(data_hi, hi)
                ax.fill_between(
                    curve["v"], curve["lo95"], curve["hi95"], color=colour, alpha=0.18, linewidth=0
                )
                label = model_label(model)
                if thin:
                    bins = row.get("bins_present")
                    label += f" (only {bins} bins with data: R not reported)"
                inside, outside = _split_at_range(curve["v"], curve["s"], lo, hi)
                ax.plot(curve["v"], inside, color=colour, linewidth=1 if thin else 2, label=label)
                if np.isfinite(outside).any():
                    extrapolated = True
                    ax.plot(curve["v"], outside, color=colour, linewidth=1 if thin else 1.5,
                            linestyle=EXTRAPOLATED["model"])
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
                lo, hi = _data_range(_metrics_row(human_metrics, prop))
                data_lo, data_hi = min(data_lo, lo), max(data_hi, hi)
                inside, outside = _split_at_range(curve["v"], curve["s"], lo, hi)
                ax.plot(curve["v"], inside, color=HUMAN_COLOUR, linewidth=2, label=human_name)
                if np.isfinite(outside).any():
                    extrapolated = True
                    ax.plot(curve["v"], outside, color=HUMAN_COLOUR, linewidth=1.2,
                            linestyle=EXTRAPOLATED["human"])
            centers, values = _present_rates(human_rates, prop)
            if centers.size:
                ax.scatter(
                    centers, values, s=22, marker="s", facecolor="white",
                    edgecolor=HUMAN_COLOUR, linewidth=1, zorder=4,
                )
        if data_lo < data_hi:
            for a, b in ((0.0, data_lo), (data_hi, 1.0)):
                if b - a > 1e-3:
                    ax.axvspan(a, b, color="0.5", alpha=0.1, linewidth=0, zorder=0)
        ax.set_title(property_title(prop), fontsize=10)
        ax.set_xlim(0, 1)
        ax.set_ylim(-0.02, 1.02)
        ax.set_ylabel(METRIC_LABELS[prop[0]], fontsize=9)
        ax.tick_params(labelsize=9, labelbottom=True)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(present) :]:
        ax.axis("off")
    for i, ax in enumerate(list(axes.flat)[: len(present)]):
        if i + cols >= len(present):  # no panel below it
            ax.set_xlabel(DV_LABEL, fontsize=9)
    handles, labels = unique_handles(axes.flat)
    extra = [Line2D([], [], marker="o", color="0.4", linestyle="none", markersize=4)]
    extra_labels = ["per-bin rate (models: dots)"]
    if human is not None:
        extra.append(Line2D([], [], marker="s", markerfacecolor="white", markeredgecolor="black",
                            linestyle="none", markersize=5))
        extra_labels.append("per-bin rate (humans: squares)")
    if extrapolated:
        extra.append(Line2D([], [], color="0.3", linestyle=EXTRAPOLATED["model"]))
        extra_labels.append("beyond the data: extrapolated to the anchors"
                            + (" (humans: dotted)" if human is not None else ""))
        extra.append(Patch(color="0.5", alpha=0.2))
        extra_labels.append("Δv without data")
    legend_below(fig, handles + extra, labels + extra_labels, ncol=3)
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
    """Distribution of Δv per corruption over the M bins, as the fraction of each sample per
    bin, so that samples of different sizes compare (paper, Fig. 4).

    ``dv``: corruption -> Δv of its uniform sample (grey bars); ``imagenet_c``: corruption -> Δv
    of its ImageNet-C severity sample (black outline). Each panel's title gives the coverage of
    the uniform sample, of the ImageNet-C sample, and of the uniform sample at the ImageNet-C
    sample's size (:func:`vcrbench.curves.binning.expected_coverage`), the fair comparison.
    """
    imagenet_c = imagenet_c or {}
    names = list(dv)
    # five columns up to 25 corruptions, then more: landscape for any number of them
    cols = min(len(names), max(5, math.ceil(math.sqrt(1.2 * len(names))))) or 1
    rows_n = math.ceil(len(names) / cols)
    fig, axes = plt.subplots(rows_n, cols, figsize=(2.45 * cols + 0.6, 1.95 * rows_n + 1.1),
                             squeeze=False, sharex=True)
    edges = np.linspace(0, 1, bins + 1)

    def fractions_of(values: Sequence[float]) -> tuple[np.ndarray, int]:
        values = np.asarray(values, dtype=float)
        counts = np.bincount(bin_index(values, bins), minlength=bins)
        return counts / max(1, values.size), int(values.size)

    sizes, ic_sizes = set(), set()
    for ax, name in zip(axes.flat, names, strict=False):
        share, n = fractions_of(dv[name])
        sizes.add(n)
        cover = coverage(np.asarray(dv[name], dtype=float), bins, min_count) if n else 0.0
        title = f"{name}\ncov. {cover:.2f}"
        ax.bar(
            edges[:-1],
            share,
            width=np.diff(edges),
            align="edge",
            color=SAMPLE_COLOURS["uniform"],
            edgecolor="white",
            linewidth=0.3,
            label="uniform sample (parameters drawn over their whole domain)",
        )
        if name in imagenet_c and len(imagenet_c[name]):
            ic_values = np.asarray(imagenet_c[name], dtype=float)
            ic_share, n_ic = fractions_of(ic_values)
            ic_sizes.add(n_ic)
            ax.stairs(
                ic_share, edges, color=SAMPLE_COLOURS["imagenet-c"], linewidth=1.4,
                label="ImageNet-C sample (severities 1–5)",
            )
            fair = (expected_coverage(np.asarray(dv[name], dtype=float), n_ic, bins, min_count)
                    if n >= n_ic else float("nan"))
            fair_text = "–" if np.isnan(fair) else f"{fair:.2f}"
            title += f" · IC {coverage(ic_values, bins, min_count):.2f} vs {fair_text}"
        ax.set_title(title, fontsize=9.5)
        ax.set_xlim(0, 1)
        ax.set_ylim(bottom=0)
        ax.tick_params(labelsize=8.5, labelbottom=True)
    for ax in list(axes.flat)[len(names) :]:
        ax.axis("off")
    for i, ax in enumerate(list(axes.flat)[: len(names)]):
        if i + cols >= len(names):  # no panel below it
            ax.set_xlabel(DV_LABEL, fontsize=9)
    handles, labels = unique_handles(axes.flat)
    legend_below(fig, handles, labels, ncol=2)
    fig.supylabel("fraction of the sample per bin", fontsize=10)
    n_text = ("N = " + "/".join(map(str, sorted(sizes)))) if sizes else "no samples"
    ic_text = (" · of the ImageNet-C sample (IC, N = " + "/".join(map(str, sorted(ic_sizes)))
               + ") vs the uniform one's at that N") if ic_sizes else ""
    fig.suptitle(
        f"Δv of the corrupted samples over {bins} bins. Under each name: coverage (fraction of "
        f"bins with at least L = {min_count} samples)\nof the uniform sample ({n_text})"
        f"{ic_text}",
        fontsize=10.5,
    )
    fig.tight_layout()
    save_figure(fig, paths)
    return fig


def _has_values(column: pa.ChunkedArray) -> bool:
    return len(column) > column.null_count


def _mean_r_order(rows: Sequence[Mapping], corruptions: Sequence[str]) -> list[str]:
    """Corruptions by decreasing mean R over the models (those without any R last)."""
    def key(corruption: str) -> tuple[bool, float]:
        values = [r["R"] for r in rows if r["corruption"] == corruption and r["R"] is not None]
        return (not values, -float(np.mean(values)) if values else 0.0)

    return sorted(corruptions, key=key)


def plot_robustness(
    summary: pa.Table, *, paths: Sequence[str | Path], models: Sequence[str] | None = None
) -> plt.Figure:
    """R with 95 % intervals per corruption, one bar per model, one panel per property (at most
    two a row); each panel's corruptions by decreasing mean R, every bar labelled with its
    value, and on accuracy panels each bar's clean accuracy (the curve's anchor s(0)) as a black
    tick across it. Where the bars would be wider than MAX_FIGURE_WIDTH (e.g. 7 models × 15
    corruptions): one heat map of R per property instead, models × corruptions, R in every
    cell (intervals and clean accuracies stay in the summary table)."""
    data = summary.to_pylist()
    shown = sorted({r["model"] for r in data})
    colours = model_colours(models or shown)
    candidates = table_properties(summary) or list(PROPERTY_TITLES)[:1]
    props = [p for p in candidates if _has_values(select(summary, *p).column("R"))]
    props = props or candidates[:1]
    corruptions = list(dict.fromkeys(r["corruption"] for r in data))
    cols = min(2, len(props))
    rows_n = math.ceil(len(props) / cols)
    width = max(4.8, 0.3 * len(corruptions) * (len(shown) + 0.5) + 1.2)
    if width * cols > MAX_FIGURE_WIDTH:
        return _robustness_heatmaps(summary, props, shown, corruptions, paths)
    fig, axes = plt.subplots(rows_n, cols, figsize=(width * cols, 3.0 * rows_n + 0.8),
                             squeeze=False)
    for ax, prop in zip(axes.flat, props, strict=False):
        rows = select(summary, *prop).to_pylist()
        order = _mean_r_order(rows, corruptions)
        accuracy = prop[0] == "accuracy"
        grouped_bars(ax, rows, column="R", corruptions=order, models=shown, colours=colours,
                     reference="anchor" if accuracy else None,
                     reference_label="clean accuracy s(0) of the sampled images (the most R "
                     "could be)")
        ax.set_xticklabels(order, rotation=35, ha="right", fontsize=8.5)
        ax.set_ylim(0, 1.18)
        ax.set_yticks(np.linspace(0, 1, 6))
        ax.tick_params(axis="y", labelsize=8.5)
        ax.set_ylabel(r"$R$ = area under the curve", fontsize=9)
        ax.set_title(property_title(prop), fontsize=10)
    for ax in list(axes.flat)[len(props) :]:
        ax.axis("off")
    legend_below(fig, *unique_handles(axes.flat))
    fig.suptitle("Robustness R per corruption and model, highest first (95 % bootstrap "
                 "intervals; values on the bars)", fontsize=11)
    fig.tight_layout()
    save_figure(fig, paths)
    return fig


def _robustness_heatmaps(summary: pa.Table, props: Sequence[tuple[str, int]],
                         models: Sequence[str], corruptions: Sequence[str],
                         paths: Sequence[str | Path]) -> plt.Figure:
    """R per model (rows) and corruption (columns, by decreasing mean R of the first
    property), one heat map per property: the layout of :func:`plot_robustness` where its bars
    would be wider than MAX_FIGURE_WIDTH."""
    rows = summary.to_pylist()
    order = _mean_r_order([r for r in rows if (r["metric"], r["classes"]) == props[0]],
                          corruptions)
    panels = []
    for prop in props:
        found = {(r["model"], r["corruption"]): r["R"] for r in select(summary, *prop)
                 .to_pylist()}
        values = np.array([[np.nan if found.get((m, c)) is None else found[(m, c)]
                            for c in order] for m in models])
        texts = [["n/a" if np.isnan(v) else f"{v:.2f}" for v in row] for row in values]
        panels.append(HeatPanel(property_title(prop), values, texts))
    fig = plot_heatmaps(
        panels, rows=[model_label(m) for m in models], columns=order, cmap="viridis",
        norm=Normalize(0.0, 1.0), colour_label=r"$R$ = area under the curve",
        title="Robustness R per model (rows) and corruption (columns, highest mean R first); "
              "95 % bootstrap intervals\nand clean accuracies in the summary table; n/a: R "
              "not reported")
    save_figure(fig, paths)
    return fig


#: Properties tried in turn for R against ImageNet-C: the paper's, then fallbacks.
IMAGENET_C_PROPERTIES = (("accuracy", 1000), ("accuracy", 16), ("consistency", 1000),
                         ("consistency", 16))


def plot_r_vs_imagenet_c(
    summary: pa.Table, *, paths: Sequence[str | Path], models: Sequence[str] | None = None
) -> plt.Figure:
    """R against the ImageNet-C mean over the five severities (paper, Fig. 5).

    One point per model × corruption (colour: model, marker: corruption) with 95 % intervals on
    both axes (R's and the ImageNet-C mean's, each resampling images), for 1000-class accuracy;
    a run without labelled images falls back to 16-class accuracy,
    then consistency, and says so in the title. The dotted diagonal is R = ImageNet-C mean.
    """
    data = summary.to_pylist()
    colours = model_colours(models or {r["model"] for r in data})
    own = [p for p in table_properties(summary) if p[1] != 16]
    tried = ([("accuracy", own[0][1]), ("consistency", own[0][1])]
             if own and own[0][1] != 1000 else IMAGENET_C_PROPERTIES)
    chosen, rows = tried[0], []
    for prop in tried:
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
        x, x_lo, x_hi = (r["imagenet_c_mean"], r.get("imagenet_c_mean_lo"),
                         r.get("imagenet_c_mean_hi"))
        xerr = [[max(0.0, x - (x if x_lo is None else x_lo))],
                [max(0.0, (x if x_hi is None else x_hi) - x)]]
        ax.errorbar(
            x, r["R"], xerr=xerr, yerr=[[max(0.0, lo)], [max(0.0, hi)]],
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
    if chosen != tried[0]:
        space = "ImageNet labels" if tried[0][1] == 1000 else "labels"
        title += f"\n(no {tried[0][1]}-class accuracy: the images have no {space})"
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


#: Panels of the retraining figure: (quantity, metric, classes); classes None: the data set's
#: own classes (1000 for ImageNet, 10 for CIFAR-10), else the 16 categories.
RETRAINING_PANELS = (("R", "accuracy", None), ("R", "accuracy", 16), ("R", "consistency", None),
                     ("HMRI", "accuracy", 16), ("MRSI", "accuracy", 16))


def _panel_of(row: dict) -> tuple:
    """The :data:`RETRAINING_PANELS` key of a retraining-table row."""
    return row["quantity"], row["metric"], 16 if row["classes"] == 16 else None


#: Size of a cell of the retraining heat maps (inches): two lines of :data:`CELL_FONT` text.
RETRAINING_CELL = (0.82, 0.40)
#: Font size (points) of the numbers in the cells, of the tick labels and of the panel titles.
CELL_FONT, TICK_FONT, PANEL_FONT = 7.5, 8.5, 10
#: The widest row of panels (inches) before the panels wrap onto a second row.
RETRAINING_MAX_WIDTH = MAX_FIGURE_WIDTH
#: The least resolution (dots per inch) the retraining figure keeps under MAX_PNG_HEIGHT, where
#: wider rows of panels allow it: CELL_FONT is then at least 9 pixels high.
READABLE_DPI = 90


def _finetuned_label(name: str, base: str, one_base: bool) -> str:
    """A row label: the fine-tuned model without its ``finetuned:`` prefix, with its base
    where the bases differ."""
    short = model_label(name).removeprefix("finetuned:")
    return short if one_base else f"{short} (from {model_label(base)})"


def _change_cell(row: dict | None) -> tuple[float, str]:
    """A cell's change (NaN without one) and its text: the change, a star when it is beyond its
    interval, and below it the 95 % interval of the change (R only)."""
    if row is None or row["change"] is None:
        return np.nan, "n/a"
    text = f"{row['change']:+.2f}" + ("*" if row["verdict"] in ("higher", "lower") else "")
    if row["change_lo"] is not None and row["change_hi"] is not None:
        text += f"\n[{row['change_lo']:+.2f}, {row['change_hi']:+.2f}]"
    return float(row["change"]), text


def plot_retraining(
    table: pa.Table, *, paths: Sequence[str | Path], models: Sequence[str] | None = None
) -> plt.Figure:
    """The change after − before fine-tuning as heat maps, one per quantity (R_a, R_p and, with
    human data, HMRI and MRSI): a row per fine-tuned model, a column per corruption, each cell
    coloured by the change (blue higher, red lower, one symmetric scale for all panels) and
    giving it with, for R, its paired 95 % interval below; a star marks a change beyond its
    interval (the table's verdict); "n/a": a value missing before or after.

    The layout scales with the run: cells keep :data:`RETRAINING_CELL` and the panels wrap
    when a row of them would be wider than :data:`RETRAINING_MAX_WIDTH`, so that 1 to 20
    fine-tuned models stay readable. ``models`` is accepted for the common figure signature
    (colours are not by model here).
    """
    del models
    data = table.to_pylist()
    finetuned = list(dict.fromkeys(r["finetuned"] for r in data))
    panels = [p for p in RETRAINING_PANELS
              if any(_panel_of(r) == p and r["after"] is not None for r in data)]
    if not finetuned or not panels:
        raise VcrbenchError("retraining figure: the retraining table has no values to plot")
    corruptions = list(dict.fromkeys(r["corruption"] for r in data))
    bases = {r["finetuned"]: r["base"] for r in data}
    one_base = len(set(bases.values())) == 1
    labels = [_finetuned_label(name, bases[name], one_base) for name in finetuned]
    cell_w, cell_h = RETRAINING_CELL
    panel_w, panel_h = cell_w * len(corruptions), cell_h * len(finetuned)
    label_w = 0.3 + TICK_FONT / 72 * 0.6 * max(map(len, labels))  # the row labels (inches)
    name_h = 0.4 + TICK_FONT / 72 * 0.5 * max(map(len, corruptions))  # rotated names (inches)
    # as many panels a row as RETRAINING_MAX_WIDTH holds, and more where the rows would be too
    # tall for the PNG to keep READABLE_DPI within MAX_PNG_HEIGHT
    block_h = panel_h + name_h + 0.45
    fit_rows = max(1, int((MAX_PNG_HEIGHT / READABLE_DPI - 0.9) // block_h))
    cols = max(int((RETRAINING_MAX_WIDTH - label_w) // (panel_w + 0.3)),
               math.ceil(len(panels) / fit_rows))
    cols = max(1, min(len(panels), cols))
    rows_n = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(
        rows_n, cols, squeeze=False, layout="constrained",
        figsize=(label_w + cols * (panel_w + 0.3) + 1.3,
                 rows_n * block_h + 0.9))
    changes = [abs(r["change"]) for r in data if r["change"] is not None]
    limit = max(0.05, math.ceil(max(changes, default=0.0) * 20) / 20)
    cmap = plt.get_cmap("RdBu")
    image = None
    for ax, panel in zip(axes.flat, panels, strict=False):
        found = {(r["finetuned"], r["corruption"]): r for r in data if _panel_of(r) == panel}
        cells = [[_change_cell(found.get((name, c))) for c in corruptions] for name in finetuned]
        values = np.array([[value for value, _ in row] for row in cells])
        image = ax.imshow(values, cmap=cmap, vmin=-limit, vmax=limit, aspect="auto")
        for i, row in enumerate(cells):
            for j, (value, text) in enumerate(row):
                if np.isnan(value):
                    ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False,
                                               hatch="//", edgecolor="0.7", lw=0))
                dark = not np.isnan(value) and abs(value) / limit > 0.6
                ax.text(j, i, text, ha="center", va="center", fontsize=CELL_FONT,
                        color="white" if dark else "black", linespacing=1.1)
        quantity, metric, classes = panel
        symbol = {"accuracy": "a", "consistency": "p"}[metric]
        ax.set_title(f"{quantity}$_{symbol}$" + (", 16 classes" if classes == 16 else ""),
                     fontsize=PANEL_FONT)
        ax.set_xticks(range(len(corruptions)))
        ax.set_xticklabels(corruptions, rotation=35, ha="right", fontsize=TICK_FONT)
        ax.set_yticks(range(len(finetuned)))
        first = ax in axes[:, 0]
        ax.set_yticklabels(labels if first else [], fontsize=TICK_FONT)
        ax.tick_params(length=0)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    colorbar = fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.9, aspect=30,
                            fraction=0.04 if rows_n * panel_h > 3 else 0.08)
    colorbar.set_label("change after − before", fontsize=TICK_FONT)
    colorbar.ax.tick_params(labelsize=TICK_FONT)
    base_text = f" from {model_label(next(iter(bases.values())))}" if one_base else ""
    title = (f"Change after fine-tuning{base_text} (rows: fine-tuned models). Below each "
             "change of R its paired 95 % bootstrap interval; * beyond its interval")
    per_line = int(fig.get_figwidth() * 72 / (0.55 * PANEL_FONT))  # characters that fit
    fig.suptitle("\n".join(textwrap.wrap(title, max(40, per_line))), fontsize=PANEL_FONT)
    save_figure(fig, paths)
    return fig
