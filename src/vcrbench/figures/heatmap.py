"""Heat maps of one value per row (model) and column (corruption), a number in every cell: the
layout a bar figure takes when its bars would not fit :data:`~vcrbench.figures.style.
MAX_FIGURE_WIDTH` (many models × corruptions), so that 1 to 20 models stay readable."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.colors import Colormap, Normalize

from vcrbench.figures.style import plt

#: Size of a cell (inches): a number of :data:`FONT` points, 5 characters wide, one line high.
CELL = (0.5, 0.22)
#: Font size (points) of the cells, ticks and panel titles: at least 9 pixels in the PNG down
#: to 72 dpi, the resolution of 20 rows in two rows of panels under ``MAX_PNG_HEIGHT``.
FONT = 9.0
#: Panels side by side in a row of a heat-map figure (landscape, like the bar figures).
COLUMNS = 2


@dataclass(frozen=True)
class HeatPanel:
    """One heat map: its title, ``values`` (rows × columns, NaN: missing, a hatched cell) and
    the text of every cell (same shape)."""

    title: str
    values: np.ndarray
    texts: Sequence[Sequence[str]]


def _text_colour(rgba: tuple) -> str:
    """Black on light cells, white on dark ones (relative luminance below 0.45)."""
    r, g, b = rgba[:3]
    return "white" if 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.45 else "black"


def plot_heatmaps(panels: Sequence[HeatPanel], *, rows: Sequence[str], columns: Sequence[str],
                  cmap: str | Colormap, norm: Normalize, colour_label: str,
                  title: str, cols: int = COLUMNS) -> plt.Figure:
    """A figure of heat maps sharing their rows and columns, ``cols`` panels a row, one colour
    scale (``cmap``, ``norm``) with its bar labelled ``colour_label``. Row labels on the first
    panel of each row of panels, column labels (rotated) under a panel with no panel below.
    The figure is returned unsaved (``style.save_figure``)."""
    cmap = plt.get_cmap(cmap) if isinstance(cmap, str) else cmap
    cols = max(1, min(cols, len(panels)))
    rows_n = -(-len(panels) // cols)
    cell_w, cell_h = CELL
    longest = max(len(line) for name in columns for line in name.splitlines())
    lines = max(len(name.splitlines()) for name in columns)
    label_w = 0.3 + FONT / 72 * 0.6 * max(map(len, rows))
    name_h = 0.3 + FONT / 72 * (0.5 * longest + 1.2 * lines)  # 35° names (inches)
    panel_w, panel_h = cell_w * len(columns), cell_h * len(rows)
    fig, axes = plt.subplots(
        rows_n, cols, squeeze=False, layout="constrained",
        figsize=(label_w + cols * (panel_w + 0.3) + 1.4,
                 rows_n * (panel_h + 0.4) + name_h + 0.9 + 0.15 * title.count("\n")))
    image = None
    for k, (ax, panel) in enumerate(zip(axes.flat, panels, strict=False)):
        values = np.asarray(panel.values, dtype=float)
        image = ax.imshow(values, cmap=cmap, norm=norm, aspect="auto")
        for i, row in enumerate(panel.texts):
            for j, text in enumerate(row):
                if np.isnan(values[i, j]):
                    ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False,
                                               hatch="//", edgecolor="0.7", lw=0))
                    colour = "black"
                else:
                    colour = _text_colour(cmap(norm(values[i, j])))
                ax.text(j, i, text, ha="center", va="center", fontsize=FONT, color=colour)
        ax.set_title(panel.title, fontsize=FONT + 1)
        ax.set_xticks(range(len(columns)))
        below = k + cols < len(panels)
        ax.set_xticklabels([] if below else columns, rotation=35, ha="right", fontsize=FONT)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(rows if k % cols == 0 else [], fontsize=FONT)
        ax.tick_params(length=0)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    colorbar = fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.9, aspect=30,
                            fraction=0.04 if rows_n * panel_h > 3 else 0.08)
    colorbar.set_label(colour_label, fontsize=FONT)
    colorbar.ax.tick_params(labelsize=FONT)
    fig.suptitle(title, fontsize=FONT + 1)
    return fig
