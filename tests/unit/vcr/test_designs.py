"""Paired differences of R between sampling designs, against a slow obvious reference."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from vcrbench.core.properties import select
from vcrbench.curves.areas import GRID
from vcrbench.errors import VcrbenchError
from vcrbench.vcr.designs import design_differences
from vcrbench.vcr.estimation import fit_curves

FIT = {"bins": 8, "min_count": 5, "n_boot": 40, "seed": 3, "label_classes": 10}


def _outcomes(n: int, slope: float, seed: int, images: int = 30) -> pa.Table:
    """Outcomes of ``n`` samples on ``images`` images (sample i on image i mod images): right
    with probability 1 − slope · Δv; the clean image always right."""
    rng = np.random.default_rng(seed)
    dv = rng.uniform(0, 1, n)
    ok = rng.uniform(0, 1, n) < 1 - slope * dv
    true = pa.array(np.ones(n, bool))
    return pa.table({
        "sample_id": pa.array(range(n), pa.int64()),
        "image_id": [f"im{i % images}" for i in range(n)],
        "dv": dv,
        "clean_correct": true, "correct": pa.array(ok), "consistent": pa.array(ok),
        "clean_correct16": pa.nulls(n, pa.bool_()), "correct16": pa.nulls(n, pa.bool_()),
        "consistent16": pa.array(ok),
    })


def _reference(a: pa.Table, b: pa.Table, metric: str) -> tuple[float, float, float]:
    """R_b − R_a and its paired 95 % interval the slow way: each design fitted on its own,
    each replicate curve integrated by the trapezoid rule, the differences sorted one by one."""
    areas = []
    for table in (a, b):
        _, replicates, metrics = fit_curves(table, model="model", corruption="c",
                                            bins=FIT["bins"], min_count=FIT["min_count"],
                                            n_boot=FIT["n_boot"], seed=FIT["seed"],
                                            label_classes=10)
        rows = select(replicates, metric, 10).to_pylist()
        curves = {r["replicate"]: r["values"] for r in rows}
        per_replicate = []
        for k in range(FIT["n_boot"]):
            values = curves[k]
            per_replicate.append(sum((GRID[j + 1] - GRID[j]) * (values[j] + values[j + 1]) / 2
                                     for j in range(len(GRID) - 1)))
        areas.append((select(metrics, metric, 10).column("R")[0].as_py(), per_replicate))
    differences = sorted(y - x for x, y in zip(areas[0][1], areas[1][1], strict=True))
    return (areas[1][0] - areas[0][0], float(np.percentile(differences, 2.5)),
            float(np.percentile(differences, 97.5)))


def _row(table: pa.Table, design: str, metric: str) -> dict:
    rows = [r for r in table.to_pylist() if r["design"] == design and r["metric"] == metric]
    assert len(rows) == 1
    return rows[0]


def test_differences_match_a_slow_reference():
    linear, visual = _outcomes(600, 0.5, 1), _outcomes(600, 0.9, 2)
    table = design_differences({"linear": linear, "visual": visual}, corruption="c", **FIT)
    for metric in ("accuracy", "consistency"):
        row = _row(table, "visual", metric)
        difference, lo, hi = _reference(linear, visual, metric)
        assert row["difference"] == pytest.approx(difference, abs=1e-12)
        # the trapezoid rule on the grid against the exact areas of the tabulated curves
        assert row["difference_lo"] == pytest.approx(lo, abs=1e-3)
        assert row["difference_hi"] == pytest.approx(hi, abs=1e-3)
        assert row["verdict"] == "lower"  # true R 0.75 against 0.55, far outside the noise
        base = _row(table, "linear", metric)
        assert (base["difference"], base["difference_lo"], base["difference_hi"]) == (0, 0, 0)


def test_identical_designs_differ_by_exactly_zero():
    linear = _outcomes(400, 0.6, 5)
    table = design_differences({"linear": linear, "visual": linear, "adaptive": linear},
                               corruption="c", **FIT)
    assert table.num_rows == 6
    for row in table.to_pylist():
        assert (row["difference"], row["difference_lo"], row["difference_hi"]) == (0.0, 0.0, 0.0)
        assert row["verdict"] == "within"


def test_replicates_are_paired_on_images():
    """Design b holds design a's samples with 5 % of the outcomes flipped: the paired interval
    of the difference is far narrower than one of independent replicates (another seed for one
    design), which carries the whole image-to-image spread of both."""
    from vcrbench.curves.tables import replicate_areas

    a = _outcomes(900, 0.5, 7)
    ok = a.column("correct").to_numpy(zero_copy_only=False)
    flip = np.random.default_rng(8).uniform(0, 1, ok.size) < 0.05
    b = a.set_column(a.schema.get_field_index("correct"), "correct", pa.array(ok ^ flip))
    paired = _row(design_differences({"linear": a, "visual": b}, corruption="c", **FIT),
                  "visual", "accuracy")
    areas = [replicate_areas(fit_curves(t, model="model", corruption="c", bins=8, min_count=5,
                                        n_boot=40, seed=s, label_classes=10)[1], "accuracy", 10)
             for t, s in ((a, 3), (b, 4))]
    unpaired = np.percentile(areas[1] - areas[0], [2.5, 97.5])
    width = paired["difference_hi"] - paired["difference_lo"]
    assert 0 < width < 0.5 * (unpaired[1] - unpaired[0])


def test_designs_on_different_images_are_refused():
    a = _outcomes(200, 0.5, 1)
    b = a.set_column(1, "image_id", pa.array([f"im{(i + 1) % 30}" for i in range(200)]))
    with pytest.raises(VcrbenchError, match="different images"):
        design_differences({"linear": a, "visual": b}, corruption="c", **FIT)
    with pytest.raises(VcrbenchError, match="sample ids"):
        design_differences({"linear": a, "visual": a.slice(50)}, corruption="c", **FIT)
    with pytest.raises(VcrbenchError, match="at least two"):
        design_differences({"linear": a}, corruption="c", **FIT)
    with pytest.raises(VcrbenchError, match="reference design"):
        design_differences({"visual": a, "adaptive": a}, corruption="c", **FIT)


def test_a_larger_reference_sample_stays_paired():
    """The reference drawn at a larger N (its first samples the other design's) is accepted;
    with identical outcomes on the shared samples the difference comes from the extra samples
    only, and is 0 when those repeat the shared ones."""
    a = _outcomes(300, 0.5, 1)
    doubled = pa.concat_tables([a, a.set_column(0, "sample_id", pa.array(range(300, 600)))])
    table = design_differences({"linear": doubled, "visual": a}, corruption="c", **FIT)
    row = _row(table, "visual", "accuracy")
    # the same samples twice: the same rates in every bin and replicate, so the same curves
    assert (row["difference"], row["difference_lo"], row["difference_hi"]) == pytest.approx(
        (0, 0, 0), abs=1e-9)
    wrong = a.set_column(1, "image_id", pa.array([f"im{(i + 1) % 30}" for i in range(300)]))
    with pytest.raises(VcrbenchError, match="different images"):
        design_differences({"linear": doubled, "visual": wrong}, corruption="c", **FIT)


def test_thin_support_gives_null_not_a_guess():
    a = _outcomes(400, 0.5, 1)
    dv = a.column("dv").to_numpy()
    thin = a.set_column(2, "dv", pa.array(np.minimum(dv, 0.2)))  # two of eight bins
    table = design_differences({"linear": a, "visual": thin}, corruption="c", **FIT)
    row = _row(table, "visual", "accuracy")
    assert row["R"] is None and row["difference"] is None and row["verdict"] is None
    assert "not reported" in row["note"]
