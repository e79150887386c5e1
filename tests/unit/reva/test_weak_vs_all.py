"""R on the weak set against all images: the difference and its paired interval recomputed by
hand from replicate curves; nulls carry the curves' notes."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from vcrbench.curves.areas import GRID
from vcrbench.reva.weak_vs_all import SCHEMA, weak_vs_all_table

#: reva/r-weak-vs-all.parquet's columns (docs/architecture.md, "Tables").
COLUMNS = ["model", "corruption", "metric", "classes", "R_weak", "R_weak_lo", "R_weak_hi",
           "R_all", "R_all_lo", "R_all_hi", "difference", "difference_lo", "difference_hi",
           "lower_on_weak", "note"]


def _curves(properties):
    """properties: (metric, classes) -> (R, (lo, hi) or None, note, replicate levels); the
    replicate curves are linear in Δv, s_b(v) = level_b · (1 − v / 2), whose exact area is
    0.75 · level_b."""
    metrics, replicates = [], []
    for (metric, classes), (r, interval, note, levels) in properties.items():
        lo, hi = interval or (None, None)
        metrics.append({"metric": metric, "classes": classes, "R": r, "R_lo": lo, "R_hi": hi,
                        "note": note, "resampled": "images (30)"})
        replicates += [{"metric": metric, "classes": classes, "replicate": b,
                        "values": (level * (1 - GRID / 2)).tolist()}
                       for b, level in enumerate(levels)]
    return (pa.Table.from_pylist(metrics),
            pa.Table.from_pylist(replicates, schema=pa.schema([
                ("metric", pa.string()), ("classes", pa.int16()), ("replicate", pa.int32()),
                ("values", pa.list_(pa.float64()))])))


def test_difference_and_its_interval_from_paired_replicates():
    rng = np.random.default_rng(0)
    weak_levels, all_levels = rng.uniform(0.4, 0.7, 50), rng.uniform(0.8, 1.0, 50)
    consistency = rng.uniform(0.9, 1.0, 50)
    weak = _curves({("accuracy", 1000): (0.41, (0.3, 0.5), None, weak_levels),
                    ("consistency", 1000): (0.72, (0.7, 0.74), None, consistency)})
    every = _curves({("accuracy", 1000): (0.68, (0.6, 0.75), None, all_levels),
                     ("consistency", 1000): (0.72, (0.7, 0.74), None, consistency[::-1])})
    table = weak_vs_all_table("m", {"fog": {"weak": weak, "evaluation": every}})
    assert table.schema == SCHEMA and table.column_names == COLUMNS
    first, second = table.to_pylist()
    assert (first["metric"], first["classes"], second["metric"]) == ("accuracy", 1000,
                                                                     "consistency")
    assert (first["R_weak"], first["R_weak_lo"], first["R_all_hi"]) == (0.41, 0.3, 0.75)
    # by hand: replicate b's areas are 0.75 · level_b; the interval is over b of the difference
    difference = [0.75 * w - 0.75 * a for w, a in zip(weak_levels, all_levels, strict=True)]
    assert first["difference"] == pytest.approx(0.41 - 0.68)
    assert first["difference_lo"] == pytest.approx(np.percentile(difference, 2.5))
    assert first["difference_hi"] == pytest.approx(np.percentile(difference, 97.5))
    assert first["lower_on_weak"] is True and first["note"] is None
    assert second["difference"] == 0 and second["lower_on_weak"] is False


def test_a_null_r_gives_a_null_difference_with_the_note():
    weak = _curves({("accuracy", 1000): (None, None, "R not reported: 3 of 20 Δv bins", [0.5])})
    every = _curves({("accuracy", 1000): (0.55, (0.5, 0.6), None, [0.5])})
    row = weak_vs_all_table("m", {"c": {"weak": weak, "evaluation": every}}).to_pylist()[0]
    assert row["R_weak"] is None and row["R_all"] == 0.55
    assert row["difference"] is None and row["difference_lo"] is None
    assert row["lower_on_weak"] is None
    assert row["note"] == "weak: R not reported: 3 of 20 Δv bins"


def test_no_interval_without_the_rs_intervals_and_a_missing_curve_is_said():
    weak = _curves({("accuracy", 1000): (0.4, None, "interval degenerate", [0.5, 0.6]),
                    ("accuracy", 16): (0.5, (0.4, 0.6), None, [0.5, 0.6])})
    every = _curves({("accuracy", 1000): (0.6, (0.5, 0.7), "s(0) free", [0.7, 0.8])})
    rows = weak_vs_all_table("m", {"c": {"weak": weak, "evaluation": every}}).to_pylist()
    assert [(r["metric"], r["classes"]) for r in rows] == [("accuracy", 1000), ("accuracy", 16)]
    first, second = rows
    assert first["difference"] == pytest.approx(-0.2) and first["difference_lo"] is None
    assert first["lower_on_weak"] is None
    assert first["note"] == ("weak: interval degenerate; all: s(0) free; no interval for the "
                             "difference: an R has none")
    assert second["R_weak"] == 0.5 and second["R_all"] is None
    assert second["note"] == "all: no accuracy-16 curve"
