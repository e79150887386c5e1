"""Readability checks of a drawn figure: text size in the PNG's pixels, nothing printed over
anything else (bounding boxes from the figure's renderer)."""

from __future__ import annotations

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from vcrbench.figures.style import png_dpi

#: The smallest text the checks accept: pixels of font size in the saved PNG (the size Matplotlib
#: gives, about the height of a capital letter plus its descent).
MIN_TEXT_PX = 9.0


def drawn(fig: Figure) -> Figure:
    """The figure drawn on an Agg canvas (a closed figure, as the plotting functions return it,
    has lost its own), so that its renderer gives the texts' boxes."""
    fresh = not hasattr(fig.canvas, "get_renderer")
    if fresh:
        FigureCanvasAgg(fig)
    if fresh or fig.stale:  # drawn once: a figure of a thousand texts takes seconds to draw
        fig.canvas.draw()
    return fig


def _visible(texts) -> list[Text]:
    return [t for t in texts if t.get_visible() and t.get_text().strip()]


def figure_texts(fig: Figure) -> list[Text]:
    """Every visible, non-empty text of a figure: suptitle, figure texts, legends, and per axes
    its title, labels, tick labels and texts."""
    texts = list(fig.texts)
    if fig._suptitle is not None:
        texts.append(fig._suptitle)
    for legend in fig.legends:
        texts += legend.get_texts()
    for ax in fig.axes:
        if not ax.axison and not ax.texts:
            continue
        texts += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label]
        texts += ax.get_xticklabels() + ax.get_yticklabels() + list(ax.texts)
        if ax.get_legend() is not None:
            texts += ax.get_legend().get_texts()
    return _visible(texts)


def smallest_text_px(fig: Figure) -> float:
    """The smallest font size of the figure's texts in pixels of its PNG (:func:`png_dpi`)."""
    dpi = png_dpi(drawn(fig))
    return min(t.get_fontsize() for t in figure_texts(fig)) * dpi / 72


def _overlap(a: Bbox, b: Bbox, tolerance: float = 0.5) -> bool:
    """The two boxes share more than ``tolerance`` pixels in both directions."""
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > tolerance
            and min(a.y1, b.y1) - max(a.y0, b.y0) > tolerance)


def overlapping_ticks(fig: Figure) -> list[tuple[str, str]]:
    """Pairs of neighbouring tick labels of one axis printed over each other."""
    renderer = drawn(fig).canvas.get_renderer()
    found = []
    for ax in fig.axes:
        if not ax.axison:
            continue
        for labels in (ax.get_xticklabels(), ax.get_yticklabels()):
            shown = _visible(labels)
            boxes = [t.get_window_extent(renderer) for t in shown]
            for i in range(len(shown) - 1):
                if _overlap(boxes[i], boxes[i + 1]) and _parallel_overlap(
                        shown[i], shown[i + 1], fig.dpi):
                    found.append((shown[i].get_text(), shown[i + 1].get_text()))
    return found


def _parallel_overlap(a: Text, b: Text, dpi: float) -> bool:
    """Two labels of the same rotation overlap: their anchors are closer, across the writing
    direction, than a label's height (their upright boxes may overlap while the slanted texts
    do not)."""
    angle = np.radians(a.get_rotation())
    if a.get_rotation() % 180 == 0 or a.get_rotation() != b.get_rotation():
        return True
    (x0, y0), (x1, y1) = (t.get_transform().transform(t.get_position()) for t in (a, b))
    across = abs((x1 - x0) * np.sin(angle) - (y1 - y0) * np.cos(angle))
    lines = max(len(t.get_text().splitlines()) for t in (a, b))
    return across < a.get_fontsize() * dpi / 72 * 1.2 * lines


def assert_readable(fig: Figure, min_px: float = MIN_TEXT_PX) -> None:
    """The figure's texts are at least ``min_px`` pixels in its PNG, its suptitle is printed over
    no axes (nor their titles or tick labels) and no two neighbouring tick labels overlap."""
    renderer = drawn(fig).canvas.get_renderer()
    small = smallest_text_px(fig)
    assert small >= min_px, f"text of {small:.1f} px in the PNG (at least {min_px})"
    if fig._suptitle is not None and fig._suptitle.get_text():
        top = fig._suptitle.get_window_extent(renderer)
        for ax in fig.axes:
            if not ax.axison:
                continue
            box = ax.get_tightbbox(renderer)
            assert not _overlap(top, box), (
                f"the suptitle is printed over the axes {ax.get_title()!r}")
    overlaps = overlapping_ticks(fig)
    assert not overlaps, overlaps


def texts_outside_cells(fig: Figure, ax) -> list[str]:
    """The texts of a heat map (an axes whose cell (i, j) spans j ± 0.5, i ± 0.5 in data
    coordinates, a text at its centre) whose box leaves their cell."""
    renderer = drawn(fig).canvas.get_renderer()
    outside = []
    for text in ax.texts:
        x, y = text.get_position()
        (x0, y0), (x1, y1) = ax.transData.transform([(x - 0.5, y + 0.5), (x + 0.5, y - 0.5)])
        box = text.get_window_extent(renderer)
        if not (x0 <= box.x0 and box.x1 <= x1 and y0 <= box.y0 and box.y1 <= y1):
            outside.append(text.get_text())
    return outside
