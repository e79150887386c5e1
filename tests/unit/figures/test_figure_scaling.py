"""Figures whose panels grow with the run's models or corruptions stay readable from 1 to 20
models: text size in the PNG, nothing printed over anything (tests/helpers/figure_layout.py)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from helpers.figure_layout import assert_readable, drawn
from helpers.images import assert_png

from vcrbench.figures.style import MAX_PNG_HEIGHT
from vcrbench.figures.vcr import RETRAINING_PANELS, plot_retraining
from vcrbench.vcr.retraining import SCHEMA

CORRUPTIONS = ("gaussian_noise", "shot_noise", "defocus_blur", "elastic_transform")


def _finetuned(count: int) -> list[str]:
    return [f"finetuned:overlap-{CORRUPTIONS[i % 4]}-{i}" for i in range(count)]


def retraining_rows(count: int, *, corruptions=CORRUPTIONS, classes: int = 1000,
                    human: bool = True, base: str = "efficientnet-lite0") -> pa.Table:
    """A retraining table of ``count`` fine-tuned models: R of the data set's classes and, with
    ``human``, of the 16 classes with HMRI and MRSI; changes from −0.2 to +0.2."""
    rng = np.random.default_rng(count)
    properties = [("accuracy", classes), ("consistency", classes)]
    properties += [("accuracy", 16)] if human else []
    rows = []
    for name in _finetuned(count):
        for corruption in corruptions:
            for metric, cls in properties:
                for quantity in ("R", "HMRI", "MRSI") if cls == 16 else ("R",):
                    before = float(rng.uniform(0.3, 0.7))
                    change = float(rng.uniform(-0.2, 0.2))
                    half = float(rng.uniform(0.02, 0.08))
                    lo, hi = (change - half, change + half) if quantity == "R" else (None, None)
                    verdict = ("within" if lo is None or lo <= 0 <= hi
                               else "higher" if lo > 0 else "lower")
                    rows.append({
                        "finetuned": name, "base": base, "corruption": corruption,
                        "metric": metric, "classes": cls, "quantity": quantity,
                        "before": before, "before_lo": before - 0.03,
                        "before_hi": before + 0.03, "after": before + change,
                        "after_lo": before + change - 0.03, "after_hi": before + change + 0.03,
                        "change": change, "change_lo": lo, "change_hi": hi,
                        "verdict": verdict,
                    })
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def _cells(ax) -> list:
    """The cell texts of a heat map (the axes' texts)."""
    return list(ax.texts)


@pytest.mark.parametrize("count", [1, 7, 20])
def test_retraining_figure_is_readable_for_1_to_20_models(count, tmp_path):
    path = tmp_path / "retraining.png"
    fig = plot_retraining(retraining_rows(count), paths=[path])
    width, height = assert_png(path)
    assert height <= MAX_PNG_HEIGHT
    assert_readable(fig)
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert len(panels) == len(RETRAINING_PANELS)
    renderer = drawn(fig).canvas.get_renderer()
    for ax in panels:
        texts = _cells(ax)
        assert len(texts) == count * len(CORRUPTIONS)  # one cell per model and corruption
        # every number inside its own cell: the cell's box in pixels holds the text's box
        for text in texts:
            x, y = text.get_position()
            corner = ax.transData.transform([(x - 0.5, y + 0.5), (x + 0.5, y - 0.5)])
            box = text.get_window_extent(renderer)
            assert corner[0][0] <= box.x0 and box.x1 <= corner[1][0], text.get_text()
            assert corner[0][1] <= box.y0 and box.y1 <= corner[1][1], text.get_text()
        # a row per fine-tuned model, named without its prefix on the first panel of a row
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert labels in (["overlap-" + n.split("overlap-")[1] for n in _finetuned(count)],
                          [""] * count)
    assert width / height < 8  # a strip of panels is not the answer


def test_retraining_figure_with_many_corruptions_wraps_its_panels(tmp_path):
    """Seven models and twelve corruptions: the five panels wrap onto two rows so that the text
    keeps its size under the PNG's height limit."""
    corruptions = [f"corruption_{i}" for i in range(12)]
    fig = plot_retraining(retraining_rows(7, corruptions=corruptions), paths=[tmp_path / "r.png"])
    assert_readable(fig)
    rows = {round(ax.get_position().y0, 3) for ax in fig.axes if ax.get_title()}
    assert len(rows) == 2


def test_retraining_cells_say_the_change_its_interval_and_verdict(tmp_path):
    """A cell: the change (2 decimals), * when beyond its interval, the paired interval of R
    below; HMRI / MRSI: the change alone; a missing value: n/a. Colour: blue up, red down."""
    table = retraining_rows(1, corruptions=("gaussian_noise", "fog")).to_pylist()
    r_a = [r for r in table if (r["quantity"], r["metric"], r["classes"]) == ("R", "accuracy",
                                                                               1000)]
    r_a[0].update(change=0.123, change_lo=0.05, change_hi=0.2, verdict="higher")
    r_a[1].update(after=None, change=None, change_lo=None, change_hi=None, verdict=None)
    hmri = next(r for r in table if r["quantity"] == "HMRI")
    hmri.update(change=-0.1, verdict="within")
    fig = plot_retraining(pa.Table.from_pylist(table, schema=SCHEMA),
                          paths=[tmp_path / "r.png"])
    axes = {ax.get_title(): ax for ax in fig.axes if ax.get_title()}
    assert [t.get_text() for t in axes["R$_a$"].texts] == ["+0.12*\n[+0.05, +0.20]", "n/a"]
    assert axes["HMRI$_a$, 16 classes"].texts[0].get_text() == "-0.10"
    image = axes["R$_a$"].images[0]
    blue, red = image.to_rgba(0.123), image.to_rgba(-0.1)
    assert blue[2] > blue[0] and red[0] > red[2]
    assert "from efficientnet-lite0" in fig._suptitle.get_text()


def test_retraining_rows_name_their_base_where_bases_differ(tmp_path):
    table = retraining_rows(2, human=False, classes=10).to_pylist()
    for r in table:
        if r["finetuned"].endswith("-1"):
            r["base"] = "trained:other"
    fig = plot_retraining(pa.Table.from_pylist(table, schema=SCHEMA),
                          paths=[tmp_path / "r.png"])
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["overlap-gaussian_noise-0 (from efficientnet-lite0)",
                      "overlap-shot_noise-1 (from trained:other)"]
    assert [ax.get_title() for ax in fig.axes if ax.get_title()] == ["R$_a$", "R$_p$"]


def _summary(count: int) -> pa.Table:
    """A summary of ``count`` models on three corruptions, with 16-class human rows."""
    from vcrbench.vcr.summary import ORDER

    rng = np.random.default_rng(count)
    rows = []
    for i in range(count):
        for corruption in CORRUPTIONS[:3]:
            for metric, classes in (("accuracy", 1000), ("consistency", 1000), ("accuracy", 16)):
                r = float(rng.uniform(0.2, 0.8))
                row = dict.fromkeys(ORDER)
                row.update(model=f"torchvision:model_{i}", corruption=corruption, metric=metric,
                           classes=classes, R=r, R_lo=r - 0.05, R_hi=r + 0.04, anchor=0.9)
                if classes == 16:
                    row.update(HMRI=0.8, HMRI_lo=0.7, HMRI_hi=0.85, MRSI=0.1, MRSI_lo=0.05,
                               MRSI_hi=0.2, human_source="model-vs-human/uniform-noise")
                rows.append(row)
    return pa.Table.from_pylist(rows)


@pytest.mark.parametrize("count", [1, 20])
def test_summary_figures_stay_readable_for_1_to_20_models(count, tmp_path):
    """R per model and HMRI / MRSI grow wider with the models (bars side by side): their text
    keeps its size and nothing is printed over a title."""
    from vcrbench.figures.human import plot_human_indices
    from vcrbench.figures.vcr import plot_robustness

    summary = _summary(count)
    assert_readable(plot_robustness(summary, paths=[tmp_path / "r.png"]))
    assert_readable(plot_human_indices(summary, paths=[tmp_path / "h.png"]))
