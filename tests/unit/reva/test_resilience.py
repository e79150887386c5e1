"""Eq. 1 (misprediction score) and the robustness scores ρ on hand-made probability tables."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from vcrbench.errors import VcrbenchError
from vcrbench.reva.resilience import SCHEMA, misprediction_scores, resilience_table

#: reva/resilience.parquet's columns (docs/architecture.md, "Tables").
COLUMNS = ["image_id", "label", "wnid", "category16", "pool", "clean_top1", "clean_p_top1",
           "clean_correct", "n_neighbours", "n_mispredicted", "rho", "fraction_mispredicted",
           "score", "unstable"]


def _pool(labels=(3, 5, 7), ids=None):
    ids = ids or [f"i{k}" for k in range(len(labels))]
    return pa.table({
        "image_id": ids, "path": [f"/{i}.JPEG" for i in ids],
        "label": pa.array(labels, pa.int16()), "wnid": [f"n{label:08d}" for label in labels],
        "category16": pa.array([-1, 4, 9][: len(labels)], pa.int8()),
    })


def _clean(top1=(3, 5, 1), p=(0.9, 0.8, 0.7), ids=None):
    ids = ids or [f"i{k}" for k in range(len(top1))]
    return pa.table({"image_id": ids, "top1": pa.array(top1, pa.int16()),
                     "p_top1": pa.array(p, pa.float32())})


def _neighbours(rows):
    """rows: (image_id, top1, p_top1); neighbours numbered in order per image."""
    seen: dict[str, int] = {}
    numbers = []
    for image_id, _, _ in rows:
        numbers.append(seen.setdefault(image_id, 0))
        seen[image_id] += 1
    return pa.table({
        "image_id": [r[0] for r in rows], "neighbour": pa.array(numbers, pa.int32()),
        "top1": pa.array([r[1] for r in rows], pa.int16()),
        "p_top1": pa.array([r[2] for r in rows], pa.float32()),
    })


#: Labels 3, 5, 7: i0 always right, i1 two of four wrong, i2 always wrong.
NEIGHBOURS = [
    ("i0", 3, 0.9), ("i0", 3, 0.8), ("i0", 3, 0.7), ("i0", 3, 0.6),
    ("i1", 5, 0.9), ("i1", 2, 0.5), ("i1", 6, 0.25), ("i1", 5, 0.4),
    ("i2", 0, 1.0), ("i2", 0, 0.5), ("i2", 1, 0.75), ("i2", 0, 0.25),
]


def test_misprediction_score_is_zero_when_right_else_the_top1_probability():
    ms = misprediction_scores(np.array([3, 4, 3, 9]), np.array([0.9, 0.6, 0.2, 0.35]),
                              np.array([3, 3, 3, 3]))
    assert ms.dtype == np.float64
    assert ms.tolist() == pytest.approx([0.0, 0.6, 0.0, 0.35])


def test_rho_is_the_mean_misprediction_score_over_the_neighbours():
    table = resilience_table(_pool(), _clean(), _neighbours(NEIGHBOURS), pool="training")
    assert table.schema == SCHEMA and table.column_names == COLUMNS
    rows = {r["image_id"]: r for r in table.to_pylist()}
    # by hand: (1/N) Σ ms, ms = 0 where top1 = label else p_top1
    assert rows["i0"]["rho"] == 0 and not rows["i0"]["unstable"]
    assert rows["i1"]["rho"] == pytest.approx((0 + 0.5 + 0.25 + 0) / 4)
    assert rows["i2"]["rho"] == pytest.approx((1.0 + 0.5 + 0.75 + 0.25) / 4)
    assert [rows[i]["n_mispredicted"] for i in ("i0", "i1", "i2")] == [0, 2, 4]
    assert [rows[i]["fraction_mispredicted"] for i in ("i0", "i1", "i2")] == [0, 0.5, 1]
    assert [rows[i]["clean_correct"] for i in ("i0", "i1", "i2")] == [True, True, False]
    assert rows["i2"]["clean_top1"] == 1 and rows["i2"]["clean_p_top1"] == pytest.approx(0.7)
    assert all(r["score"] == r["rho"] for r in rows.values())
    assert [r["unstable"] for r in rows.values()] == [False, True, True]
    assert set(table.column("n_neighbours").to_pylist()) == {4}
    assert set(table.column("pool").to_pylist()) == {"training"}
    assert table.column("wnid").to_pylist() == ["n00000003", "n00000005", "n00000007"]
    assert table.column("category16").to_pylist() == [-1, 4, 9]


def test_fraction_score_and_its_unstable_threshold():
    table = resilience_table(_pool(), _clean(), _neighbours(NEIGHBOURS), pool="evaluation",
                             score="fraction", unstable_fraction=0.5)
    rows = {r["image_id"]: r for r in table.to_pylist()}
    assert [rows[i]["score"] for i in ("i0", "i1", "i2")] == [0, 0.5, 1]
    # unstable: fraction > 0.5, strictly
    assert [rows[i]["unstable"] for i in ("i0", "i1", "i2")] == [False, False, True]
    assert rows["i1"]["rho"] == pytest.approx(0.1875)  # rho is reported whatever the score


def test_rows_are_sorted_by_image_id_whatever_the_input_order():
    ids = ["c", "a", "b"]
    pool = _pool(ids=ids)
    clean = _clean(ids=["b", "c", "a"], top1=(7, 3, 5))
    neighbours = _neighbours([("b", 7, 0.9), ("a", 1, 0.5), ("c", 2, 0.25)])
    table = resilience_table(pool, clean, neighbours, pool="training")
    assert table.column("image_id").to_pylist() == ["a", "b", "c"]
    # image a has label 5 (second row of the pool), clean top1 5, its neighbour says 1
    assert table.column("label").to_pylist() == [5, 7, 3]
    assert table.column("clean_correct").to_pylist() == [True, True, True]
    assert table.column("rho").to_pylist() == pytest.approx([0.5, 0.0, 0.25])


def test_every_image_needs_the_same_number_of_neighbours():
    uneven = _neighbours([("i0", 3, 0.9), ("i0", 3, 0.9), ("i1", 5, 0.9), ("i1", 5, 0.9),
                          ("i2", 7, 0.9)])
    with pytest.raises(VcrbenchError, match=r"same number N >= 1.*i2"):
        resilience_table(_pool(), _clean(), uneven, pool="training")
    none_for_i1 = _neighbours([("i0", 3, 0.9), ("i2", 7, 0.9)])
    with pytest.raises(VcrbenchError, match=r"same number N >= 1.*i1"):
        resilience_table(_pool(), _clean(), none_for_i1, pool="training")
    with pytest.raises(VcrbenchError, match="same number N >= 1"):
        resilience_table(_pool(), _clean(), _neighbours([]), pool="training")


def test_unlabelled_unknown_and_duplicated_inputs_are_refused_by_name():
    neighbours = _neighbours(NEIGHBOURS)
    with pytest.raises(VcrbenchError, match=r"labelled pool images; 1 have no label: i1"):
        resilience_table(_pool((3, -1, 7)), _clean(), neighbours, pool="training")
    stranger = _neighbours([*NEIGHBOURS[:4], ("x", 1, 0.5)])
    with pytest.raises(VcrbenchError, match=r"not in the pool: x"):
        resilience_table(_pool(), _clean(), stranger, pool="training")
    with pytest.raises(VcrbenchError, match=r"same images.*i2"):
        resilience_table(_pool(), _clean(top1=(3, 5), p=(0.9, 0.8)), neighbours, pool="training")
    twice = neighbours.set_column(1, "neighbour", pa.array([0] * 12, pa.int32()))
    with pytest.raises(VcrbenchError, match="listed twice"):
        resilience_table(_pool(), _clean(), twice, pool="training")
    with pytest.raises(VcrbenchError, match="reva.analyser.score"):
        resilience_table(_pool(), _clean(), neighbours, pool="training", score="margin")
    with pytest.raises(VcrbenchError, match="pool"):
        resilience_table(_pool(), _clean(), neighbours, pool="test")
