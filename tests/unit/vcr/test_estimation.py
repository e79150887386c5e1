"""Outcomes, rates, curves and summary tables on synthetic predictions with a known answer."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from vcrbench.core.properties import select
from vcrbench.core.tables import csv_text
from vcrbench.curves.tables import replicate_areas
from vcrbench.evaluation.outcomes import sample_outcomes
from vcrbench.vcr.estimation import fit_curves, fit_curves_configured
from vcrbench.vcr.rates import rates_table
from vcrbench.vcr.summary import build_summary, summary_markdown


def _synthetic(n: int = 4000, seed: int = 0):
    """Images with labels 0..9; the model is right with probability 1 − Δv (true R_a = 0.5)."""
    rng = np.random.default_rng(seed)
    images = [f"im{i}" for i in range(10)]
    index = pa.table(
        {
            "image_id": images,
            "path": images,
            "label": pa.array(range(10), pa.int16()),
            "wnid": [None] * 10,
            "category16": pa.array([i % 16 if i < 5 else -1 for i in range(10)], pa.int8()),
        }
    )
    clean = pa.table(
        {
            "image_id": images,
            "top1": pa.array(range(10), pa.int16()),
            "top1_16": pa.array([i % 16 for i in range(10)], pa.int8()),
            "p_top1": pa.array([0.9] * 10, pa.float32()),
        }
    )
    dv = rng.uniform(0, 1, n)
    image = rng.integers(0, 10, n)
    right = rng.uniform(0, 1, n) < 1 - dv
    top1 = np.where(right, image, (image + 1) % 10)
    scored = pa.table(
        {
            "sample_id": pa.array(range(n), pa.int64()),
            "image_id": [images[i] for i in image],
            "dv": dv,
        }
    )
    predictions = pa.table(
        {
            "sample_id": pa.array(range(n), pa.int64()),
            "top1": pa.array(top1, pa.int16()),
            "top1_16": pa.array(top1 % 16, pa.int8()),
            "p_top1": pa.array(np.full(n, 0.5), pa.float32()),
        }
    )
    return index, scored, predictions, clean


def test_outcomes_follow_labels_and_clean_predictions():
    outcomes = sample_outcomes(*_synthetic(200))
    correct = outcomes.column("correct").to_numpy(zero_copy_only=False)
    consistent = outcomes.column("consistent").to_numpy(zero_copy_only=False)
    assert np.array_equal(correct, consistent)  # the clean model is always right here
    correct16 = outcomes.column("correct16")
    labelled16 = np.isin(
        outcomes.column("image_id").to_numpy(zero_copy_only=False), [f"im{i}" for i in range(5)]
    )
    assert correct16.null_count == int((~labelled16).sum())


def test_rates_count_every_sample_once():
    outcomes = sample_outcomes(*_synthetic(1000))
    rates = rates_table(outcomes, bins=10, min_count=5)
    for metric, classes in [("accuracy", 1000), ("consistency", 1000)]:
        rows = [r for r in rates.to_pylist() if r["metric"] == metric and r["classes"] == classes]
        assert len(rows) == 10 and sum(r["count"] for r in rows) == 1000


def test_curves_recover_the_known_area_and_summary_is_complete():
    outcomes = sample_outcomes(*_synthetic(4000))
    curves, replicates, metrics = fit_curves(
        outcomes, model="m", corruption="c", bins=20, min_count=20, n_boot=50, seed=1
    )
    rows = {(r["metric"], r["classes"]): r for r in metrics.to_pylist()}
    assert set(rows) == {
        ("accuracy", 1000),
        ("consistency", 1000),
        ("accuracy", 16),
        ("consistency", 16),
    }
    accuracy = rows[("accuracy", 1000)]
    assert abs(accuracy["R"] - 0.5) < 0.03
    assert accuracy["R_lo"] <= accuracy["R"] <= accuracy["R_hi"] and accuracy["anchor"] == 1.0
    assert accuracy["coverage"] == 1.0 and accuracy["n_samples"] == 4000
    assert replicates.num_rows == 4 * 50
    s = curves.filter(pa.compute.equal(curves.column("metric"), "accuracy")).column("s").to_numpy()
    assert np.all(np.diff(s[: len(s) // 2]) <= 1e-12)
    summary = build_summary(metrics)
    assert summary.num_rows == 4 and summary.column("HMRI").null_count == 4
    assert csv_text(summary).startswith("model,corruption,metric,classes,R,")
    assert summary_markdown(summary).count("\n") == 6


def test_curves_are_reproducible():
    outcomes = sample_outcomes(*_synthetic(800))
    first = fit_curves(outcomes, model="m", corruption="c", bins=10, min_count=5, n_boot=20, seed=3)
    second = fit_curves(
        outcomes, model="m", corruption="c", bins=10, min_count=5, n_boot=20, seed=3
    )
    for a, b in zip(first, second, strict=True):
        assert a.equals(b)


def test_configured_fit_reads_the_config_sections_as_the_curves_job():
    outcomes = sample_outcomes(*_synthetic(800))
    binning = {"bins": 10, "min_count": 5, "min_coverage": 0.4, "right_anchor": "none"}
    bootstrap = {"replicates": 20, "min_units": 8}
    got = fit_curves_configured(outcomes, model="m", corruption="c", binning=binning,
                                bootstrap=bootstrap, seed=3, label_classes=1000)
    expected = fit_curves(outcomes, model="m", corruption="c", bins=10, min_count=5, n_boot=20,
                          seed=3, min_coverage=0.4, min_units=8, right_anchor="none",
                          label_classes=1000)
    for a, b in zip(got, expected, strict=True):
        assert a.equals(b)


def select_row(table: pa.Table, metric: str, classes: int) -> dict:
    return select(table, metric, classes).to_pylist()[0]


def _outcomes_with_thin_16_class_support(n: int = 2000) -> pa.Table:
    """1000-class labels on every image; 16-class labels only on images whose samples all lie
    at Δv < 0.2 (like motion blur's 16-class row on an image sample without
    categories16_only: few samples, few bins)."""
    rng = np.random.default_rng(0)
    image = np.arange(n) % 100
    dv = np.where(image < 10, rng.uniform(0.0, 0.2, n), rng.uniform(0.0, 1.0, n))
    correct = rng.uniform(size=n) < 0.9 - 0.8 * dv
    labelled16 = image < 10
    return pa.table({
        "sample_id": np.arange(n),
        "image_id": [f"im{i}" for i in image],
        "dv": dv,
        "clean_correct": np.ones(n, bool),
        "correct": correct,
        "consistent": correct,
        "clean_correct16": pa.array(np.ones(n, bool), mask=~labelled16),
        "correct16": pa.array(correct, mask=~labelled16),
        "consistent16": correct,
    })


def test_support_is_counted_per_property_and_thin_curves_get_no_r():
    outcomes = _outcomes_with_thin_16_class_support()
    _, _, metrics = fit_curves(outcomes, model="m", corruption="c", bins=20, min_count=20,
                               n_boot=30, seed=1)
    rows = {(r["metric"], r["classes"]): r for r in metrics.to_pylist()}
    thin = rows[("accuracy", 16)]
    assert thin["bins_present"] == 4 and thin["coverage"] == pytest.approx(0.2)
    assert thin["R"] is None and thin["R_lo"] is None and thin["R_hi"] is None
    assert "4 of 20 Δv bins" in thin["note"] and "binning.min_coverage = 0.5" in thin["note"]
    assert thin["n_samples"] == 200 and thin["resampled"] == "images (10)"
    full = rows[("accuracy", 1000)]
    assert full["coverage"] == 1.0 and full["R"] is not None and full["note"] is None
    assert full["resampled"] == "images (100)" and full["dv_min"] == 0.0
    # a lower threshold reports it
    _, _, lenient = fit_curves(outcomes, model="m", corruption="c", bins=20, min_count=20,
                               n_boot=30, seed=1, min_coverage=0.2)
    assert select_row(lenient, "accuracy", 16)["R"] is not None
    summary = build_summary(metrics)
    assert "R not reported" in select_row(summary, "accuracy", 16)["note"]
    assert "R not reported" in summary_markdown(summary)


def test_few_images_fall_back_to_resampling_samples_and_say_so():
    outcomes = _outcomes_with_thin_16_class_support()
    _, _, metrics = fit_curves(outcomes, model="m", corruption="c", bins=20, min_count=20,
                               n_boot=30, seed=1, min_units=11)
    row = select_row(metrics, "accuracy", 16)
    assert row["resampled"] == "samples (fewer than 11 units; conditional on 10 images)"


def test_replicates_of_two_models_on_the_same_images_are_paired():
    """Same images, same weights: the replicate areas of a model and of a slightly better copy
    move together, so their difference varies far less than two independent draws would."""
    outcomes = _outcomes_with_thin_16_class_support()
    better = outcomes.set_column(
        outcomes.schema.get_field_index("correct"), "correct",
        pa.array(outcomes.column("correct").to_numpy() | (np.arange(outcomes.num_rows) % 7 == 0)))
    areas = []
    for table, model in ((outcomes, "a"), (better, "b")):
        _, replicates, _ = fit_curves(table, model=model, corruption="c", bins=20, min_count=20,
                                      n_boot=60, seed=1)
        areas.append(replicate_areas(replicates, "accuracy", 1000))
    change = areas[1] - areas[0]
    assert np.corrcoef(areas[0], areas[1])[0, 1] > 0.6
    assert np.std(change) < 0.6 * np.sqrt(np.var(areas[0]) + np.var(areas[1]))


def test_the_rates_and_curves_jobs_load_no_module_they_do_not_use():
    """Start-up is most of a rates or curves job at CIFAR scale (about 1 s each): the rates job's
    modules load neither scipy nor torch, the curves job's not scipy.stats (issue 36)."""
    jobs = {"rates": (["vcrbench.core.jobs", "vcrbench.core.tables",
                       "vcrbench.evaluation.outcomes", "vcrbench.vcr.rates"],
                      ("scipy", "torch")),
            "curves": (["vcrbench.core.jobs", "vcrbench.core.tables",
                        "vcrbench.vcr.estimation"], ("scipy.stats", "torch"))}
    for job, (modules, unwanted) in jobs.items():
        code = (f"import sys, importlib\nfor m in {modules!r}: importlib.import_module(m)\n"
                f"print(sorted(set({unwanted!r}) & set(sys.modules)))")
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                             text=True).stdout.strip()
        assert out == "[]", (job, out)
