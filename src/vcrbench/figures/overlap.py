"""The corruption-overlap figure: heat maps of the overlap matrix (NOC paper Fig. 3)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pyarrow as pa

from vcrbench.errors import VcrbenchError
from vcrbench.figures.style import (
    save_figure,
)


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
