"""The ranking (score descending, ties by image id, clean-misclassified unranked) and the
weak-robust validation set per class, per 16-class category and over the pool, with auto's
fallbacks and the errors, against a slow hand-written reference."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from vcrbench.data.imagenet16 import CATEGORIES16
from vcrbench.errors import VcrbenchError
from vcrbench.reva.selection import SCHEMA, select_weak

NAMES = [f"cat{k:02d}" for k in range(16)]
#: reva/ranking.parquet's columns (docs/architecture.md, "Tables").
COLUMNS = ["image_id", "group", "group_by", "rank", "score", "clean_correct", "selected"]


def _tables(rows):
    """rows: (image_id, label, category16, score, clean_correct) -> (resilience, pool index)."""
    resilience = pa.table({
        "image_id": [r[0] for r in rows], "label": pa.array([r[1] for r in rows], pa.int16()),
        "wnid": [f"n{r[1]:08d}" for r in rows],
        "category16": pa.array([r[2] for r in rows], pa.int8()),
        "score": pa.array([r[3] for r in rows], pa.float64()),
        "clean_correct": [r[4] for r in rows],
    })
    index = pa.table({
        "image_id": [r[0] for r in rows], "path": [f"/{r[0]}.JPEG" for r in rows],
        "label": pa.array([r[1] for r in rows], pa.int16()),
        "wnid": [f"n{r[1]:08d}" for r in rows],
        "category16": pa.array([r[2] for r in rows], pa.int8()),
    })
    return resilience, index


def _selected(ranking):
    return sorted(r["image_id"] for r in ranking.to_pylist() if r["selected"])


def _reference(rows, size, group_of):
    """The selection, written out: per group the eligible images by (score desc, id); the K
    first of each; the remainder from the next ranks, (rank, score desc, id) first."""
    groups = sorted({group_of(r) for r in rows})
    k = size // len(groups)
    chosen, rest = [], []
    for g in groups:
        ranked = sorted((r for r in rows if group_of(r) == g and r[4]),
                        key=lambda r: (-r[3], r[0]))
        chosen += [r[0] for r in ranked[:k]]
        rest += [(rank, -r[3], r[0]) for rank, r in enumerate(ranked[k:], start=k + 1)]
    chosen += [entry[2] for entry in sorted(rest)[: size - len(chosen)]]
    return sorted(chosen)


def test_ranking_ties_go_by_image_id_and_misclassified_images_get_no_rank():
    rows = [("b", 1, -1, 0.5, True), ("a", 1, -1, 0.5, True), ("c", 1, -1, 0.9, False),
            ("d", 1, -1, 0.1, True), ("e", 2, -1, 0.2, True), ("f", 2, -1, 0.3, True),
            ("g", 2, -1, 0.0, True), ("h", 2, -1, 0.3, False)]
    ranking, weak, text = select_weak(*_tables(rows), size=4, group_by="class")
    assert ranking.schema == SCHEMA and ranking.column_names == COLUMNS
    # class 1: a, b tied at 0.5 (by id), then d; c misclassified; class 2: f, e, g; h unranked
    listed = [(r["image_id"], r["group"], r["rank"], r["selected"]) for r in ranking.to_pylist()]
    assert listed == [
        ("a", "n00000001", 1, True), ("b", "n00000001", 2, True), ("d", "n00000001", 3, False),
        ("c", "n00000001", None, False),
        ("f", "n00000002", 1, True), ("e", "n00000002", 2, True), ("g", "n00000002", 3, False),
        ("h", "n00000002", None, False),
    ]
    assert set(ranking.column("group_by").to_pylist()) == {"class"}
    assert weak.column("image_id").to_pylist() == ["a", "b", "e", "f"]
    assert text == ("4 weakest of 6 eligible (clean-correct) pool images: the 2 weakest of each "
                    "of the 2 classes")
    # a second call, rows shuffled, gives the same tables
    again = select_weak(*_tables(rows[::-1]), size=4, group_by="class")
    assert again[0].equals(ranking) and again[1].equals(weak)


def test_the_weak_index_is_rows_of_the_pool_index_sorted_by_image_id():
    rows = [(f"x{k}", k % 3, -1, float(k % 5), True) for k in (7, 2, 9, 4, 0, 5)]
    resilience, index = _tables(rows)
    _, weak, _ = select_weak(resilience, index, size=3, group_by="class")
    assert weak.schema == index.schema
    ids = weak.column("image_id").to_pylist()
    assert ids == sorted(ids)
    by_id = {r["image_id"]: r for r in index.to_pylist()}
    assert weak.to_pylist() == [by_id[i] for i in ids]


def test_a_remainder_comes_from_the_next_ranks_weakest_first():
    rows = [("a", 1, -1, 0.5, True), ("b", 1, -1, 0.4, True), ("c", 1, -1, 0.1, True),
            ("d", 2, -1, 0.9, True), ("e", 2, -1, 0.8, True), ("f", 2, -1, 0.2, True)]
    ranking, weak, text = select_weak(*_tables(rows), size=5, group_by="class")
    # K = 2 per class (a, b; d, e), then rank 3: f (0.2) before c (0.1)
    assert _selected(ranking) == ["a", "b", "d", "e", "f"] == _reference(rows, 5, lambda r: r[1])
    assert weak.num_rows == 5
    assert "and 1 more from the next ranks" in text


def test_per_category16_with_the_category_names():
    rows = [(f"i{k:02d}", k, k % 16, (k * 7 % 32) / 32, True) for k in range(32)]
    ranking, weak, text = select_weak(*_tables(rows), size=16, group_by="category16")
    assert _selected(ranking) == _reference(rows, 16, lambda r: r[2])
    groups = {r["image_id"]: r["group"] for r in ranking.to_pylist()}
    assert groups["i00"] == CATEGORIES16[0] and groups["i17"] == CATEGORIES16[1]
    assert "the 1 weakest of each of the 16 16-class categories" in text
    named = select_weak(*_tables(rows), size=16, group_by="category16", category_names=NAMES)[0]
    assert set(named.column("group").to_pylist()) == set(NAMES)


def test_over_the_whole_pool():
    rows = [(f"i{k}", k % 4, -1, [0.3, 0.1, 0.3, 0.9, 0.0, 0.2][k], k != 3) for k in range(6)]
    ranking, weak, text = select_weak(*_tables(rows), size=3, group_by="pool")
    assert _selected(ranking) == ["i0", "i2", "i5"]  # i3 is weakest but misclassified
    assert set(ranking.column("group").to_pylist()) == {"pool"}
    assert [r["rank"] for r in ranking.to_pylist()] == [1, 2, 3, 4, 5, None]
    assert text == "3 weakest of 5 eligible (clean-correct) pool images, over the whole pool"


def test_auto_takes_class_then_category16_then_the_pool_and_says_why():
    two_per_class = [(f"i{k:02d}", k // 2, -1, k / 100, True) for k in range(8)]
    ranking, _, text = select_weak(*_tables(two_per_class), size=4)
    assert set(ranking.column("group_by").to_pylist()) == {"class"}
    assert text.endswith("(group_by auto)")

    one_per_class = [(f"i{k:02d}", k, k % 16, k / 100, True) for k in range(32)]
    ranking, _, text = select_weak(*_tables(one_per_class), size=16, category_names=NAMES)
    assert set(ranking.column("group_by").to_pylist()) == {"category16"}
    assert _selected(ranking) == sorted(f"i{k}" for k in range(16, 32))  # the weaker of each
    assert "class: 16 images for 32 classes is fewer than one per class" in text

    no_categories = [(f"i{k}", k, -1 if k < 3 else 0, k / 100, k != 9) for k in range(10)]
    ranking, _, text = select_weak(*_tables(no_categories), size=3, category_names=NAMES)
    assert set(ranking.column("group_by").to_pylist()) == {"pool"}
    assert _selected(ranking) == ["i6", "i7", "i8"]
    assert text == ("3 weakest of 9 eligible (clean-correct) pool images, over the whole pool "
                    "(group_by auto: class: 3 images for 10 classes is fewer than one per "
                    "class; category16: 3 of the 10 pool images belong to none of the 16 "
                    "categories)")


def test_a_class_without_enough_eligible_images_rules_class_out():
    rows = [("a", 1, -1, 0.5, True), ("b", 1, -1, 0.4, True), ("c", 2, -1, 0.9, True),
            ("d", 2, -1, 0.8, False), ("e", 1, -1, 0.3, True)]
    ranking, _, text = select_weak(*_tables(rows), size=4)
    assert set(ranking.column("group_by").to_pylist()) == {"pool"}
    assert _selected(ranking) == ["a", "b", "c", "e"]
    assert ("class: 2 per class needs 2 clean-correct images in each of the 2 classes; 1 have "
            "fewer (the thinnest 1)") in text
    with pytest.raises(VcrbenchError, match=r"reva.weak.group_by is class, but 2 per class"):
        select_weak(*_tables(rows), size=4, group_by="class")


def test_impossible_selections_name_the_key_and_what_to_do():
    rows = [("a", 1, -1, 0.5, True), ("b", 2, -1, 0.4, False), ("c", 2, -1, 0.4, True)]
    with pytest.raises(VcrbenchError, match=r"reva.weak.size is 3 but only 2 of the 3 pool"):
        select_weak(*_tables(rows), size=3)
    with pytest.raises(VcrbenchError, match=r"reva.weak.group_by is category16, but 3 of the 3 "
                                            r"pool images belong to none.*set reva.weak.group_by"
                                            r" to auto"):
        select_weak(*_tables(rows), size=2, group_by="category16")
    with pytest.raises(VcrbenchError, match=r"reva.weak.group_by is class, but 1 images for 2 "
                                            r"classes is fewer than one per class"):
        select_weak(*_tables(rows), size=1, group_by="class")
    with pytest.raises(VcrbenchError, match="reva.weak.group_by must be one of"):
        select_weak(*_tables(rows), size=2, group_by="classes")
    with pytest.raises(VcrbenchError, match="reva.weak.size must be a positive integer"):
        select_weak(*_tables(rows), size=0)
    fifteen = [(f"i{k:02d}", k, k % 15, 0.5, True) for k in range(30)]
    with pytest.raises(VcrbenchError, match=r"1 per category needs 1 clean-correct images in "
                                            r"each of the 16 categories; 1 have fewer"):
        select_weak(*_tables(fifteen), size=16, group_by="category16", category_names=NAMES)
    resilience, index = _tables(rows)
    with pytest.raises(VcrbenchError, match="same images"):
        select_weak(resilience, index.slice(0, 2), size=1)


@pytest.mark.parametrize("seed", range(5))
def test_random_pools_against_the_reference(seed):
    rng = np.random.default_rng(seed)
    rows = [(f"x{k:03d}", int(rng.integers(0, 5)), int(rng.integers(0, 16)),
             float(rng.integers(0, 6)) / 5, bool(rng.random() > 0.2)) for k in range(200)]
    for group_by, group_of, size in (("class", lambda r: r[1], 23),
                                     ("category16", lambda r: r[2], 35),
                                     ("pool", lambda r: 0, 40)):
        ranking, weak, _ = select_weak(*_tables(rows), size=size, group_by=group_by,
                                       category_names=NAMES)
        assert _selected(ranking) == _reference(rows, size, group_of), group_by
        assert weak.num_rows == size
        listed = ranking.to_pylist()
        assert listed == sorted(listed, key=lambda r: (r["group"], r["rank"] is None,
                                                       r["rank"] or 0, r["image_id"]))


def test_cifar10s_ten_classes_without_wnids_give_equal_samples_per_class():
    """A CIFAR-10 pool (labels 0-9, no WNID, no 16-class category): auto chooses the class rule,
    K = size // 10 of each class, the groups named by their label."""
    rng = np.random.default_rng(3)
    rows = [(f"pool/c{k % 10}/{k:04d}", k % 10, -1, float(rng.random()), bool(k % 7))
            for k in range(200)]
    resilience, index = _tables(rows)
    resilience = resilience.set_column(2, "wnid", pa.array([None] * 200, pa.string()))
    index = index.set_column(3, "wnid", pa.array([None] * 200, pa.string()))
    ranking, weak, text = select_weak(resilience, index, size=50)
    assert set(ranking.column("group_by").to_pylist()) == {"class"}
    assert np.bincount(weak.column("label").to_numpy(), minlength=10).tolist() == [5] * 10
    assert _selected(ranking) == _reference(rows, 50, lambda r: r[1])
    assert sorted(set(ranking.column("group").to_pylist())) == [f"class {k}" for k in range(10)]
    assert "the 5 weakest of each of the 10 classes" in text


def _baseline_reference(rows, size, group_of, seed):
    """The random baseline, written out: the weakest-first selection removed, then in every group
    as many of the remaining eligible images as the weak set holds there, by their SHA-256 key
    of ``reva-baseline:<seed>:<id>``."""
    import hashlib

    def key(r):
        return hashlib.sha256(f"reva-baseline:{seed}:{r[0]}".encode()).hexdigest()[:16]

    weak = set(_reference(rows, size, group_of))
    chosen = []
    for g in sorted({group_of(r) for r in rows}):
        quota = sum(1 for r in rows if group_of(r) == g and r[0] in weak)
        drawn = sorted((r for r in rows if group_of(r) == g and r[4] and r[0] not in weak),
                       key=lambda r: (key(r), r[0]))
        chosen += [r[0] for r in drawn[:quota]]
    return sorted(chosen)


@pytest.mark.parametrize("seed", range(3))
def test_the_random_baseline_draws_unselected_clean_correct_images_per_group(seed):
    rng = np.random.default_rng(seed)
    rows = [(f"x{k:03d}", int(rng.integers(0, 4)), int(rng.integers(0, 16)),
             float(rng.integers(0, 6)) / 5, bool(rng.random() > 0.2)) for k in range(200)]
    for group_by, group_of, size in (("class", lambda r: r[1], 22), ("pool", lambda r: 0, 40)):
        weakest, _, _ = select_weak(*_tables(rows), size=size, group_by=group_by)
        ranking, index, text = select_weak(*_tables(rows), size=size, group_by=group_by,
                                           draw="random-unselected", seed=seed)
        drawn = _selected(ranking)
        assert drawn == _baseline_reference(rows, size, group_of, seed), group_by
        assert not set(drawn) & set(_selected(weakest))  # none of the weak set
        per_group = {}  # as many of each group as the weak set, its remainder included
        for r in rows:
            if r[0] in drawn or r[0] in _selected(weakest):
                per_group.setdefault(group_of(r), [0, 0])[r[0] in drawn] += 1
        assert all(weak == baseline for weak, baseline in per_group.values()), per_group
        assert all(r[4] for r in rows if r[0] in drawn)  # clean-correct only
        assert index.column("image_id").to_pylist() == drawn
        # the ranks stay the weakest-first ranks; only the drawn images differ
        assert ranking.drop_columns("selected").equals(weakest.drop_columns("selected"))
        assert text.startswith(f"Random baseline (reva.weak.draw random-unselected, seed {seed})")
        again = select_weak(*_tables(rows[::-1]), size=size, group_by=group_by,
                            draw="random-unselected", seed=seed)
        assert again[0].equals(ranking)  # independent of the pool's row order
    other = select_weak(*_tables(rows), size=22, group_by="class", draw="random-unselected",
                        seed=seed + 10)
    assert _selected(other[0]) != _baseline_reference(rows, 22, lambda r: r[1], seed)


def test_the_random_baseline_needs_as_many_unselected_images_as_the_weak_set_has():
    # class 1 has 3 eligible images: the weak set takes 2, leaving 1 for the baseline's 2
    rows = [("a", 1, -1, 0.5, True), ("b", 1, -1, 0.4, True), ("c", 1, -1, 0.3, True),
            ("d", 2, -1, 0.5, True), ("e", 2, -1, 0.4, True), ("f", 2, -1, 0.3, True),
            ("g", 2, -1, 0.2, True), ("h", 2, -1, 0.1, True)]
    with pytest.raises(VcrbenchError, match=r"reva.weak.draw is random-unselected, but 1 of "
                                            r"the 2 groups .*\(n00000001: 1 for 2\)"):
        select_weak(*_tables(rows), size=4, group_by="class", draw="random-unselected")
    with pytest.raises(VcrbenchError, match="reva.weak.draw must be one of"):
        select_weak(*_tables(rows), size=4, group_by="class", draw="random")
