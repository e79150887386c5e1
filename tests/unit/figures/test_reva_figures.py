"""REVa's figures from small hand-made tables (schemas in docs/reva.md): every path written,
the marks that carry the meaning present, nulls and empty tables drawn, not crashed."""

from __future__ import annotations

import pyarrow as pa
from helpers.images import assert_png
from matplotlib.patches import Rectangle

from vcrbench.figures.reva import (
    plot_comparison_errors,
    plot_relative_errors,
    plot_resilience_scores,
    plot_weak_vs_all,
)
from vcrbench.reva.comparison import SCHEMA_ERRORS

MODELS = ["efficientnet-lite0", "torchvision:resnet50"]


def _resilience(categories):
    n = len(categories)
    return (
        pa.table({"image_id": [f"i{k}" for k in range(n)],
                  "category16": pa.array(categories, pa.int8()),
                  "score": [k / n for k in range(n)],
                  "clean_correct": [k % 4 != 0 for k in range(n)]}),
        pa.table({"image_id": [f"i{k}" for k in range(n)],
                  "selected": [k >= n - 3 for k in range(n)]}),
    )


def test_resilience_scores_by_category_and_over_the_pool(tmp_path):
    paths = [tmp_path / "s.png", tmp_path / "s.pdf"]
    fig = plot_resilience_scores(*_resilience([k % 3 for k in range(12)]), score_label="rho",
                                 category_names=[f"cat{k}" for k in range(16)], paths=paths)
    assert_png(paths[0])
    assert paths[1].stat().st_size > 0
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["cat0", "cat1", "cat2"]
    assert "(3 in the weak-robust set)" in ax.get_title()
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["weak-robust set", "other clean-correct images",
                      "clean-misclassified (not weak robust)"]
    fig = plot_resilience_scores(*_resilience([-1] * 8), score_label="rho",
                                 category_names=None, paths=[tmp_path / "p.png"])
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["pool"]
    # a random baseline (reva.weak.draw) is named as such
    fig = plot_resilience_scores(*_resilience([-1] * 8), score_label="rho",
                                 category_names=None, paths=[tmp_path / "b.png"],
                                 set_name="random baseline set")
    assert "(3 in the random baseline set)" in fig.axes[0].get_title()
    assert fig.legends[0].get_texts()[0].get_text() == "random baseline set"


def _weak_vs_all(r_weak=0.4):
    base = {"metric": "accuracy", "classes": 1000, "R_all": 0.7, "R_all_lo": 0.6,
            "R_all_hi": 0.8, "difference": None, "difference_lo": None, "difference_hi": None,
            "lower_on_weak": None, "note": None}
    return pa.Table.from_pylist([
        {**base, "model": "efficientnet-lite0", "corruption": "gaussian_noise",
         "R_weak": r_weak, "R_weak_lo": 0.3, "R_weak_hi": 0.5},
        {**base, "model": "efficientnet-lite0", "corruption": "frost", "R_weak": None,
         "R_weak_lo": None, "R_weak_hi": None, "note": "weak: too few bins"},
    ])


def test_weak_vs_all_draws_both_sets_and_marks_a_null(tmp_path):
    fig = plot_weak_vs_all(_weak_vs_all(), models=MODELS, paths=[tmp_path / "w.png"])
    assert_png(tmp_path / "w.png")
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "efficientnet-lite0, weak-robust set" in labels
    assert "efficientnet-lite0, all evaluation images" in labels
    assert "R not reported" in labels
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["gaussian_noise", "frost"]
    fig = plot_weak_vs_all(_weak_vs_all(), models=MODELS, paths=[tmp_path / "b.png"],
                           set_name="random baseline set")
    assert "efficientnet-lite0, random baseline set" in [
        t.get_text() for t in fig.legends[0].get_texts()]
    assert fig._suptitle.get_text().startswith("R on the random baseline set against")


def test_weak_vs_all_has_a_row_per_curve(tmp_path):
    accuracy = _weak_vs_all()
    consistency = accuracy.set_column(accuracy.column_names.index("metric"), "metric",
                                      pa.array(["consistency"] * accuracy.num_rows))
    fig = plot_weak_vs_all(pa.concat_tables([accuracy, consistency]), models=MODELS,
                           paths=[tmp_path / "w.png"])
    assert [ax.get_title() for ax in fig.axes] == ["accuracy curve (R_a), 1000 classes",
                                                   "consistency curve (R_p), 1000 classes"]
    top, bottom = (ax.get_position() for ax in fig.axes)
    assert top.y0 > bottom.y1  # stacked, one above the other
    # the legend sits under the lowest axis and its corruption names
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()  # the saved figure was closed
    assert fig.legends[0].get_window_extent(renderer).y1 <= \
        fig.axes[1].get_tightbbox(renderer).y0 + 1


def test_relative_errors_fill_the_non_robust_bars(tmp_path):
    relative = pa.table({
        "model": ["m"] * 4, "kind": ["corruption", "corruption", "attack", "attack"],
        "perturbation": ["gaussian_noise", "shot_noise", "fgsm", "pgd"],
        "category": ["noise", "noise", "adversarial", "adversarial"],
        "measure": ["severity"] * 4, "value": [3.0, 2.5, 1.5, None],
        "lo": [2.0, 2.0, None, None], "hi": [4.0, 3.0, None, None],
    })
    groups = pa.table({
        "model": ["m"] * 4, "perturbation": ["gaussian_noise", "shot_noise", "fgsm", "pgd"],
        "measure": ["severity"] * 4, "rule": ["worst-per-category"] * 4,
        "non_robust": [True, False, True, None], "chosen": [True] * 4,
    })
    fig = plot_relative_errors(relative, groups, models=["m"], paths=[tmp_path / "r.png"])
    assert_png(tmp_path / "r.png")
    bars = [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    assert sum(bool(b.get_hatch()) for b in bars) == 1  # shot_noise: robust
    assert sum(not b.get_hatch() for b in bars) == 2    # gaussian_noise, fgsm: non-robust
    assert "n/a" in [t.get_text() for t in fig.axes[0].texts]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "non-robust (worst-per-category)" in labels and "robust" in labels


def test_a_value_a_rounding_error_outside_its_interval_draws(tmp_path):
    # a near-chance network in the tiny CIFAR run: every error 0, one continuous relative error
    # 1.2e-16 above its bootstrap interval [0, 0]
    from vcrbench.figures.style import error_extent

    assert error_extent(1.2e-16, 0.0, 0.0) == [[1.2e-16], [0.0]]
    assert error_extent(2.0, 1.5, 3.0) == [[0.5], [1.0]]
    assert error_extent(2.0, None, None) is None
    relative = pa.table({
        "model": ["m"], "kind": ["corruption"], "perturbation": ["gaussian_blur"],
        "category": ["blur"], "measure": ["continuous"], "value": [1.233581e-16],
        "lo": [0.0], "hi": [0.0],
    })
    groups = pa.table({"model": ["m"], "perturbation": ["gaussian_blur"],
                       "measure": ["continuous"], "rule": ["worst-per-category"],
                       "non_robust": [True], "chosen": [True]})
    plot_relative_errors(relative, groups, models=["m"], paths=[tmp_path / "r.png"])
    assert_png(tmp_path / "r.png")


def test_empty_tables_give_a_no_data_figure(tmp_path):
    empty = pa.table({"model": pa.array([], pa.string())})
    fig = plot_relative_errors(empty, empty, models=[], paths=[tmp_path / "e.png"])
    assert "no data" in fig.axes[0].texts[0].get_text()


COMPARED = {"Standard": "finetuned:standard", "AugMix": "finetuned:augmix",
            "REVa": "finetuned:reva"}


def _comparison_errors():
    rows = []
    for k, (label, model) in enumerate(COMPARED.items()):
        for kind, names, crafted in (("clean", ["clean"], None),
                                     ("white-box", ["fgsm", "pgd", "mean_adversarial"], model),
                                     ("transfer", ["fgsm", "pgd", "mean_adversarial"],
                                      "finetuned:standard"),
                                     ("corruption", ["gaussian_noise", "frost", "mCE"], None)):
            for name in names:
                value = None if (label, name) == ("REVa", "frost") else 0.1 + 0.1 * k
                rows.append({"method": label, "model": model, "kind": kind,
                             "perturbation": name, "category": "", "crafted_on": crafted,
                             "value": value, "lo": None if value is None else value - 0.05,
                             "hi": None if value is None else value + 0.05, "n_images": 12,
                             "n_samples": 12, "resampled": "images (12)", "note": None})
    return pa.Table.from_pylist(rows, schema=SCHEMA_ERRORS)


def test_comparison_draws_every_method_per_perturbation_in_three_panels(tmp_path):
    paths = [tmp_path / "c.png", tmp_path / "c.pdf"]
    fig = plot_comparison_errors(_comparison_errors(), methods=COMPARED, models=MODELS,
                                 paths=paths)
    width, height = assert_png(paths[0])
    assert width > height and height <= 1000  # landscape, fits the report
    assert paths[1].stat().st_size > 0
    titles = [ax.get_title() for ax in fig.axes]
    assert len(titles) == 3 and "transferred from Standard" in titles[1]
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["clean", "fgsm", "pgd",
                                                                      "mean"]
    assert [t.get_text() for t in fig.axes[2].get_xticklabels()][-1] == "mCE"
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["Standard (finetuned:standard)", "AugMix (finetuned:augmix)",
                      "REVa (finetuned:reva)", "undefined"]
