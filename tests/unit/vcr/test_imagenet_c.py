"""ImageNet-C severity metrics from a hand-made outcomes table, against direct computations."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from vcrbench.curves.resampling import unit_weights
from vcrbench.errors import VcrbenchError
from vcrbench.evaluation.outcomes import sample_outcomes
from vcrbench.vcr.imagenet_c import SCHEMA, SEVERITY_COLUMNS, severity_metrics

N = 60
BINS, MIN_COUNT = 10, 3


def _outcomes(n: int = N, seed: int = 0, labelled: bool = True) -> pa.Table:
    """Outcomes with the columns of :func:`sample_outcomes`; accuracy null on 1 sample in 4."""
    rng = np.random.default_rng(seed)
    has_label = (np.arange(n) % 4 != 3) if labelled else np.zeros(n, bool)

    def masked(values):
        return pa.array(values, pa.bool_(), mask=~has_label)

    return pa.table({
        "sample_id": pa.array(np.arange(n) * 3 + 7, pa.int64()),
        "image_id": [f"im{i // 5}" for i in range(n)],
        "dv": rng.uniform(0.2, 0.9, n),
        "clean_correct": masked(rng.uniform(size=n) < 0.9),
        "correct": masked(rng.uniform(size=n) < 0.6),
        "consistent": pa.array(rng.uniform(size=n) < 0.7, pa.bool_()),
        "clean_correct16": masked(rng.uniform(size=n) < 0.9),
        "correct16": masked(rng.uniform(size=n) < 0.5),
        "consistent16": pa.array(rng.uniform(size=n) < 0.8, pa.bool_()),
    })


def _severities(outcomes: pa.Table) -> pa.Table:
    """Severity i mod 5 + 1 as the ImageNet-C sample has it, in shuffled row order."""
    ids = outcomes.column("sample_id").to_pylist()
    rows = [(sid, i % 5 + 1) for i, sid in enumerate(ids)]
    rows = [rows[i] for i in np.random.default_rng(9).permutation(len(rows))]
    return pa.table({"sample_id": pa.array([r[0] for r in rows], pa.int64()),
                     "severity": pa.array([r[1] for r in rows], pa.int8())})


def _metrics(outcomes: pa.Table, severities: pa.Table | None = None) -> pa.Table:
    return severity_metrics(outcomes, _severities(outcomes) if severities is None else severities,
                            model="m", corruption="frost", bins=BINS, min_count=MIN_COUNT)


def test_columns_match_sample_outcomes():
    # the hand-made table has exactly the columns sample_outcomes produces
    index = pa.table({"image_id": ["a"], "path": ["a"], "label": pa.array([3], pa.int16()),
                      "wnid": [None], "category16": pa.array([2], pa.int8())})
    scored = pa.table({"sample_id": pa.array([0], pa.int64()), "image_id": ["a"], "dv": [0.5]})
    predictions = pa.table({"sample_id": pa.array([0], pa.int64()),
                            "top1": pa.array([3], pa.int16()),
                            "top1_16": pa.array([2], pa.int8()),
                            "p_top1": pa.array([0.5], pa.float32())})
    clean = pa.table({"image_id": ["a"], "top1": pa.array([3], pa.int16()),
                      "top1_16": pa.array([2], pa.int8()), "p_top1": pa.array([0.9],
                                                                             pa.float32())})
    real = sample_outcomes(index, scored, predictions, clean)
    assert real.schema.names == _outcomes().schema.names
    assert real.schema.types == _outcomes().schema.types


def test_per_severity_rates_and_their_mean():
    outcomes = _outcomes()
    table = _metrics(outcomes)
    assert table.schema == SCHEMA
    rows = {(r["metric"], r["classes"]): r for r in table.to_pylist()}
    assert set(rows) == {("accuracy", 1000), ("consistency", 1000), ("accuracy", 16),
                         ("consistency", 16)}
    severity = np.arange(N) % 5 + 1  # by position, independent of the shuffled table
    dv = outcomes.column("dv").to_numpy()
    counts = np.bincount(np.minimum(np.floor(dv * BINS), BINS - 1).astype(int), minlength=BINS)
    cover = np.count_nonzero(counts >= MIN_COUNT) / BINS
    for (metric, classes), column in [
        (("accuracy", 1000), "correct"), (("consistency", 1000), "consistent"),
        (("accuracy", 16), "correct16"), (("consistency", 16), "consistent16"),
    ]:
        values = outcomes.column(column).to_pylist()
        row = rows[(metric, classes)]
        rates = []
        for s, name in zip(range(1, 6), SEVERITY_COLUMNS, strict=True):
            known = [v for v, level in zip(values, severity, strict=True)
                     if level == s and v is not None]
            rates.append(sum(known) / len(known))
            assert row[name] == pytest.approx(rates[-1], abs=1e-12), (metric, classes, s)
        assert row["imagenet_c_mean"] == pytest.approx(sum(rates) / 5, abs=1e-12)
        assert row["imagenet_c_n"] == sum(v is not None for v in values)
        assert row["imagenet_c_coverage"] == pytest.approx(cover)
        assert (row["model"], row["corruption"]) == ("m", "frost")
    assert rows[("accuracy", 16)]["imagenet_c_n"] == 45  # one sample in four has no label


def test_a_severity_without_samples_is_null_and_left_out_of_the_mean():
    outcomes = _outcomes(20)
    severities = pa.table({"sample_id": outcomes.column("sample_id"),
                           "severity": pa.array([1, 2] * 10, pa.int8())})
    row = _metrics(outcomes, severities).to_pylist()[1]  # consistency, 1000
    values = outcomes.column("consistent").to_pylist()
    r1, r2 = np.mean(values[0::2]), np.mean(values[1::2])
    assert (row["rate_s1"], row["rate_s2"]) == (pytest.approx(r1), pytest.approx(r2))
    assert row["rate_s3"] is None and row["rate_s4"] is None and row["rate_s5"] is None
    assert row["imagenet_c_mean"] == pytest.approx((r1 + r2) / 2)


def test_a_sample_without_severity_is_an_error():
    outcomes = _outcomes()
    severities = _severities(outcomes)
    missing = outcomes.column("sample_id")[5].as_py()
    keep = [sid != missing for sid in severities.column("sample_id").to_pylist()]
    with pytest.raises(VcrbenchError, match=f"sample {missing} has outcomes but no severity"):
        _metrics(outcomes, severities.filter(pa.array(keep)))


@pytest.mark.parametrize("bad", [0, 6, -1])
def test_severities_outside_1_to_5_are_an_error(bad):
    outcomes = _outcomes()
    ids = outcomes.column("sample_id").to_pylist()
    levels = [i % 5 + 1 for i in range(N)]
    levels[7] = bad
    severities = pa.table({"sample_id": pa.array(ids, pa.int64()),
                           "severity": pa.array(levels, pa.int8())})
    with pytest.raises(VcrbenchError, match="severities 1 to 5"):
        _metrics(outcomes, severities)


def test_accuracy_rows_are_absent_without_labels():
    table = _metrics(_outcomes(labelled=False))
    keys = [(r["metric"], r["classes"]) for r in table.to_pylist()]
    assert keys == [("consistency", 1000), ("consistency", 16)]


def test_interval_of_the_mean_resamples_images_with_the_curves_weights():
    # 12 images (at least bootstrap.min_units = 10): a slow loop over replicates with the
    # keyed image weights of the run's curves gives the same interval
    outcomes = _outcomes()
    table = severity_metrics(outcomes, _severities(outcomes), model="m", corruption="frost",
                             bins=BINS, min_count=MIN_COUNT, n_boot=300, seed=5)
    row = table.to_pylist()[1]  # consistency, 1000 classes
    assert (row["metric"], row["classes"]) == ("consistency", 1000)
    assert row["imagenet_c_resampled"] == "images (12)"
    images = outcomes.column("image_id").to_pylist()
    names = sorted(set(images))
    weights = unit_weights(5, "images", names, 300)
    values = outcomes.column("consistent").to_pylist()
    severity = np.arange(N) % 5 + 1
    means = []
    for b in range(300):
        w = {name: weights[b, i] for i, name in enumerate(names)}
        rates = []
        for s in range(1, 6):
            num = sum(w[im] * v for im, v, lv in zip(images, values, severity, strict=True)
                      if lv == s)
            den = sum(w[im] for im, lv in zip(images, severity, strict=True) if lv == s)
            if den > 0:
                rates.append(num / den)
        means.append(np.mean(rates) if rates else np.nan)
    lo, hi = np.nanpercentile(means, [2.5, 97.5])
    assert row["imagenet_c_mean_lo"] == pytest.approx(lo, abs=1e-12)
    assert row["imagenet_c_mean_hi"] == pytest.approx(hi, abs=1e-12)
    assert row["imagenet_c_mean_lo"] < row["imagenet_c_mean"] < row["imagenet_c_mean_hi"]


def test_interval_with_too_few_images_resamples_samples_and_says_so():
    outcomes = _outcomes(20)  # 4 images
    row = _metrics(outcomes).to_pylist()[1]
    assert row["imagenet_c_resampled"].startswith("samples (fewer than 10 units")
    assert row["imagenet_c_mean_lo"] <= row["imagenet_c_mean"] <= row["imagenet_c_mean_hi"]
