"""Figures from cached tables only (matplotlib, PNG or PDF by the file suffix).

Colours: one per model, fixed by the model's position in the sorted list of models, so a model
keeps its colour in every figure of a run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from vcrbench.tables import atomic_path, replace_atomically  # noqa: E402

PROPERTY_TITLES = {
    ("accuracy", 1000): "accuracy $s_a$, 1000 classes",
    ("consistency", 1000): "consistency $s_p$, 1000 classes",
    ("accuracy", 16): "accuracy $s_a$, 16 classes",
    ("consistency", 16): "consistency $s_p$, 16 classes",
}
DV_LABEL = r"visual change $\Delta_v$ (0 = unchanged, 1 = all visual information lost)"


def model_colours(models: Sequence[str]) -> dict[str, tuple]:
    """A fixed colour per model (tab10 by sorted position)."""
    cmap = plt.get_cmap("tab10")
    return {m: cmap(i % 10) for i, m in enumerate(sorted(models))}


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
        k: np.array([v[i] for i in keep], dtype=float)
        for k, v in data.items()
        if k not in ("metric", "classes")
    }


def plot_curves(
    curves: Mapping[str, pa.Table],
    rates: Mapping[str, pa.Table],
    *,
    corruption: str,
    paths: Sequence[str | Path],
) -> None:
    """Per property, each model's fitted curve with its 95 % band and its per-bin rates."""
    colours = model_colours(list(curves))
    present = [p for p in PROPERTY_TITLES if any(_rows(t, *p)["v"].size for t in curves.values())]
    present = present or list(PROPERTY_TITLES)[:1]
    cols = min(2, len(present))
    rows_n = math.ceil(len(present) / cols)
    fig, axes = plt.subplots(rows_n, cols, figsize=(5.2 * cols, 3.9 * rows_n), squeeze=False)
    for ax, prop in zip(axes.flat, present, strict=False):
        for model in sorted(curves):
            curve = _rows(curves[model], *prop)
            colour = colours[model]
            if curve["v"].size:
                ax.fill_between(
                    curve["v"], curve["lo95"], curve["hi95"], color=colour, alpha=0.18, linewidth=0
                )
                ax.plot(curve["v"], curve["s"], color=colour, linewidth=2, label=model)
            rate = _rows(rates[model], *prop)
            if rate["center"].size:
                shown = rate["present"].astype(bool)
                ax.scatter(
                    rate["center"][shown],
                    rate["rate"][shown],
                    s=12,
                    color=colour,
                    edgecolor="white",
                    linewidth=0.4,
                    zorder=3,
                )
        ax.set_title(PROPERTY_TITLES[prop], fontsize=10)
        ax.set_xlim(0, 1)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel(r"visual change $\Delta_v$")
        ax.set_ylabel("rate (fraction of images)")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(present) :]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    if handles:
        fig.legend(
            handles,
            labels,
            loc="lower center",
            ncol=min(4, len(labels)),
            frameon=False,
            bbox_to_anchor=(0.5, -0.02),
        )
    fig.suptitle(
        f"{corruption}: fitted curves (lines, 95 % bands) and per-bin rates (points)", fontsize=11
    )
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    save_figure(fig, paths)


def plot_dv_histograms(
    dv: Mapping[str, Sequence[float]], *, bins: int, min_count: int, paths: Sequence[str | Path]
) -> None:
    """Histogram of Δv per corruption over M bins, with the coverage threshold L marked."""
    names = list(dv)
    cols = min(4, len(names))
    rows_n = math.ceil(len(names) / cols)
    fig, axes = plt.subplots(rows_n, cols, figsize=(3.3 * cols, 2.6 * rows_n), squeeze=False)
    edges = np.linspace(0, 1, bins + 1)
    for ax, name in zip(axes.flat, names, strict=False):
        values = np.asarray(dv[name], dtype=float)
        counts, _ = np.histogram(values, bins=edges)
        covered = float(np.mean(counts >= min_count))
        ax.bar(
            edges[:-1],
            counts,
            width=np.diff(edges),
            align="edge",
            color="tab:blue",
            edgecolor="white",
            linewidth=0.3,
        )
        ax.axhline(min_count, color="tab:red", linewidth=1, linestyle="--")
        ax.set_title(f"{name} (coverage {covered:.2f})", fontsize=9)
        ax.set_xlim(0, 1)
        ax.set_xlabel(r"$\Delta_v$", fontsize=8)
        ax.set_ylabel("samples per bin", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(names) :]:
        ax.axis("off")
    fig.suptitle(f"Δv of the corrupted samples ({bins} bins; dashed: L = {min_count})", fontsize=11)
    fig.tight_layout()
    save_figure(fig, paths)


def plot_robustness(summary: pa.Table, *, paths: Sequence[str | Path]) -> None:
    """R with 95 % intervals per corruption, one bar per model, one panel per property."""
    data = summary.to_pylist()
    models = sorted({r["model"] for r in data})
    colours = model_colours(models)
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
        figsize=(max(6, 0.6 * len(corruptions) * len(models) + 2), 2.8 * len(props)),
        squeeze=False,
    )
    width = 0.8 / max(1, len(models))
    for ax, prop in zip(axes[:, 0], props, strict=True):
        for j, model in enumerate(models):
            xs, ys, lo, hi = [], [], [], []
            for i, corruption in enumerate(corruptions):
                for r in data:
                    if (r["model"], r["corruption"], r["metric"], r["classes"]) == (
                        model,
                        corruption,
                        *prop,
                    ) and r["R"] is not None:
                        xs.append(i + (j - (len(models) - 1) / 2) * width)
                        ys.append(r["R"])
                        lo.append(r["R"] - r["R_lo"])
                        hi.append(r["R_hi"] - r["R"])
            ax.bar(
                xs,
                ys,
                width=width,
                color=colours[model],
                label=model,
                yerr=[lo, hi],
                capsize=2,
                error_kw={"linewidth": 0.8},
            )
        ax.set_xticks(range(len(corruptions)))
        ax.set_xticklabels(corruptions, rotation=35, ha="right", fontsize=8)
        ax.set_ylim(0, 1)
        ax.set_ylabel(r"$\hat{R}$ (area under curve)")
        ax.set_title(PROPERTY_TITLES[prop], fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0, 0].legend(fontsize=8, frameon=False, ncol=min(4, len(models)))
    fig.tight_layout()
    save_figure(fig, paths)
