"""Figures from cached tables only (matplotlib, PNG or PDF by the file suffix).

Every function takes tables (``pyarrow.Table``; schemas in :mod:`vcrbench.estimation`,
:mod:`vcrbench.summary`, :mod:`vcrbench.similarity`), draws one figure, writes it to every path
in ``paths`` (:func:`save_figure`, atomically) and returns the (closed) ``Figure`` so that tests
can read its titles and labels.

Colours: one per model, fixed by the model's position in the sorted list of the run's model
names (:func:`model_colours`; pass ``models``, the run's whole list, so that a figure showing
only some models colours them as the others do). Humans are always black; data that belong to
no model (samples, classes of corruptions) use grey, black and a second palette (``Dark2``).
Δv is unitless: ``visual change Δv = 1 − VIF`` (0: unchanged, 1: all visual information lost).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from vcrbench.binning import bin_index  # noqa: E402
from vcrbench.errors import VcrbenchError  # noqa: E402
from vcrbench.tables import atomic_path, read_table, replace_atomically  # noqa: E402

PROPERTY_TITLES = {
    ("accuracy", 1000): "accuracy $s_a$, 1000 classes",
    ("consistency", 1000): "consistency $s_p$, 1000 classes",
    ("accuracy", 16): "accuracy $s_a$, 16 classes",
    ("consistency", 16): "consistency $s_p$, 16 classes",
}
#: y-axis label per metric: both are fractions of images (or human trials) in [0, 1].
METRIC_LABELS = {
    "accuracy": "accuracy (fraction correct)",
    "consistency": "consistency (fraction unchanged)",
}
DV_LABEL = r"visual change $\Delta_v = 1 - \mathrm{VIF}$"
HUMAN_COLOUR = "black"
#: Markers that tell corruptions apart where colour is taken by the model.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "p", "h", "8", "d")
#: Line styles that tell apart corruptions sharing a colour.
LINESTYLES = ("-", "--", ":", "-.")
#: Bars lower than this (on a 0–1 axis) get their value written above them.
SHORT_BAR = 0.05
SAMPLE_COLOURS = {"uniform": "0.65", "imagenet-c": "black", "threshold": "tab:red"}


def model_colours(models: Iterable[str]) -> dict[str, tuple]:
    """A fixed colour per model (tab10 by position in the sorted list of model names)."""
    cmap = plt.get_cmap("tab10")
    return {m: cmap(i % 10) for i, m in enumerate(sorted(set(models)))}


def model_label(name: str) -> str:
    """A short legend label: ``file:`` models by their file name, others as configured."""
    if name.startswith("file:"):
        return "file:" + Path(name[len("file:") :]).name
    return name


def save_figure(fig: plt.Figure, paths: Sequence[str | Path]) -> None:
    """Save one figure to every path (format from the suffix), atomically, without timestamps."""
    try:
        for path in map(Path, paths):
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = atomic_path(path)
            fmt = path.suffix.lstrip(".")
            metadata = {"CreationDate": None} if fmt == "pdf" else {"Software": None}
            try:
                fig.savefig(tmp, format=fmt, dpi=150, bbox_inches="tight", metadata=metadata)
                replace_atomically(tmp, path)
            finally:
                if tmp.exists():
                    tmp.unlink()
    finally:
        plt.close(fig)


def _rows(table: pa.Table, metric: str, classes: int) -> dict[str, np.ndarray]:
    data = table.to_pydict()
    keep = [
        i
        for i, (m, c) in enumerate(zip(data["metric"], data["classes"], strict=True))
        if m == metric and c == classes
    ]
    return {
        k: np.array([np.nan if v[i] is None else v[i] for i in keep], dtype=float)
        for k, v in data.items()
        if k not in ("metric", "classes")
    }


def _legend_below(fig: plt.Figure, handles: list, labels: list[str], ncol: int = 4) -> None:
    """One legend for the whole figure, under the axes (it never covers data)."""
    if handles:
        fig.legend(
            handles,
            labels,
            loc="upper center",
            ncol=max(1, min(ncol, len(labels))),
            frameon=False,
            fontsize=9,
            bbox_to_anchor=(0.5, 0.0),
        )


def _unique_handles(axes: Iterable[plt.Axes]) -> tuple[list, list[str]]:
    handles, labels = [], []
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    return handles, labels


def _present_rates(rates: pa.Table | None, prop: tuple[str, int]) -> tuple[np.ndarray, np.ndarray]:
    if rates is None:
        return np.array([]), np.array([])
    rate = _rows(rates, *prop)
    if not rate["center"].size:
        return np.array([]), np.array([])
    shown = rate["present"].astype(bool)
    return rate["center"][shown], rate["rate"][shown]


def plot_curves(
    curves: Mapping[str, pa.Table],
    rates: Mapping[str, pa.Table],
    *,
    corruption: str,
    paths: Sequence[str | Path],
    human: pa.Table | None = None,
    human_rates: pa.Table | None = None,
    human_source: str | None = None,
    models: Sequence[str] | None = None,
) -> plt.Figure:
    """Per property, each model's fitted curve with its 95 % band and its per-bin rates.

    ``curves`` / ``rates``: model name -> its ``curves/<m>/<c>.parquet`` / ``rates/…`` table.
    ``human`` / ``human_rates``: the human curve (``human/<c>.parquet``, 16-class rows) and its
    per-bin rates that this corruption is compared with, drawn in black with its 95 % band and
    labelled with ``human_source``. ``models``: the run's models, for the colours.
    """
    colours = model_colours(models or list(curves))
    tables = [*curves.values(), *([human] if human is not None else [])]
    present = [p for p in PROPERTY_TITLES if any(_rows(t, *p)["v"].size for t in tables)]
    present = present or list(PROPERTY_TITLES)[:1]
    cols = min(2, len(present))
    rows_n = math.ceil(len(present) / cols)
    fig, axes = plt.subplots(rows_n, cols, figsize=(5.2 * cols, 3.9 * rows_n), squeeze=False)
    human_name = f"humans ({human_source})" if human_source else "humans"
    for ax, prop in zip(axes.flat, present, strict=False):
        for model in sorted(curves):
            curve = _rows(curves[model], *prop)
            colour = colours[model]
            if curve["v"].size:
                ax.fill_between(
                    curve["v"], curve["lo95"], curve["hi95"], color=colour, alpha=0.18, linewidth=0
                )
                ax.plot(curve["v"], curve["s"], color=colour, linewidth=2, label=model_label(model))
            centers, values = _present_rates(rates.get(model), prop)
            if centers.size:
                ax.scatter(
                    centers, values, s=14, color=colour, edgecolor="white", linewidth=0.4, zorder=3
                )
        if human is not None:
            curve = _rows(human, *prop)
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
                ax.plot(
                    curve["v"], curve["s"], color=HUMAN_COLOUR, linewidth=2, linestyle="--",
                    label=human_name,
                )
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
    handles, labels = _unique_handles(axes.flat)
    dots = [Line2D([], [], marker="o", color="0.4", linestyle="none", markersize=4)]
    dot_labels = ["per-bin rate (models: dots)"]
    if human is not None:
        dots.append(Line2D([], [], marker="s", markerfacecolor="white", markeredgecolor="black",
                           linestyle="none", markersize=5))
        dot_labels.append("per-bin rate (humans: squares)")
    _legend_below(fig, handles + dots, labels + dot_labels, ncol=3)
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
    handles, labels = _unique_handles(axes.flat)
    order = sorted(range(len(labels)), key=lambda i: labels[i].startswith("L ="))  # L last
    _legend_below(fig, [handles[i] for i in order], [labels[i] for i in order], ncol=3)
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


def _grouped_bars(
    ax: plt.Axes,
    rows: Sequence[Mapping],
    *,
    column: str,
    corruptions: Sequence[str],
    models: Sequence[str],
    colours: Mapping[str, tuple],
) -> None:
    """Bars of ``column`` per corruption (x) and model (colour) with ``<column>_lo/_hi`` bars."""
    width = 0.8 / max(1, len(models))
    for j, model in enumerate(models):
        xs, ys, lo, hi = [], [], [], []
        for i, corruption in enumerate(corruptions):
            for r in rows:
                if (r["model"], r["corruption"]) == (model, corruption) and r[column] is not None:
                    xs.append(i + (j - (len(models) - 1) / 2) * width)
                    ys.append(r[column])
                    value_lo = r[f"{column}_lo"] if r[f"{column}_lo"] is not None else r[column]
                    value_hi = r[f"{column}_hi"] if r[f"{column}_hi"] is not None else r[column]
                    lo.append(max(0.0, r[column] - value_lo))
                    hi.append(max(0.0, value_hi - r[column]))
        if xs:
            ax.bar(
                xs,
                ys,
                width=width,
                color=colours[model],
                label=model_label(model),
                yerr=[lo, hi],
                capsize=2,
                error_kw={"linewidth": 0.8},
            )
            # a bar too short to see still shows its value (0 is a result, not a gap)
            for x, y, up in zip(xs, ys, hi, strict=True):
                if y < SHORT_BAR:
                    ax.text(
                        x, y + up + 0.02, f"{y:.2f}", color=colours[model], fontsize=6,
                        rotation=90, ha="center", va="bottom",
                    )
    ax.set_xticks(range(len(corruptions)))
    ax.set_xlim(-0.6, len(corruptions) - 0.4)
    ax.grid(axis="y", alpha=0.3)


def plot_robustness(
    summary: pa.Table, *, paths: Sequence[str | Path], models: Sequence[str] | None = None
) -> plt.Figure:
    """R with 95 % intervals per corruption, one bar per model, one panel per property."""
    data = summary.to_pylist()
    shown = sorted({r["model"] for r in data})
    colours = model_colours(models or shown)
    props = [
        p
        for p in PROPERTY_TITLES
        if any(r["metric"] == p[0] and r["classes"] == p[1] and r["R"] is not None for r in data)
    ]
    props = props or list(PROPERTY_TITLES)[:1]
    corruptions = list(dict.fromkeys(r["corruption"] for r in data))
    fig, axes = plt.subplots(
        len(props),
        1,
        figsize=(max(6, 0.6 * len(corruptions) * len(shown) + 2), 2.8 * len(props)),
        squeeze=False,
    )
    for ax, prop in zip(axes[:, 0], props, strict=True):
        rows = [r for r in data if (r["metric"], r["classes"]) == prop]
        _grouped_bars(ax, rows, column="R", corruptions=corruptions, models=shown, colours=colours)
        ax.set_xticklabels(corruptions, rotation=35, ha="right", fontsize=8)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel(r"$R$ = area under $s$ (0–1)")
        ax.set_title(PROPERTY_TITLES[prop], fontsize=10)
    _legend_below(fig, *_unique_handles(axes.flat))
    fig.suptitle("Robustness R per corruption and model (95 % bootstrap intervals)", fontsize=11)
    fig.tight_layout()
    save_figure(fig, paths)
    return fig


def _human_tick(corruption: str, source: str | None) -> str:
    """Tick label: the corruption, and the corruption whose human curve it borrows."""
    if source and " via " in source:
        return f"{corruption}\nvia {source.rsplit(' via ', 1)[1]}"
    return corruption


def plot_human_indices(
    summary: pa.Table, *, paths: Sequence[str | Path], models: Sequence[str] | None = None
) -> plt.Figure:
    """HMRI and MRSI with 95 % intervals: rows HMRI / MRSI, one column per metric.

    Uses the summary's 16-class rows with a human comparison (non-null ``HMRI``); bars per model
    (colour), corruptions on the x axis. A run whose models have no such row (no image with a
    16-class label) gets one panel saying so.
    """
    data = [r for r in summary.to_pylist() if r["classes"] == 16 and r["HMRI"] is not None]
    shown = sorted({r["model"] for r in data})
    colours = model_colours(models or shown)
    metrics = [m for m in ("accuracy", "consistency") if any(r["metric"] == m for r in data)]
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
    width = max(5.0, (0.9 + 0.35 * len(shown)) * len(corruptions) + 1.5)
    fig, axes = plt.subplots(
        2, len(metrics), figsize=(width * len(metrics), 6.2), squeeze=False, sharey=True
    )
    ylabels = {
        "HMRI": r"HMRI = $1 - A^{h>m} / A^{h}$",
        "MRSI": r"MRSI = $A^{m>h} / A^{m}$",
    }
    for col, metric in enumerate(metrics):
        rows = [r for r in data if r["metric"] == metric]
        for row_i, column in enumerate(("HMRI", "MRSI")):
            ax = axes[row_i, col]
            _grouped_bars(
                ax, rows, column=column, corruptions=corruptions, models=shown, colours=colours
            )
            ax.set_xticklabels([_human_tick(c, sources.get(c)) for c in corruptions], fontsize=8)
            ax.set_ylim(0, 1.05)
            ax.set_title(f"{column}, 16-class {metric}", fontsize=10)
            if col == 0:
                ax.set_ylabel(ylabels[column])
    _legend_below(fig, *_unique_handles(axes.flat))
    fig.suptitle(
        "Models against the human curve (95 % bootstrap intervals)\n"
        "HMRI: 1 = never below humans; MRSI: share of the model's area above humans; "
        "via c: uses the human curve of c",
        fontsize=10,
    )
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
            r for r in data
            if (r["metric"], r["classes"]) == prop
            and r["R"] is not None and r["imagenet_c_mean"] is not None
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


def plot_human_similarity(
    curves: Mapping[str, pa.Table],
    groups: pa.Table,
    *,
    paths: Sequence[str | Path],
    metric: str = "accuracy",
) -> plt.Figure:
    """Human 16-class curves with 83 % bands on one axes, coloured by class (paper, Fig. 8).

    ``curves``: corruption -> ``human/<c>.parquet``; ``groups``: ``curve-groups.parquet``
    (``corruption``, ``group``). Two corruptions share a class when their 83 % bands overlap
    over the whole Δv range (directly or through a chain), i.e. their human curves do not
    differ significantly at about the 5 % level.
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
        curve = _rows(curves[corruption], metric, 16)
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
        "corruptions (bands overlap at every Δv: no significant difference at ≈ 5 %)",
        fontsize=10,
    )
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False, fontsize=9)
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
    _legend_below(fig, *_unique_handles(axes.flat), ncol=2)
    fig.suptitle("Before and after fine-tuning (95 % bootstrap intervals; * change beyond its "
                 "interval)", fontsize=10)
    fig.tight_layout()
    save_figure(fig, paths)
    return fig


def plot_overlap(matrix: pa.Table, *, paths: Sequence[str | Path]) -> plt.Figure:
    """Heat maps of O(c1, c2) (NOC Fig. 3), one per robustness score, each cell annotated with
    the score and its 95 % interval; undefined cells hatched."""
    rows = matrix.to_pylist()
    scores = list(dict.fromkeys(r["score"] for r in rows))
    if not scores:
        raise VcrbenchError("overlap figure: the overlap matrix is empty")
    names = list(dict.fromkeys(r["c1"] for r in rows))
    k = len(names)
    fig, axes = plt.subplots(1, len(scores), squeeze=False,
                             figsize=(1.4 * k * len(scores) + 3.0, 1.1 * k + 1.8))
    titles = {"noc": r"from $A_c / A_{clean}$ (NOC)", "vcr": r"from $R_a / A_{clean}$ (VCR)"}
    image = None
    for ax, score in zip(axes[0], scores, strict=True):
        cells = {(r["c1"], r["c2"]): r for r in rows if r["score"] == score}
        values = np.array([[np.nan if cells[(a, b)]["O"] is None else cells[(a, b)]["O"]
                            for b in names] for a in names])
        image = ax.imshow(np.clip(values, 0, 1), cmap="Blues", vmin=0, vmax=1)
        for i, a in enumerate(names):
            for j, b in enumerate(names):
                cell = cells[(a, b)]
                if cell["O"] is None:
                    ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False,
                                               hatch="//", edgecolor="0.6", lw=0))
                    ax.text(j, i, "undefined", ha="center", va="center", fontsize=7)
                    continue
                text = f"{cell['O']:.2f}"
                if cell["O_lo"] is not None:
                    text += f"\n[{cell['O_lo']:.2f}, {cell['O_hi']:.2f}]"
                ax.text(j, i, text, ha="center", va="center", fontsize=7,
                        color="white" if min(cell["O"], 1) > 0.6 else "black")
        ax.set_xticks(range(k))
        ax.set_yticks(range(k))
        ax.set_xticklabels(names, rotation=35, ha="right", fontsize=8)
        ax.set_yticklabels(names if ax is axes[0][0] else [], fontsize=8)
        ax.set_title(titles.get(score, score), fontsize=9)
    fig.colorbar(image, ax=list(axes[0]), shrink=0.8, label="overlapping score O (clipped to 1)")
    fig.suptitle("Corruption overlap O(c1, c2) with 95 % bootstrap intervals", fontsize=10)
    save_figure(fig, paths)
    return fig
