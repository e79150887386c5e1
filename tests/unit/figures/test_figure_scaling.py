"""Figures whose panels grow with the run's models or corruptions stay readable from 1 to 20
models: text size in the PNG, nothing printed over anything (tests/helpers/figure_layout.py)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pyarrow as pa
import pytest
from helpers.figure_layout import assert_readable, drawn, texts_outside_cells
from helpers.images import assert_png
from matplotlib.colors import to_rgba

from vcrbench.curves.tables import CURVES_SCHEMA, METRICS_SCHEMA, RATES_SCHEMA
from vcrbench.data.imagenet16 import CATEGORIES16
from vcrbench.figures.human import plot_human_indices
from vcrbench.figures.reva import (
    plot_comparison_errors,
    plot_relative_errors,
    plot_resilience_scores,
    plot_weak_vs_all,
)
from vcrbench.figures.style import MAX_FIGURE_WIDTH, MAX_PNG_HEIGHT, model_colours, model_label
from vcrbench.figures.vcr import (
    RETRAINING_PANELS,
    plot_curves,
    plot_dv_histograms,
    plot_retraining,
    plot_robustness,
)
from vcrbench.reva.categories import REVA_CATEGORIES
from vcrbench.reva.comparison import SCHEMA_ERRORS as COMPARISON_SCHEMA
from vcrbench.reva.groups import SCHEMA as GROUPS_SCHEMA
from vcrbench.reva.relative_errors import SCHEMA_RELATIVE
from vcrbench.reva.weak_vs_all import SCHEMA as WEAK_SCHEMA
from vcrbench.vcr.retraining import SCHEMA
from vcrbench.vcr.summary import ORDER

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


# --- the other figures whose panels grow with the models or corruptions -------------------

IMAGENET_C = ("gaussian_noise", "shot_noise", "impulse_noise", "defocus_blur", "glass_blur",
              "motion_blur", "zoom_blur", "snow", "frost", "fog", "brightness", "contrast",
              "elastic_transform", "pixelate", "jpeg_compression")
_NAMES = ("efficientnet-lite0", "torchvision:resnet50", "timm:convnext_tiny.fb_in22k",
          "torchvision:vit_b_16", "timm:deit_small_patch16_224", "torchvision:efficientnet_b0",
          "file:/models/colour_model.py")
PROPERTIES = (("accuracy", 1000), ("consistency", 1000), ("accuracy", 16), ("consistency", 16))
ATTACKS = ("fgsm", "pgd")


def model_names(count: int) -> list[str]:
    """``count`` distinct model names of the lengths real ones have."""
    return [_NAMES[i % len(_NAMES)] + (f"-{i // len(_NAMES)}" if i >= len(_NAMES) else "")
            for i in range(count)]


def summary_rows(models: int, corruptions: int) -> pa.Table:
    """A summary (vcr.summary.ORDER) of ImageNet's four properties, HMRI / MRSI on the 16-class
    rows, gaussian_noise compared via another corruption's human curve."""
    rng = np.random.default_rng(models * 100 + corruptions)
    rows = []
    for model in model_names(models):
        for corruption in IMAGENET_C[:corruptions]:
            for metric, classes in PROPERTIES:
                r = float(rng.uniform(0.2, 0.8))
                row = dict.fromkeys(ORDER)
                row.update(model=model, corruption=corruption, metric=metric, classes=classes,
                           R=r, R_lo=r - 0.05, R_hi=r + 0.04, anchor=0.9)
                if classes == 16:
                    h, m = float(rng.uniform(0.5, 1)), float(rng.uniform(0, 0.3))
                    row.update(HMRI=h, HMRI_lo=h - 0.1, HMRI_hi=min(1, h + 0.05), MRSI=m,
                               MRSI_lo=max(0, m - 0.05), MRSI_hi=m + 0.1,
                               human_source="model-vs-human/uniform-noise"
                               + (" via uniform_noise" if corruption == "gaussian_noise"
                                  else ""))
                rows.append(row)
    return pa.Table.from_pylist(rows)


def _check_size(fig, path) -> tuple[int, int]:
    """The PNG fits the report: at most MAX_PNG_HEIGHT high, the figure at most about
    MAX_FIGURE_WIDTH wide (its labels and colour bar beside), its text readable."""
    width, height = assert_png(path)
    assert height <= MAX_PNG_HEIGHT
    assert fig.get_figwidth() <= MAX_FIGURE_WIDTH + 2.0
    assert width / height < 5
    assert_readable(fig)
    return width, height


def _heat_panels(fig) -> list:
    return [ax for ax in fig.axes if ax.images and ax.get_title()]


SIZES = [(1, 1), (1, 15), (7, 4), (20, 15)]


@pytest.mark.parametrize(("models", "corruptions"), SIZES)
def test_r_per_model_is_readable_for_1_to_20_models(models, corruptions, tmp_path):
    """Bars per model and corruption while they fit MAX_FIGURE_WIDTH, a heat map of models ×
    corruptions per property beyond, every R written in its cell."""
    fig = plot_robustness(summary_rows(models, corruptions), paths=[tmp_path / "r.png"])
    _check_size(fig, tmp_path / "r.png")
    heat = _heat_panels(fig)
    if models * corruptions <= 7 * 4:
        assert not heat  # the bars of the small runs stay
        assert sum(len(ax.texts) for ax in fig.axes) == models * corruptions * 4
    else:
        assert len(heat) == 4
        for ax in heat:
            assert len(ax.texts) == models * corruptions
            assert not texts_outside_cells(fig, ax)
            assert [t.get_text() for t in ax.get_yticklabels()] in (
                [model_label(m) for m in sorted(model_names(models))], [""] * models)
    plt.close(fig)


@pytest.mark.parametrize(("models", "corruptions"), SIZES)
def test_hmri_and_mrsi_are_readable_for_1_to_20_models(models, corruptions, tmp_path):
    fig = plot_human_indices(summary_rows(models, corruptions), paths=[tmp_path / "h.png"])
    _check_size(fig, tmp_path / "h.png")
    heat = _heat_panels(fig)
    titles = sorted(ax.get_title() for ax in fig.axes if ax.get_title())
    assert titles == ["HMRI, 16-class accuracy", "HMRI, 16-class consistency",
                      "MRSI, 16-class accuracy", "MRSI, 16-class consistency"]
    if models >= 20:
        assert len(heat) == 4
        for ax in heat:
            assert len(ax.texts) == models * corruptions
            assert not texts_outside_cells(fig, ax)
    else:
        assert not heat
    ticks = {t.get_text() for ax in fig.axes for t in ax.get_xticklabels()}
    assert {"gaussian_noise\nvia uniform_noise", "gaussian_noise via uniform_noise"} & ticks
    plt.close(fig)


def test_hmri_and_mrsi_of_the_tiny_run_keep_level_names_on_both_rows(tmp_path):
    fig = plot_human_indices(summary_rows(1, 2), paths=[tmp_path / "h.png"])
    for ax in fig.axes:
        labels = ax.get_xticklabels()
        assert [t.get_text() for t in labels] == ["gaussian_noise\nvia uniform_noise",
                                                  "shot_noise"]
        assert all(t.get_rotation() == 0 for t in labels)
    plt.close(fig)


def _relative_errors(models: int, corruptions: int) -> tuple[pa.Table, pa.Table]:
    """reva/relative-errors.parquet and reva/groups.parquet: both measures, the corruptions
    and two attacks, about 40 % non-robust."""
    rng = np.random.default_rng(models + corruptions)
    rel, groups = [], []
    perturbations = ([("corruption", c, REVA_CATEGORIES[c]) for c in IMAGENET_C[:corruptions]]
                     + [("attack", a, "adversarial") for a in ATTACKS])
    for model in model_names(models):
        for measure in ("severity", "continuous"):
            for kind, name, category in perturbations:
                v = float(rng.uniform(0.8, 4))
                common = {"model": model, "kind": kind, "perturbation": name,
                          "category": category, "measure": measure, "value": v}
                rel.append({**common, "lo": v - 0.3, "hi": v + 0.3, "baseline_error": 0.2,
                            "resampled": "images (50)", "note": None})
                groups.append({**common, "rule": "worst-per-category",
                               "non_robust": bool(rng.uniform() < 0.4), "chosen": True})
    return (pa.Table.from_pylist(rel, schema=SCHEMA_RELATIVE),
            pa.Table.from_pylist(groups, schema=GROUPS_SCHEMA))


@pytest.mark.parametrize(("models", "corruptions"), [(1, 15), (7, 4), (20, 15)])
def test_relative_errors_are_readable_for_1_to_20_models(models, corruptions, tmp_path):
    """One model: its two measures stacked as bars; more: a heat map per measure, a row per
    model, a star on each non-robust perturbation."""
    relative, groups = _relative_errors(models, corruptions)
    fig = plot_relative_errors(relative, groups, models=model_names(models),
                               paths=[tmp_path / "e.png"])
    _check_size(fig, tmp_path / "e.png")
    heat = _heat_panels(fig)
    if models == 1:
        assert not heat and len(fig.axes) == 2
        return
    assert len(heat) == 2
    flags = {(g["model"], g["perturbation"], g["measure"]): g["non_robust"]
             for g in groups.to_pylist()}
    stars = sum(t.get_text().endswith("*") for ax in heat for t in ax.texts)
    assert stars == sum(flags.values())
    for ax in heat:
        assert len(ax.texts) == models * (corruptions + len(ATTACKS))
        assert not texts_outside_cells(fig, ax)
        # attacks last
        assert ax.get_xticklabels()[-1].get_text() in ("", "pgd (adversarial)")
    plt.close(fig)


def _weak_vs_all(models: int, corruptions: int) -> pa.Table:
    rng = np.random.default_rng(models * 7 + corruptions)
    rows = []
    for model in model_names(models):
        for c in IMAGENET_C[:corruptions]:
            for metric, classes in PROPERTIES:
                w, a = float(rng.uniform(0.1, 0.5)), float(rng.uniform(0.4, 0.9))
                rows.append({"model": model, "corruption": c, "metric": metric,
                             "classes": classes, "R_weak": w, "R_weak_lo": w - 0.05,
                             "R_weak_hi": w + 0.05, "R_all": a, "R_all_lo": a - 0.03,
                             "R_all_hi": a + 0.03, "difference": w - a,
                             "difference_lo": w - a - 0.05, "difference_hi": w - a + 0.05,
                             "lower_on_weak": True, "note": None})
    return pa.Table.from_pylist(rows, schema=WEAK_SCHEMA)


@pytest.mark.parametrize(("models", "corruptions"), [(1, 15), (7, 4), (20, 4)])
def test_weak_vs_all_is_readable_for_1_to_20_models(models, corruptions, tmp_path):
    """Up to three models the legend names each model with each set; more: one entry per model
    and one per set."""
    names = model_names(models)
    fig = plot_weak_vs_all(_weak_vs_all(models, corruptions), models=names,
                           paths=[tmp_path / "w.png"])
    _check_size(fig, tmp_path / "w.png")
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    if models == 1:
        assert labels == [f"{names[0]}, weak-robust set", f"{names[0]}, all evaluation images"]
    else:
        assert labels == [*map(model_label, names), "weak-robust set", "all evaluation images"]
    plt.close(fig)


@pytest.mark.parametrize("methods", [1, 7, 20])
def test_comparison_of_training_methods_is_readable_for_1_to_20_methods(methods, tmp_path):
    labels = ["Standard", "AugMix", "REVa", "AugMix+REVa", "PGD-AT", "Cutout", "Mixup"]
    compared = {labels[i % 7] + (f" {i // 7 + 1}" if i >= 7 else ""): f"finetuned:method-{i}"
                for i in range(methods)}
    rng = np.random.default_rng(methods)
    rows = []
    for label, model in compared.items():
        for kind, names, crafted in (
                ("clean", ["clean"], None),
                ("white-box", [*ATTACKS, "mean_adversarial"], model),
                ("transfer", [*ATTACKS, "mean_adversarial"], next(iter(compared.values()))),
                ("corruption", [*IMAGENET_C, "mCE"], None)):
            for name in names:
                v = float(rng.uniform(0.1, 0.9))
                rows.append({"method": label, "model": model, "kind": kind,
                             "perturbation": name, "category": "", "crafted_on": crafted,
                             "value": v, "lo": v - 0.04, "hi": v + 0.04, "n_images": 50,
                             "n_samples": 50, "resampled": "images (50)", "note": None})
    fig = plot_comparison_errors(pa.Table.from_pylist(rows, schema=COMPARISON_SCHEMA),
                                 methods=compared, models=[], paths=[tmp_path / "c.png"])
    _check_size(fig, tmp_path / "c.png")
    assert len(fig.legends[0].get_texts()) == methods
    plt.close(fig)


def _curves(level: float, properties=PROPERTIES) -> pa.Table:
    grid = np.linspace(0.0, 1.0, 41)
    rows = [{"metric": m, "classes": c, "v": float(v), "s": float(s),
             "lo83": max(0.0, s - 0.05), "hi83": min(1.0, s + 0.05),
             "lo95": max(0.0, s - 0.08), "hi95": min(1.0, s + 0.08)}
            for m, c in properties for v, s in zip(grid, level * (1 - grid**2), strict=True)]
    return pa.Table.from_pylist(rows, schema=CURVES_SCHEMA)


def _rates(level: float, properties=PROPERTIES, bins: int = 10) -> pa.Table:
    rows = [{"metric": m, "classes": c, "bin": b, "lo": b / bins, "hi": (b + 1) / bins,
             "center": (b + 0.5) / bins, "count": 10,
             "successes": round(10 * level * (1 - ((b + 0.5) / bins) ** 2)),
             "rate": level * (1 - ((b + 0.5) / bins) ** 2), "present": True}
            for m, c in properties for b in range(bins)]
    return pa.Table.from_pylist(rows, schema=RATES_SCHEMA)


def _metrics(properties=PROPERTIES) -> pa.Table:
    rows = [{**dict.fromkeys(METRICS_SCHEMA.names), "metric": m, "classes": c, "R": 0.5,
             "bins_present": 8, "dv_min": 0.05, "dv_max": 0.8} for m, c in properties]
    return pa.Table.from_pylist(rows, schema=METRICS_SCHEMA)


@pytest.mark.parametrize("models", [1, 7, 20])
def test_curves_of_1_to_20_models_keep_four_panels_and_a_readable_legend(models, tmp_path):
    names = model_names(models)
    levels = np.linspace(0.5, 0.95, models)
    human = PROPERTIES[2:]
    fig = plot_curves({m: _curves(v) for m, v in zip(names, levels, strict=True)},
                      {m: _rates(v) for m, v in zip(names, levels, strict=True)},
                      metrics={m: _metrics() for m in names}, corruption="gaussian_noise",
                      paths=[tmp_path / "c.png"], human=_curves(0.8, human),
                      human_rates=_rates(0.8, human), human_metrics=_metrics(human),
                      human_source="model-vs-human/uniform-noise")
    _check_size(fig, tmp_path / "c.png")
    assert len([ax for ax in fig.axes if ax.get_title()]) == 4
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    shown = [model_label(m) for m in sorted(names)]
    assert labels[:models] == shown
    # every model its own colour up to 20
    colours = {to_rgba(line.get_color()) for ax in fig.axes for line in ax.get_lines()
               if line.get_label() in shown}
    assert len(colours) == models
    plt.close(fig)


def test_model_colours_differ_up_to_20_models_and_keep_the_first_ten():
    names = [f"m{i:02d}" for i in range(21)]
    colours = model_colours(names)
    assert len({colours[m] for m in names[:20]}) == 20
    assert colours["m20"] == colours["m00"]
    assert model_colours(names[:10]) == {m: colours[m] for m in names[:10]}
    assert colours["m00"] == plt.get_cmap("tab10")(0)


@pytest.mark.parametrize("corruptions", [1, 4, 15])
def test_dv_histograms_of_1_to_15_corruptions_are_readable(corruptions, tmp_path):
    rng = np.random.default_rng(corruptions)
    names = IMAGENET_C[:corruptions]
    fig = plot_dv_histograms({c: rng.uniform(0, 1, 300) for c in names}, bins=40,
                             min_count=20, paths=[tmp_path / "h.png"],
                             imagenet_c={c: rng.uniform(0, 1, 100) for c in names})
    _check_size(fig, tmp_path / "h.png")
    assert len([ax for ax in fig.axes if ax.get_title()]) == corruptions
    plt.close(fig)


@pytest.mark.parametrize("categories", [1, 16])
def test_pool_scores_of_1_to_16_categories_are_readable(categories, tmp_path):
    n = 400
    rng = np.random.default_rng(0)
    ids = [f"i{k}" for k in range(n)]
    resilience = pa.table({"image_id": ids,
                           "category16": pa.array([k % categories for k in range(n)], pa.int8()),
                           "score": rng.uniform(0, 1, n),
                           "clean_correct": [k % 4 != 0 for k in range(n)]})
    ranking = pa.table({"image_id": ids, "selected": [k % 10 == 0 for k in range(n)]})
    fig = plot_resilience_scores(resilience, ranking, score_label="rho",
                                 category_names=list(CATEGORIES16), paths=[tmp_path / "s.png"])
    _check_size(fig, tmp_path / "s.png")
    assert len(fig.axes[0].get_xticklabels()) == categories
    plt.close(fig)
