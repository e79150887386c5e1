"""Figures and the coverage table from small hand-made tables."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from helpers.images import assert_png
from matplotlib.colors import to_rgba

from vcrbench.core.tables import csv_text, write_table
from vcrbench.curves.binning import expected_coverage
from vcrbench.curves.tables import CURVES_SCHEMA, RATES_SCHEMA
from vcrbench.figures.human import plot_human_indices, plot_human_similarity
from vcrbench.figures.style import MARKERS, model_colours, model_label
from vcrbench.figures.vcr import (
    plot_curves,
    plot_dv_histograms,
    plot_r_vs_imagenet_c,
    plot_retraining,
    plot_robustness,
    read_dv,
)
from vcrbench.human.similarity import GROUPS_SCHEMA
from vcrbench.vcr.coverage import coverage_markdown, coverage_table
from vcrbench.vcr.summary import ORDER

MODELS = ["efficientnet-lite0", "file:/somewhere/colour_model.py", "torchvision:resnet50"]
GRID = np.linspace(0.0, 1.0, 51)
BINS = 5


def _curve_table(level: float, properties) -> pa.Table:
    rows = []
    for metric, classes in properties:
        s = level * (1 - GRID**2)
        for v, value in zip(GRID, s, strict=True):
            rows.append(
                {
                    "metric": metric, "classes": classes, "v": float(v), "s": float(value),
                    "lo83": max(0.0, value - 0.05), "hi83": min(1.0, value + 0.05),
                    "lo95": max(0.0, value - 0.08), "hi95": min(1.0, value + 0.08),
                }
            )
    return pa.Table.from_pylist(rows, schema=CURVES_SCHEMA)


def _rates_table(level: float, properties) -> pa.Table:
    rows = []
    for metric, classes in properties:
        for b in range(BINS):
            center = (b + 0.5) / BINS
            count = 0 if b == BINS - 1 else 10  # the last bin is missing
            rows.append(
                {
                    "metric": metric, "classes": classes, "bin": b, "lo": b / BINS,
                    "hi": (b + 1) / BINS, "center": center, "count": count,
                    "successes": round(count * level * (1 - center**2)),
                    "rate": level * (1 - center**2) if count else None, "present": count >= 3,
                }
            )
    return pa.Table.from_pylist(rows, schema=RATES_SCHEMA)


MODEL_PROPERTIES = [("accuracy", 1000), ("consistency", 1000), ("accuracy", 16)]
HUMAN_PROPERTIES = [("accuracy", 16)]


def _summary(*, human: bool = True, imagenet_c: bool = True, accuracy_1000: bool = True):
    rows = []
    for i, model in enumerate(MODELS):
        for j, corruption in enumerate(["gaussian_noise", "gaussian_blur", "frost"]):
            for metric, classes in MODEL_PROPERTIES:
                if (metric, classes) == ("accuracy", 1000) and not accuracy_1000:
                    continue
                r = 0.3 + 0.1 * i + 0.05 * j
                row = dict.fromkeys(ORDER)
                row.update(
                    model=model, corruption=corruption, metric=metric, classes=classes, R=r,
                    R_lo=r - 0.05, R_hi=r + 0.04, coverage=0.5 + 0.1 * j if metric ==
                    "consistency" else 0.3, n_samples=100 if metric == "consistency" else 40,
                    bins_present=4, anchor=0.9, lam=0.1,
                )
                if human and classes == 16 and corruption != "frost":
                    row.update(
                        HMRI=0.8 - 0.1 * i, HMRI_lo=0.7 - 0.1 * i, HMRI_hi=0.85 - 0.1 * i,
                        MRSI=0.1 + 0.05 * i, MRSI_lo=0.05, MRSI_hi=0.2 + 0.05 * i,
                        human_source="model-vs-human/uniform-noise"
                        + (" via uniform_noise" if corruption == "gaussian_noise" else ""),
                    )
                if imagenet_c and corruption != "frost":
                    row.update(imagenet_c_mean=r + 0.1, imagenet_c_mean_lo=r + 0.07,
                               imagenet_c_mean_hi=r + 0.14, imagenet_c_coverage=0.4 + 0.1 * j)
                rows.append(row)
    return pa.Table.from_pylist(rows)



def _texts(fig) -> str:
    """Every text of a figure: suptitle, axes titles and labels, tick labels, legends."""
    parts = [t.get_text() for t in fig.texts]
    if fig._suptitle is not None:
        parts.append(fig._suptitle.get_text())
    for legend in fig.legends:
        parts += [t.get_text() for t in legend.get_texts()]
    for ax in fig.axes:
        parts += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        parts += [t.get_text() for t in ax.get_xticklabels()]
        parts += [t.get_text() for t in ax.texts]
        if ax.get_legend() is not None:
            parts += [t.get_text() for t in ax.get_legend().get_texts()]
    return "\n".join(parts)


def _line_colours(fig) -> dict[str, tuple]:
    """Legend label -> RGBA of the labelled lines and bars of a figure."""
    found = {}
    for ax in fig.axes:
        for line in ax.get_lines():
            if not line.get_label().startswith("_"):
                found[line.get_label()] = to_rgba(line.get_color())
        for container in ax.containers:
            label = container.get_label()
            if label and not label.startswith("_") and hasattr(container, "patches"):
                found[label] = to_rgba(container.patches[0].get_facecolor())
    return found


def test_model_colours_are_fixed_by_sorted_name():
    colours = model_colours(MODELS)
    assert colours == model_colours(list(reversed(MODELS)))
    assert len(set(colours.values())) == len(MODELS)
    assert model_label("file:/somewhere/colour_model.py") == "file:colour_model.py"


def test_curves_with_human_curve_png_and_pdf(tmp_path):
    curves = {m: _curve_table(0.9 - 0.2 * i, MODEL_PROPERTIES) for i, m in enumerate(MODELS)}
    rates = {m: _rates_table(0.9 - 0.2 * i, MODEL_PROPERTIES) for i, m in enumerate(MODELS)}
    paths = [tmp_path / "curves" / "gaussian_noise.png", tmp_path / "curves" / "gaussian_noise.pdf"]
    source = "model-vs-human/uniform-noise via uniform_noise"
    fig = plot_curves(
        curves, rates, corruption="gaussian_noise", paths=paths, models=MODELS,
        human=_curve_table(0.8, HUMAN_PROPERTIES), human_rates=_rates_table(0.8, HUMAN_PROPERTIES),
        human_source=source,
    )
    assert_png(paths[0])
    assert paths[1].read_bytes().startswith(b"%PDF")
    assert not list(tmp_path.rglob(".*.tmp-*"))
    text = _texts(fig)
    assert "gaussian_noise" in text and f"humans ({source})" in text
    assert "visual change" in text and "VIF" in text and "fraction correct" in text
    assert "accuracy $s_a$, 16 classes" in text
    colours = _line_colours(fig)
    expected = model_colours(MODELS)
    for model in MODELS:
        assert colours[model_label(model)] == to_rgba(expected[model])
    assert colours[f"humans ({source})"] == to_rgba("black")
    # the human curve only appears in its 16-class panel; the 1000-class panels have none
    human_axes = [
        ax for ax in fig.axes if any(line.get_label().startswith("humans") for line in ax.lines)
    ]
    assert [ax.get_title() for ax in human_axes] == ["accuracy $s_a$, 16 classes"]


def test_curves_without_human_curve(tmp_path):
    curves = {MODELS[0]: _curve_table(0.9, MODEL_PROPERTIES)}
    rates = {MODELS[0]: _rates_table(0.9, MODEL_PROPERTIES)}
    fig = plot_curves(curves, rates, corruption="frost", paths=[tmp_path / "frost.png"])
    assert_png(tmp_path / "frost.png")
    assert "humans" not in _texts(fig)


def test_dv_histograms_with_and_without_imagenet_c_sample(tmp_path):
    rng = np.random.default_rng(0)
    dv = {"gaussian_noise": rng.uniform(0, 1, 200), "frost": rng.uniform(0, 0.5, 200)}
    # ImageNet-C sample of Gaussian noise: 20 values in each of the bins 2 and 3 of 5
    imagenet_c = {"gaussian_noise": np.r_[np.full(20, 0.45), np.full(20, 0.65), [0.1]]}
    path = tmp_path / "dv-histograms.png"
    fig = plot_dv_histograms(
        dv, bins=BINS, min_count=10, paths=[path], imagenet_c=imagenet_c
    )
    assert_png(path)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    # the uniform sample at the ImageNet-C sample's size (41 of 200 samples)
    fair = expected_coverage(dv["gaussian_noise"], 41, bins=BINS, min_count=10)
    assert 0 < fair < 1
    assert titles[0] == f"gaussian_noise\ncov. 1.00 · IC 0.40 vs {fair:.2f}"
    assert titles[1] == "frost\ncov. 0.60"
    text = _texts(fig)
    assert "ImageNet-C sample (severities 1–5)" in text and "L = 10" in text
    assert "visual change" in text and "fraction of the sample per bin" in text
    assert "N = 200" in text and "IC, N = 41" in text
    # bars and outline are fractions of their own sample: each sums to 1
    first = fig.axes[0]
    (bars,) = first.containers
    assert sum(p.get_height() for p in bars.patches) == pytest.approx(1)
    (outline,) = [p for p in first.patches if p not in bars.patches]
    assert outline.get_data().values.sum() == pytest.approx(1)


def test_read_dv_groups_shards_by_corruption_folder(tmp_path):
    for corruption, shard, values in [("a", 0, [0.1, 0.2]), ("a", 1, [0.3]), ("b", 0, [0.9])]:
        table = pa.table({"sample_id": list(range(len(values))), "dv": values})
        write_table(table, tmp_path / corruption / f"shard-{shard}.parquet")
    paths = sorted(tmp_path.rglob("*.parquet"))
    assert read_dv(paths) == {"a": [0.1, 0.2, 0.3], "b": [0.9]}


def test_robustness_and_human_indices_share_model_colours(tmp_path):
    summary = _summary()
    figs = {
        "robustness": plot_robustness(summary, paths=[tmp_path / "r.png"], models=MODELS),
        "indices": plot_human_indices(summary, paths=[tmp_path / "h.png"], models=MODELS),
    }
    assert_png(tmp_path / "r.png")
    assert_png(tmp_path / "h.png")
    expected = model_colours(MODELS)
    for fig in figs.values():
        colours = _line_colours(fig)
        for model in MODELS:
            assert colours[model_label(model)] == to_rgba(expected[model])
    text = _texts(figs["indices"])
    assert "HMRI, 16-class accuracy" in text and "MRSI, 16-class accuracy" in text
    assert "gaussian_noise\nvia uniform_noise" in text
    assert "frost" not in text  # no human curve: no HMRI bar
    assert "HMRI\n(1: never below humans)" in text and "A^{" not in text
    # every bar says its value: 2 corruptions × 3 models in each of the 2 panels
    assert sum(len(ax.texts) for ax in figs["indices"].axes) == 2 * 2 * len(MODELS)
    # panels: HMRI and MRSI for the one metric with human values
    assert len([ax for ax in figs["indices"].axes if ax.get_title()]) == 2


def test_every_bar_shows_its_value_a_bar_too_short_to_see_too(tmp_path):
    rows = _summary().to_pylist()
    rows[0].update(R=0.0, R_lo=0.0, R_hi=0.01)
    fig = plot_robustness(pa.Table.from_pylist(rows), paths=[tmp_path / "r.png"])
    values = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert len(values) == len(rows) and "0.00" in values
    bars = [p.get_height() for ax in fig.axes for c in ax.containers
            if hasattr(c, "patches") for p in c.patches]
    assert sorted(values) == sorted(f"{h:.2f}" for h in bars)


def test_robustness_orders_each_panel_by_r_and_marks_clean_accuracy(tmp_path):
    rows = _summary().to_pylist()
    # make frost the most robust corruption in the 1000-class accuracy panel only
    for row in rows:
        if (row["corruption"], row["metric"], row["classes"]) == ("frost", "accuracy", 1000):
            row.update(R=0.95, R_lo=0.9, R_hi=0.97)
    fig = plot_robustness(pa.Table.from_pylist(rows), paths=[tmp_path / "r.png"], models=MODELS)
    panels = {ax.get_title(): ax for ax in fig.axes if ax.get_title()}
    ticks = [t.get_text() for t in panels["accuracy $s_a$, 1000 classes"].get_xticklabels()]
    assert ticks == ["frost", "gaussian_blur", "gaussian_noise"]
    ticks = [t.get_text() for t in panels["consistency $s_p$, 1000 classes"].get_xticklabels()]
    assert ticks == ["frost", "gaussian_blur", "gaussian_noise"]  # R grows with j there too
    ticks = [t.get_text() for t in panels["accuracy $s_a$, 16 classes"].get_xticklabels()]
    assert ticks == ["frost", "gaussian_blur", "gaussian_noise"]
    # clean accuracy (the anchor, 0.9) as a tick across each bar of the accuracy panels only
    for title, ax in panels.items():
        clean = [c for c in ax.containers if c.get_label().startswith("clean accuracy")]
        assert len(clean) == (1 if "accuracy" in title else 0), title
        if clean:
            (segments,) = [c.get_segments() for c in clean[0].lines[2]]
            assert len(segments) == 3 * len(MODELS)
            assert all(seg[0][1] == seg[1][1] == pytest.approx(0.9) for seg in segments)
    # landscape: two panels a row
    assert fig.get_figwidth() > fig.get_figheight()


def test_human_indices_of_a_model_subset_keep_the_run_colours(tmp_path):
    summary = _summary().filter(pc.field("model") == MODELS[2])
    fig = plot_human_indices(summary, paths=[tmp_path / "h.png"], models=MODELS)
    colours = _line_colours(fig)
    assert colours == {model_label(MODELS[2]): to_rgba(model_colours(MODELS)[MODELS[2]])}


def test_human_indices_without_any_human_row_says_so(tmp_path):
    fig = plot_human_indices(_summary(human=False), paths=[tmp_path / "h.png"])
    assert_png(tmp_path / "h.png")
    assert "No model has a 16-class row with a human comparison" in _texts(fig)


def test_r_vs_imagenet_c_points_colours_markers(tmp_path):
    fig = plot_r_vs_imagenet_c(_summary(), paths=[tmp_path / "r.png"], models=MODELS)
    assert_png(tmp_path / "r.png")
    (ax,) = fig.axes
    points = [line for line in ax.get_lines() if line.get_marker() in MARKERS]
    # one point per model × corruption with an ImageNet-C mean (frost has none)
    assert len(points) == len(MODELS) * 2
    expected = model_colours(MODELS)
    markers = {}
    for line in points:
        x, y = line.get_xdata()[0], line.get_ydata()[0]
        assert x == pytest.approx(y + 0.1)
        assert to_rgba(line.get_color()) in {to_rgba(c) for c in expected.values()}
        markers.setdefault(line.get_marker(), set()).add(to_rgba(line.get_color()))
    assert len(markers) == 2 and all(len(c) == len(MODELS) for c in markers.values())
    # error bars on both axes: R's interval (vertical) and the ImageNet-C mean's (horizontal)
    horizontal = [seg for c in ax.collections for seg in c.get_segments()
                  if seg[0][1] == pytest.approx(seg[1][1]) and seg[0][0] != seg[1][0]]
    assert len(horizontal) == len(points)
    assert {round(seg[1][0] - seg[0][0], 6) for seg in horizontal} == {0.07}
    text = _texts(fig)
    assert "1000 classes" in ax.get_title() and "ImageNet-C" in ax.get_xlabel()
    assert "$R_a$" in ax.get_ylabel() and "gaussian_blur" in text


def test_r_vs_imagenet_c_falls_back_without_labels_and_says_so(tmp_path):
    fig = plot_r_vs_imagenet_c(_summary(accuracy_1000=False), paths=[tmp_path / "r.png"])
    title = fig.axes[0].get_title()
    assert "accuracy, 16 classes" in title and "no 1000-class accuracy" in title


def test_human_similarity_colours_by_group(tmp_path):
    curves = {
        "uniform_noise": _curve_table(0.8, HUMAN_PROPERTIES),
        "gaussian_blur": _curve_table(0.9, HUMAN_PROPERTIES),
        "gaussian_noise": _curve_table(0.78, HUMAN_PROPERTIES),
    }
    groups = pa.table(
        {"corruption": ["uniform_noise", "gaussian_blur", "gaussian_noise"], "group": [0, 1, 0]},
        schema=GROUPS_SCHEMA,
    )
    path = tmp_path / "human-similarity.png"
    fig = plot_human_similarity(curves, groups, paths=[path])
    assert_png(path)
    colours = _line_colours(fig)
    assert colours["uniform_noise (class 1)"] == colours["gaussian_noise (class 1)"]
    assert colours["gaussian_blur (class 2)"] != colours["uniform_noise (class 1)"]
    text = _texts(fig)
    assert "83 %" in text and "visual change" in text and "human accuracy" in text
    # bands: one filled 83 % band per corruption
    assert len(fig.axes[0].collections) == 3


def test_coverage_table_one_row_per_corruption():
    rng = np.random.default_rng(4)
    uniform_dv = {c: rng.uniform(0, 1, 100) for c in ["frost", "gaussian_noise", "gaussian_blur"]}
    table = coverage_table(_summary(), corruptions=["frost", "gaussian_noise", "gaussian_blur"],
                           uniform_dv=uniform_dv, imagenet_c_n={"gaussian_noise": 30,
                                                                "gaussian_blur": 30},
                           bins=5, min_count=5)
    rows = table.to_pylist()
    assert [r["corruption"] for r in rows] == ["frost", "gaussian_noise", "gaussian_blur"]
    # the uniform coverage of the row with every sample (consistency, 100 samples)
    assert [r["coverage"] for r in rows] == pytest.approx([0.7, 0.5, 0.6])
    assert [r["n_samples"] for r in rows] == [100, 100, 100]
    assert [r["imagenet_c_coverage"] for r in rows] == [None, 0.4, pytest.approx(0.5)]
    assert [r["imagenet_c_n"] for r in rows] == [None, 30, 30]
    # the uniform sample at the ImageNet-C sample's size
    assert rows[0]["coverage_at_imagenet_c_n"] is None
    assert rows[1]["coverage_at_imagenet_c_n"] == pytest.approx(
        expected_coverage(uniform_dv["gaussian_noise"], 30, bins=5, min_count=5))
    markdown = coverage_markdown(table, bins=40, min_count=20)
    assert "| frost | 100 | 0.700 | – | – | – |" in markdown and "M = 40 bins, L = 20" in markdown
    lines = csv_text(table).splitlines()
    assert lines[0] == ("corruption,n_samples,coverage,imagenet_c_n,imagenet_c_coverage,"
                        "coverage_at_imagenet_c_n")
    assert lines[1] == "frost,100,0.7,,,"


def _metrics_table(rows: list[dict]) -> pa.Table:
    return pa.Table.from_pylist([{"metric": "accuracy", "classes": 1000, "R": 0.5,
                                  "bins_present": 4, "dv_min": 0.0, "dv_max": 1.0, **row}
                                 for row in rows])


def test_curves_beyond_the_data_are_dashed_and_thin_support_is_grey_with_its_bins(tmp_path):
    curves = {m: _curve_table(0.9, MODEL_PROPERTIES) for m in MODELS[:2]}
    rates = {m: _rates_table(0.9, MODEL_PROPERTIES) for m in MODELS[:2]}
    metrics = {
        MODELS[0]: _metrics_table([{"dv_min": 0.0, "dv_max": 0.6}]),
        MODELS[1]: _metrics_table([{"R": None, "bins_present": 2, "dv_min": 0.1,
                                    "dv_max": 0.3}]),
    }
    fig = plot_curves(curves, rates, corruption="frost", paths=[tmp_path / "c.png"],
                      metrics=metrics, models=MODELS)
    ax = next(a for a in fig.axes if a.get_title() == "accuracy $s_a$, 1000 classes")
    solid = {line.get_label(): line for line in ax.get_lines() if not line.get_label()
             .startswith("_")}
    first = solid[model_label(MODELS[0])]
    v, s = first.get_xdata(), np.asarray(first.get_ydata(), dtype=float)
    assert np.isfinite(s[v <= 0.6]).all() and np.isnan(s[v > 0.61]).all()
    dashed = [line for line in ax.get_lines() if line.get_linestyle() == "--"
              and to_rgba(line.get_color()) == to_rgba(model_colours(MODELS)[MODELS[0]])]
    assert len(dashed) == 1
    tail = np.asarray(dashed[0].get_ydata(), dtype=float)
    assert np.isfinite(tail[v >= 0.6]).all() and np.isnan(tail[v < 0.58]).all()
    # the thin curve: grey, its bins in the legend
    thin = solid[f"{model_label(MODELS[1])} (only 2 bins with data: R not reported)"]
    assert to_rgba(thin.get_color()) == to_rgba("0.62")
    # Δv without any model's data is shaded: beyond 0.6 (the union of the two ranges)
    spans = [p for p in ax.patches if p.get_alpha() == 0.1]
    assert len(spans) == 1 and spans[0].get_x() == pytest.approx(0.6)
    text = _texts(fig)
    assert "beyond the data: extrapolated to the anchors" in text and "humans" not in text
    assert "Δv without data" in text
    assert fig.get_figwidth() > fig.get_figheight()


def test_no_png_is_taller_than_1000_pixels(tmp_path):
    import matplotlib.pyplot as plt
    from PIL import Image

    from vcrbench.figures.style import MAX_PNG_HEIGHT, save_figure

    fig, ax = plt.subplots(figsize=(4, 14))
    ax.plot([0, 1], [0, 1])
    save_figure(fig, [tmp_path / "tall.png", tmp_path / "tall.pdf"])
    with Image.open(tmp_path / "tall.png") as image:
        assert MAX_PNG_HEIGHT - 20 <= image.height <= MAX_PNG_HEIGHT
    fig, ax = plt.subplots(figsize=(4, 3))
    save_figure(fig, [tmp_path / "small.png"])
    with Image.open(tmp_path / "small.png") as image:
        assert image.height < 3 * 150 + 40  # full resolution where it fits


@pytest.mark.parametrize("count", [2, 14, 46])
def test_dv_histograms_stay_landscape_for_any_number_of_corruptions(count, tmp_path):
    rng = np.random.default_rng(1)
    dv = {f"c{i}": rng.uniform(0, 1, 60) for i in range(count)}
    # an ImageNet-C sample larger than the uniform one: no coverage "at its size"
    imagenet_c = {"c0": rng.uniform(0, 1, 100)}
    fig = plot_dv_histograms(dv, bins=BINS, min_count=3, paths=[tmp_path / "h.png"],
                             imagenet_c=imagenet_c)
    assert fig.get_figwidth() > fig.get_figheight()
    assert fig.axes[0].get_title().endswith(" vs –")


def test_retraining_of_a_cifar_run_plots_its_ten_class_panels(tmp_path):
    """A CIFAR-10 run's retraining table (classes 10): the R_a and R_p panels, nothing else."""
    from vcrbench.vcr.retraining import SCHEMA

    rows = [{"finetuned": "finetuned:ft", "base": "trained:net", "corruption": c,
             "metric": metric, "classes": 10, "quantity": "R", "before": 0.5, "before_lo": 0.45,
             "before_hi": 0.55, "after": 0.6, "after_lo": 0.55, "after_hi": 0.65,
             "change": 0.1, "change_lo": 0.05, "change_hi": 0.15, "verdict": "higher"}
            for c in ("gaussian_noise", "fog") for metric in ("accuracy", "consistency")]
    path = tmp_path / "retraining.png"
    fig = plot_retraining(pa.Table.from_pylist(rows, schema=SCHEMA), paths=[path])
    assert [ax.get_title().splitlines()[-1] for ax in fig.axes if ax.get_title()] == [
        "R$_a$", "R$_p$"]
    assert_png(path)
