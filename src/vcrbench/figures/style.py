"""What every figure shares: colours, labels, legends, property rows and the atomic save.

Every plotting function (:mod:`~vcrbench.figures.vcr`, :mod:`~vcrbench.figures.human`,
:mod:`~vcrbench.figures.overlap`) takes tables (``pyarrow.Table``; schemas in
:mod:`vcrbench.curves.tables`, :mod:`vcrbench.vcr.summary`, :mod:`vcrbench.human.similarity`,
…), draws one figure, writes it to every path in ``paths`` (:func:`save_figure`, atomically)
and returns the (closed) ``Figure`` so that tests can read its titles and labels.

Colours: one per model, fixed by the model's position in the sorted list of the run's model
names (:func:`model_colours`; pass ``models``, the run's whole list, so that a figure showing
only some models colours them as the others do). Humans are always black; data that belong to
no model (samples, classes of corruptions) use grey, black and a second palette (``Dark2``).
Δv is unitless: ``visual change Δv = 1 − VIF`` (0: unchanged, 1: all visual information lost).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from vcrbench.core.files import atomic_write  # noqa: E402
from vcrbench.core.properties import select  # noqa: E402

#: The properties of an ImageNet run, in table order (others: :func:`property_title`).
PROPERTY_TITLES = {
    ("accuracy", 1000): "accuracy $s_a$, 1000 classes",
    ("consistency", 1000): "consistency $s_p$, 1000 classes",
    ("accuracy", 16): "accuracy $s_a$, 16 classes",
    ("consistency", 16): "consistency $s_p$, 16 classes",
}


def property_title(prop: tuple[str, int]) -> str:
    """A panel title of any property, e.g. ``accuracy $s_a$, 10 classes``."""
    metric, classes = prop
    return f"{metric} $s_{'a' if metric == 'accuracy' else 'p'}$, {classes} classes"
#: y-axis label per metric: both are fractions of images (or human trials) in [0, 1].
METRIC_LABELS = {
    "accuracy": "accuracy (fraction correct)",
    "consistency": "consistency (fraction unchanged)",
}
DV_LABEL = r"visual change $\Delta_v = 1 - \mathrm{VIF}$"
HUMAN_COLOUR = "black"
#: A curve whose R is not reported (too few Δv bins with data) is drawn in this grey.
UNSUPPORTED_COLOUR = "0.62"
#: Markers that tell corruptions apart where colour is taken by the model.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "p", "h", "8", "d")
#: Line styles that tell apart corruptions sharing a colour.
LINESTYLES = ("-", "--", ":", "-.")
#: Font size (points) of the value written on every bar.
BAR_LABEL_SIZE = 7
SAMPLE_COLOURS = {"uniform": "0.65", "imagenet-c": "black", "threshold": "tab:red"}


def model_colours(models: Iterable[str]) -> dict[str, tuple]:
    """A fixed colour per model by its position in the sorted list of model names: tab10 for
    the first ten, then the light tab20 shade of the same hue (models 11 to 20), so that up to
    20 models differ; beyond, the colours repeat."""
    dark, light = plt.get_cmap("tab10"), plt.get_cmap("tab20")
    return {m: dark(i % 10) if i % 20 < 10 else light(2 * (i % 10) + 1)
            for i, m in enumerate(sorted(set(models)))}


def model_label(name: str) -> str:
    """A short legend label: ``file:`` models by their file name, others as configured."""
    if name.startswith("file:"):
        return "file:" + Path(name[len("file:") :]).name
    return name


#: Resolution of the PNG figures (dots per inch) ...
DPI = 150
#: ... lowered for a figure whose PNG would be taller than this (pixels): a figure must fit a
#: 1366 × 768 screen in the report, and the layouts are landscape for that.
MAX_PNG_HEIGHT = 1000
#: The widest a figure is drawn (inches): wider layouts wrap their panels or, where bars per
#: model and corruption would not fit, become heat maps (:mod:`~vcrbench.figures.heatmap`).
MAX_FIGURE_WIDTH = 24.0
#: Padding around the tight bounding box (inches, Matplotlib's default).
_PAD_INCHES = 0.1


def png_dpi(fig: plt.Figure) -> int:
    """The PNG resolution of a figure: :data:`DPI`, or less where the figure's tight bounding
    box would be taller than :data:`MAX_PNG_HEIGHT` pixels."""
    fig.canvas.draw()
    height = fig.get_tightbbox(fig.canvas.get_renderer()).height + 2 * _PAD_INCHES
    return int(min(DPI, (MAX_PNG_HEIGHT - 2) // height))


def save_figure(fig: plt.Figure, paths: Sequence[str | Path]) -> None:
    """Save one figure to every path (format from the suffix), atomically, without timestamps;
    a PNG at :func:`png_dpi`."""
    try:
        for path in map(Path, paths):
            fmt = path.suffix.lstrip(".")
            metadata = {"CreationDate": None} if fmt == "pdf" else {"Software": None}
            dpi = png_dpi(fig) if fmt == "png" else DPI
            with atomic_write(path) as tmp:
                fig.savefig(tmp, format=fmt, dpi=dpi, bbox_inches="tight",
                            pad_inches=_PAD_INCHES, metadata=metadata)
    finally:
        plt.close(fig)


def property_rows(table: pa.Table, metric: str, classes: int) -> dict[str, np.ndarray]:
    """The rows of one property as float arrays per column (NaN for null; ``metric`` and
    ``classes`` left out)."""
    data = select(table, metric, classes).to_pydict()
    return {
        k: np.array([np.nan if x is None else x for x in v], dtype=float)
        for k, v in data.items()
        if k not in ("metric", "classes")
    }


def error_extent(value: float, lo: float | None, hi: float | None) -> list[list[float]] | None:
    """Matplotlib's ``yerr`` of one point and its interval ``[lo, hi]``: ``[[below], [above]]``,
    each at least 0 (a point a rounding error outside its interval, e.g. 1e-16 above an
    interval [0, 0], gets no bar on that side instead of an error); None without an interval."""
    if lo is None or hi is None:
        return None
    return [[max(0.0, value - lo)], [max(0.0, hi - value)]]


def legend_below(fig: plt.Figure, handles: list, labels: list[str], ncol: int = 4) -> None:
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


def unique_handles(axes: Iterable[plt.Axes]) -> tuple[list, list[str]]:
    handles, labels = [], []
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    return handles, labels


def grouped_bars(
    ax: plt.Axes,
    rows: Sequence[Mapping],
    *,
    column: str,
    corruptions: Sequence[str],
    models: Sequence[str],
    colours: Mapping[str, tuple],
    reference: str | None = None,
    reference_label: str = "",
) -> None:
    """Bars of ``column`` per corruption (x) and model (colour) with ``<column>_lo/_hi`` bars,
    each bar's value written above it; with ``reference``, that column of each row as a black
    tick across its bar (e.g. the clean accuracy), labelled ``reference_label``."""
    width = 0.8 / max(1, len(models))
    ticks_x, ticks_y = [], []
    for j, model in enumerate(models):
        xs, ys, lo, hi = [], [], [], []
        for i, corruption in enumerate(corruptions):
            for r in rows:
                if (r["model"], r["corruption"]) == (model, corruption) and r[column] is not None:
                    xs.append(i + (j - (len(models) - 1) / 2) * width)
                    ys.append(r[column])
                    if reference is not None and r.get(reference) is not None:
                        ticks_x.append(xs[-1])
                        ticks_y.append(r[reference])
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
            # every bar says its value (a bar too short to see too: 0 is a result, not a gap)
            for x, y, up in zip(xs, ys, hi, strict=True):
                ax.text(
                    x, min(y + up + 0.015, 1.0), f"{y:.2f}", color="0.15",
                    fontsize=BAR_LABEL_SIZE, rotation=90, ha="center", va="bottom",
                )
    if ticks_x:
        ax.errorbar(ticks_x, ticks_y, xerr=width * 0.45, fmt="none", ecolor="black",
                    elinewidth=1.6, capsize=0, label=reference_label, zorder=4)
    ax.set_xticks(range(len(corruptions)))
    ax.set_xlim(-0.6, len(corruptions) - 0.4)
    ax.grid(axis="y", alpha=0.3)
