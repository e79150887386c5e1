"""The ImageNet-1k class table and the 16-class (Geirhos et al.) mapping and decision."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from helpers.paths import SHARED_DATA

from vcrbench.data.imagenet import (
    class_names,
    index_of_wnid,
    label_of_filename,
    lemmas,
    wnid_of_index,
    wnid_to_index,
    wnids,
)
from vcrbench.data.imagenet16 import (
    CATEGORIES16,
    WNIDS16,
    category16_of_label,
    decide_16,
    label_to_category16,
    mean_probabilities16,
    member_indices,
)
from vcrbench.errors import VcrbenchError

REFERENCE = SHARED_DATA / "reference"


def test_wnid_table() -> None:
    table = wnids()
    assert len(table) == 1000 and list(table) == sorted(table)
    assert table[0] == "n01440764" and table[-1] == "n15075141"
    assert wnid_to_index()["n02099601"] == 207 == index_of_wnid("n02099601")
    assert wnid_of_index(207) == "n02099601"
    assert class_names()[207] == "golden retriever"
    assert lemmas()[0] == "tench, Tinca tinca"
    assert label_of_filename("/x/n01443537_goldfish.JPEG") == 1
    assert label_of_filename("ILSVRC2012_val_00000001.JPEG") == -1
    with pytest.raises(VcrbenchError):
        index_of_wnid("n00000000")


@pytest.mark.shared
def test_wnid_table_matches_shared_reference() -> None:
    path = REFERENCE / "imagenet-synsets.txt"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    rows = [line.split(" ", 1) for line in path.read_text().splitlines() if line.strip()]
    assert [r[0] for r in rows] == list(wnids())
    assert [r[1] for r in rows] == list(lemmas())


def test_categories_and_table() -> None:
    assert CATEGORIES16 == (
        "airplane", "bear", "bicycle", "bird", "boat", "bottle", "car", "cat", "chair", "clock",
        "dog", "elephant", "keyboard", "knife", "oven", "truck",
    )  # fmt: skip
    members = [w for c in CATEGORIES16 for w in WNIDS16[c]]
    assert len(members) == 207 == len(set(members))
    for category in CATEGORIES16:
        assert list(WNIDS16[category]) == sorted(WNIDS16[category])
        assert all(w in wnid_to_index() for w in WNIDS16[category])
    table = label_to_category16()
    assert table.shape == (1000,) and table.dtype == np.int8 and (table >= 0).sum() == 207
    assert category16_of_label(404) == CATEGORIES16.index("airplane")
    assert category16_of_label(207) == CATEGORIES16.index("dog")
    assert category16_of_label(0) == -1 and category16_of_label(1000) == -1
    assert member_indices("knife") == (499,) == member_indices(13)
    assert len(member_indices("dog")) == 109 and len(member_indices("bird")) == 49


@pytest.mark.shared
def test_table_matches_shared_reference() -> None:
    path = REFERENCE / "imagenet16-categories.json"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    reference = json.loads(path.read_text())
    assert sorted(reference) == list(CATEGORIES16)
    for category in CATEGORIES16:
        assert list(WNIDS16[category]) == sorted(reference[category]["wnids"])
        assert list(member_indices(category)) == sorted(reference[category]["imagenet_indices"])


def test_decide_16_hand_made() -> None:
    p = np.zeros((4, 1000))
    p[0, 207] = 1.0  # golden retriever -> dog
    p[1, 499] = 0.1  # knife: one member with 0.1 ...
    p[1, list(member_indices("dog"))] = 0.9 / 109  # ... beats 0.9 spread over 109 dog classes
    p[2, 0] = 0.9  # tench, in none of the 16 ...
    p[2, 404] = 0.1  # ... so the airplane (one member) wins
    p[3, [281, 282]] = 0.3  # cat: mean 0.6 / 6 = 0.1
    p[3, 385] = 0.15  # elephant: mean 0.15 / 2 = 0.075
    p[3, 0] = 0.25
    decisions = decide_16(p)
    assert decisions.dtype == np.int8 and decisions.shape == (4,)
    assert [CATEGORIES16[d] for d in decisions] == ["dog", "knife", "airplane", "cat"]
    means = mean_probabilities16(p)
    assert means.shape == (4, 16)
    assert means[1, CATEGORIES16.index("knife")] == pytest.approx(0.1)
    assert means[1, CATEGORIES16.index("dog")] == pytest.approx(0.9 / 109)
    np.testing.assert_array_equal(decide_16(torch.from_numpy(p).float()), decisions)


def test_decide_16_rejects_bad_shapes() -> None:
    with pytest.raises(VcrbenchError):
        decide_16(np.zeros((2, 16)))
    with pytest.raises(VcrbenchError):
        member_indices("zebra")
