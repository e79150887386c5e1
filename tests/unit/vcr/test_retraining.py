"""The retraining table against hand-made summaries and replicate curves."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from vcrbench.curves.areas import GRID
from vcrbench.curves.tables import REPLICATES_SCHEMA
from vcrbench.errors import VcrbenchError
from vcrbench.vcr.retraining import retraining_markdown, retraining_table

NULL_HUMAN = {k: None for k in ("HMRI", "HMRI_lo", "HMRI_hi", "MRSI", "MRSI_lo", "MRSI_hi")}


def _summary_row(model, metric, classes, r, lo, hi, **human):
    return {"model": model, "corruption": "gaussian_noise", "metric": metric, "classes": classes,
            "R": r, "R_lo": lo, "R_hi": hi, **NULL_HUMAN, **human}


def _replicates(levels: list[float]) -> pa.Table:
    """Flat replicate curves: replicate b is levels[b] everywhere, so its area is levels[b]."""
    return pa.Table.from_pylist([
        {"metric": "accuracy", "classes": 1000, "replicate": b, "values": [v] * GRID.size}
        for b, v in enumerate(levels)
    ], schema=REPLICATES_SCHEMA)


def test_change_interval_pairs_replicates_and_verdicts_follow_the_intervals():
    human_before = {"HMRI": 0.60, "HMRI_lo": 0.55, "HMRI_hi": 0.65}
    human_after = {"HMRI": 0.80, "HMRI_lo": 0.66, "HMRI_hi": 0.90}
    summary = pa.Table.from_pylist([
        _summary_row("base", "accuracy", 1000, 0.50, 0.45, 0.55),
        _summary_row("tuned", "accuracy", 1000, 0.70, 0.66, 0.74),
        _summary_row("base", "accuracy", 16, 0.60, 0.5, 0.7, **human_before),
        _summary_row("tuned", "accuracy", 16, 0.65, 0.55, 0.75, **human_after),
    ])
    levels = np.linspace(0, 1, 101)
    replicates = {("base", "gaussian_noise"): _replicates(list(0.5 + 0.02 * (levels - 0.5))),
                  ("tuned", "gaussian_noise"): _replicates(list(0.7 + 0.02 * (levels - 0.5)))}
    rows = retraining_table(summary, [("tuned", "base")], replicates).to_pylist()
    by = {(r["classes"], r["quantity"]): r for r in rows}
    assert set(by) == {(1000, "R"), (16, "R"), (16, "HMRI")}
    r = by[(1000, "R")]
    assert r["change"] == pytest.approx(0.2)
    # paired replicates differ by exactly 0.2 each: the interval collapses on it
    assert r["change_lo"] == pytest.approx(0.2) and r["change_hi"] == pytest.approx(0.2)
    assert r["verdict"] == "higher"
    # 16-class replicates are absent: no change interval, no verdict for R
    assert by[(16, "R")]["change_lo"] is None and by[(16, "R")]["verdict"] is None
    # HMRI intervals [0.55, 0.65] and [0.66, 0.90] do not overlap
    assert by[(16, "HMRI")]["verdict"] == "higher"
    text = retraining_markdown(retraining_table(summary, [("tuned", "base")], replicates))
    assert "0.500 → 0.700 (+0.200 [+0.200, +0.200])" in text
    assert "HMRI_a" in text and "MRSI_a" not in text


def test_a_cifar_table_has_the_r_columns_of_its_ten_classes():
    summary = pa.Table.from_pylist([
        _summary_row("trained:net", "accuracy", 10, 0.50, 0.45, 0.55),
        _summary_row("finetuned:ft", "accuracy", 10, 0.60, 0.55, 0.65),
        _summary_row("trained:net", "consistency", 10, 0.70, 0.65, 0.75),
        _summary_row("finetuned:ft", "consistency", 10, 0.72, 0.67, 0.77),
    ])
    replicates = {(m, "gaussian_noise"): pa.Table.from_pylist([
        {"metric": metric, "classes": 10, "replicate": b, "values": [level + b * 1e-3] * GRID.size}
        for metric, level in (("accuracy", a), ("consistency", p)) for b in range(50)
    ], schema=REPLICATES_SCHEMA) for m, a, p in (("trained:net", 0.5, 0.7),
                                                  ("finetuned:ft", 0.6, 0.72))}
    table = retraining_table(summary, [("finetuned:ft", "trained:net")], replicates)
    assert set(table.column("classes").to_pylist()) == {10}
    text = retraining_markdown(table)
    header = text.splitlines()[0]
    assert "R_a" in header and "R_p" in header and "(16)" not in header
    assert "0.500 → 0.600 (+0.100 [+0.100, +0.100])" in text
    assert "0.700 → 0.720 (+0.020 [+0.020, +0.020])" in text


def test_overlapping_hmri_intervals_are_within_and_missing_models_are_errors():
    summary = pa.Table.from_pylist([
        _summary_row("base", "accuracy", 16, 0.6, 0.5, 0.7, HMRI=0.6, HMRI_lo=0.5, HMRI_hi=0.7),
        _summary_row("tuned", "accuracy", 16, 0.6, 0.5, 0.7, HMRI=0.65, HMRI_lo=0.6, HMRI_hi=0.8),
    ])
    replicates = {(m, "gaussian_noise"): _replicates([]) for m in ("base", "tuned")}
    rows = retraining_table(summary, [("tuned", "base")], replicates).to_pylist()
    assert [r["verdict"] for r in rows if r["quantity"] == "HMRI"] == ["within"]
    with pytest.raises(VcrbenchError, match="no rows for model 'other'"):
        retraining_table(summary, [("other", "base")], replicates)
