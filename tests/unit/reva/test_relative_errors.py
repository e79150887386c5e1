"""Clean error, uCE (Eq. 7), adversarial error (Eq. 5), their means (Eq. 6, 8) and relative
errors (Eq. 3, 4, continuous) against a slow reference: a loop over samples with the keyed
image weights the curves use (vcrbench.curves.resampling.unit_weights)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from vcrbench.curves.areas import GRID
from vcrbench.curves.resampling import unit_weights
from vcrbench.errors import VcrbenchError
from vcrbench.reva.relative_errors import (
    adversarial_error,
    clean_error,
    continuous_error,
    mean_error,
    relative_error,
    unnormalised_corruption_error,
)

SEED, B = 11, 40
COMMON = {"seed": SEED, "n_boot": B, "min_units": 10}


def _weights(image_ids, b):
    """Replicate b's weight of every image, as every curve of the run draws it."""
    names = sorted(set(image_ids))
    return dict(zip(names, unit_weights(SEED, "images", names, B)[b], strict=True))


def _rate(samples, w=None):
    """Σ w·wrong / Σ w over (image_id, wrong) samples; unit weights when w is None."""
    num = den = 0.0
    for image_id, wrong in samples:
        weight = 1.0 if w is None else w[image_id]
        num += weight * wrong
        den += weight
    return num / den if den > 0 else np.nan


def _severity_table(n_images=12, seed=0, unlabelled=()):
    """Every image at every severity, errors more likely at higher severities; the samples of
    the images in ``unlabelled`` have ``correct`` null."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(n_images):
        for s in range(1, 6):
            image = f"img{k:02d}"
            correct = None if image in unlabelled else bool(rng.random() > 0.15 * s)
            rows.append({"image_id": image, "severity": s, "correct": correct,
                         "dv": float(rng.random())})
    return pa.Table.from_pylist(rows, schema=pa.schema([
        ("image_id", pa.string()), ("severity", pa.int8()), ("correct", pa.bool_()),
        ("dv", pa.float64())]))


def _reference_uce(table, w=None):
    rows = table.to_pylist()
    return np.mean([_rate([(r["image_id"], not r["correct"]) for r in rows
                           if r["severity"] == s and r["correct"] is not None], w)
                    for s in range(1, 6)])


def _clean_inputs(wrong_images=(1, 4, 9), n=12, prefix="ev"):
    ids = [f"{prefix}{k:02d}" for k in range(n)]
    labels = [k % 7 for k in range(n)]
    index = pa.table({"image_id": ids, "label": pa.array(labels, pa.int16())})
    top1 = [(label + 1) % 7 if k in wrong_images else label for k, label in enumerate(labels)]
    clean = pa.table({"image_id": ids[::-1], "top1": pa.array(top1[::-1], pa.int16())})
    return index, clean


def test_clean_error_and_its_replicates():
    index, clean = _clean_inputs()
    estimate = clean_error(index, clean, **COMMON)
    assert estimate.value == pytest.approx(3 / 12)
    assert (estimate.n_images, estimate.n_samples, estimate.note) == (12, 12, None)
    ids = index.column("image_id").to_pylist()
    wrong = [k in (1, 4, 9) for k in range(12)]
    for b in range(B):
        w = _weights(ids, b)
        assert estimate.replicates[b] == pytest.approx(_rate(zip(ids, wrong, strict=True), w))
    lo, hi = estimate.interval()
    assert (lo, hi) == pytest.approx(tuple(np.percentile(estimate.replicates, [2.5, 97.5])))


def test_clean_error_leaves_unlabelled_images_out_and_needs_every_prediction():
    index, clean = _clean_inputs()
    labels = index.column("label").to_pylist()
    labels[1] = labels[2] = -1  # image 1 was a mistake; now it has no label
    index = index.set_column(1, "label", pa.array(labels, pa.int16()))
    estimate = clean_error(index, clean, **COMMON)
    assert estimate.value == pytest.approx(2 / 10) and estimate.n_images == 10
    assert estimate.note == "2 unlabelled images left out"
    with pytest.raises(VcrbenchError, match="no clean prediction for 1 images"):
        clean_error(index, clean.slice(1), **COMMON)


def test_adversarial_error_treats_a_null_correct_as_missing_not_wrong():
    table = pa.table({"image_id": [f"img{k:02d}" for k in range(14)],
                      "correct": [k % 3 == 0 for k in range(12)] + [None, None],
                      "dv": [k / 20 for k in range(14)]})
    estimate = adversarial_error(table, key=("weak", "pgd"), **COMMON)
    known = [(f"img{k:02d}", k % 3 != 0) for k in range(12)]
    assert estimate.value == pytest.approx(_rate(known)) == pytest.approx(8 / 12)
    assert (estimate.n_images, estimate.n_samples) == (12, 12)
    assert estimate.dv_median == pytest.approx(np.median([k / 20 for k in range(12)]))
    assert estimate.note == "2 samples of unlabelled images left out"
    for b in (0, 13, 39):
        assert estimate.replicates[b] == pytest.approx(
            _rate(known, _weights([i for i, _ in known], b)))


def test_uce_is_the_mean_over_severities_of_the_error_at_each():
    table = _severity_table(unlabelled=("img03",))
    estimate = unnormalised_corruption_error(table, key=("weak", "fog"), **COMMON)
    assert estimate.value == pytest.approx(_reference_uce(table))
    assert (estimate.n_images, estimate.n_samples) == (11, 55)
    ids = table.column("image_id").to_pylist()
    for b in range(B):
        assert estimate.replicates[b] == pytest.approx(_reference_uce(table, _weights(ids, b)))


def test_uce_is_undefined_without_a_severity_and_refuses_stray_severities():
    table = _severity_table()
    no_five = table.filter(pa.array([s != 5 for s in table.column("severity").to_pylist()]))
    estimate = unnormalised_corruption_error(no_five, key=("weak", "fog"), **COMMON)
    assert estimate.value is None and estimate.interval() == (None, None)
    assert "no labelled sample at severities [5]: uCE undefined" in estimate.note
    uniform = table.set_column(1, "severity", pa.array([0] * table.num_rows, pa.int8()))
    with pytest.raises(VcrbenchError, match=r"severities 1-5; got severities \[0\]"):
        unnormalised_corruption_error(uniform, key=("weak", "fog"), **COMMON)


def test_means_average_replicate_by_replicate_and_name_undefined_terms():
    fog = unnormalised_corruption_error(_severity_table(seed=1), key=("w", "fog"), **COMMON)
    snow = unnormalised_corruption_error(_severity_table(seed=2), key=("w", "snow"), **COMMON)
    mce = mean_error({"fog": fog, "snow": snow}, "uCE", B)
    assert mce.value == pytest.approx((fog.value + snow.value) / 2)
    assert np.allclose(mce.replicates, (fog.replicates + snow.replicates) / 2, equal_nan=True)
    assert (mce.n_images, mce.n_samples, mce.note) == (12, 120, None)
    table = _severity_table()
    gone = unnormalised_corruption_error(table.filter(pa.array(
        [s != 2 for s in table.column("severity").to_pylist()])), key=("w", "frost"), **COMMON)
    undefined = mean_error({"fog": fog, "frost": gone}, "uCE", B)
    assert undefined.value is None and undefined.note == "uCE undefined for frost"


def test_relative_error_pairs_numerator_and_clean_error_by_replicate():
    table = _severity_table()
    index, clean = _clean_inputs()
    numerator = unnormalised_corruption_error(table, key=("weak", "fog"), **COMMON)
    baseline = clean_error(index, clean, **COMMON)
    ratio = relative_error(numerator, baseline)
    assert ratio.value == pytest.approx(_reference_uce(table) / 0.25)
    weak_ids = table.column("image_id").to_pylist()
    clean_ids = index.column("image_id").to_pylist()
    clean_samples = [(i, k in (1, 4, 9)) for k, i in enumerate(clean_ids)]
    zero = 0
    for b in range(B):
        top = _reference_uce(table, _weights(weak_ids, b))
        bottom = _rate(clean_samples, _weights(clean_ids, b))
        zero += bottom == 0
        expected = top / bottom if bottom > 0 else np.nan
        assert np.isclose(ratio.replicates[b], expected, equal_nan=True), b
    assert (ratio.note is None) == (zero == 0)
    if zero:
        assert ratio.note == f"{zero} of {B} replicates drew a clean error of 0 and are left " \
                             "out of the interval"
    finite = ratio.replicates[np.isfinite(ratio.replicates)]
    assert ratio.interval() == pytest.approx(tuple(np.percentile(finite, [2.5, 97.5])))


def test_shared_images_share_their_weights():
    """Where the weak set is part of the evaluation set (reva.pool: evaluation), an image has
    the same weight in the numerator and the denominator of replicate b."""
    index, clean = _clean_inputs(prefix="img")
    table = _severity_table()
    baseline = clean_error(index, clean, **COMMON)
    numerator = unnormalised_corruption_error(table, key=("weak", "fog"), **COMMON)
    for b in (0, 5):
        w = _weights(table.column("image_id").to_pylist(), b)
        assert baseline.replicates[b] == pytest.approx(
            _rate([(f"img{k:02d}", k in (1, 4, 9)) for k in range(12)], w))
        assert numerator.replicates[b] == pytest.approx(_reference_uce(table, w))


def test_a_zero_clean_error_leaves_the_relative_error_undefined():
    numerator = unnormalised_corruption_error(_severity_table(), key=("weak", "fog"), **COMMON)
    index, clean = _clean_inputs(wrong_images=())
    baseline = clean_error(index, clean, **COMMON)
    assert baseline.value == 0
    ratio = relative_error(numerator, baseline)
    assert ratio.value is None and ratio.note == "clean error 0: relative error undefined"
    assert ratio.interval() == (None, None)
    undefined = unnormalised_corruption_error(_severity_table().slice(0, 3), key=("w", "x"),
                                              **COMMON)
    assert relative_error(undefined, baseline).note == undefined.note


def test_fewer_images_than_min_units_resample_samples_and_say_so():
    table = _severity_table(n_images=4)
    estimate = unnormalised_corruption_error(table, key=("weak", "fog"), **COMMON)
    assert not estimate.paired
    assert estimate.note == ("interval conditional on the 4 images (fewer than "
                             "bootstrap.min_units = 10): it resamples samples, unpaired")
    lo, hi = estimate.interval()
    assert lo is not None and lo <= estimate.value <= hi
    # the same draw again (keyed by the seed and the names), another for another corruption
    again = unnormalised_corruption_error(table, key=("weak", "fog"), **COMMON)
    other = unnormalised_corruption_error(table, key=("weak", "snow"), **COMMON)
    assert np.array_equal(again.replicates, estimate.replicates, equal_nan=True)
    assert not np.array_equal(other.replicates, estimate.replicates, equal_nan=True)
    index, clean = _clean_inputs()
    ratio = relative_error(estimate, clean_error(index, clean, **COMMON))
    assert not ratio.paired and ratio.note.startswith("interval conditional on the 4 images")
    mce = mean_error({"fog": estimate}, "uCE", B)
    assert mce.note == "the intervals of fog resample samples, conditional on their images"


def _curve(levels, r, note=None, r_lo=0.1, resampled="images (12)", classes=1000):
    """A weak set's accuracy metrics row (``classes`` classes) and replicate curves flat at
    ``levels`` (whose exact areas are the levels)."""
    metrics = pa.Table.from_pylist([{"metric": "accuracy", "classes": classes, "R": r,
                                     "R_lo": None if r is None else r_lo,
                                     "R_hi": None if r is None else 0.9, "note": note,
                                     "resampled": resampled}])
    replicates = pa.table({
        "metric": ["accuracy"] * len(levels),
        "classes": pa.array([classes] * len(levels), pa.int16()),
        "replicate": pa.array(range(len(levels)), pa.int32()),
        "values": [np.full(GRID.size, level).tolist() for level in levels],
    })
    return metrics, replicates


def test_continuous_relative_error_pairs_the_curve_replicates_with_the_clean_error():
    levels = np.linspace(0.3, 0.5, B)
    numerator = continuous_error(*_curve(levels, 0.4), B)
    assert numerator.value == pytest.approx(0.6) and numerator.note is None
    assert numerator.replicates == pytest.approx(1 - levels)
    index, clean = _clean_inputs()
    baseline = clean_error(index, clean, **COMMON)
    ratio = relative_error(numerator, baseline)
    assert ratio.value == pytest.approx(0.6 / 0.25)
    ids = index.column("image_id").to_pylist()
    for b in range(B):
        bottom = _rate([(i, k in (1, 4, 9)) for k, i in enumerate(ids)], _weights(ids, b))
        expected = (1 - levels[b]) / bottom if bottom > 0 else np.nan
        assert np.isclose(ratio.replicates[b], expected, equal_nan=True)


def test_continuous_error_nulls_carry_the_metrics_note():
    null_r = continuous_error(*_curve([0.5, 0.6], None, note="R not reported: 3 of 20 bins"),
                              B)
    assert null_r.value is None
    assert null_r.note == "R_a on the weak set not reported: R not reported: 3 of 20 bins"
    no_interval = continuous_error(*_curve([0.5] * B, 0.5, note="s(0) free", r_lo=None), B)
    assert no_interval.value == pytest.approx(0.5) and no_interval.interval() == (None, None)
    assert no_interval.note == "R_a on the weak set: s(0) free; R_a on the weak set has no " \
                               "interval"
    short = continuous_error(*_curve([0.5] * 5, 0.5, resampled="samples (fewer than 10)"), B)
    assert np.isfinite(short.replicates).sum() == 5 and not short.paired
    assert "has 5 replicates, not 40" in short.note and "unpaired" in short.note
    empty = pa.Table.from_pylist([{"metric": "consistency", "classes": 1000, "R": 0.5,
                                   "R_lo": 0.4, "R_hi": 0.6, "note": None}])
    assert continuous_error(empty, _curve([0.5], 0.5)[1], B).note == \
        "no accuracy curve on the weak set"


def test_continuous_error_reads_the_data_sets_own_label_space():
    """CIFAR-10's curves have 10 classes; ImageNet's 1000 are read before their 16-class rows."""
    levels = np.linspace(0.3, 0.5, B)
    cifar = continuous_error(*_curve(levels, 0.4, classes=10), B)
    assert cifar.value == pytest.approx(0.6) and cifar.replicates == pytest.approx(1 - levels)
    metrics, replicates = _curve(levels, 0.4)
    coarse_metrics, coarse_replicates = _curve(levels * 0 + 0.9, 0.9, classes=16)
    both = continuous_error(pa.concat_tables([coarse_metrics, metrics]),
                            pa.concat_tables([coarse_replicates, replicates]), B)
    assert both.value == pytest.approx(0.6) and both.replicates == pytest.approx(1 - levels)
