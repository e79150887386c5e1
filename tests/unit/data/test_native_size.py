"""Data sets at their native size: CIFAR's python version and class folders as index sources,
the native-size prepared store, label spaces, class-balanced subsets, and the refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers.cifar_files import write_cifar10, write_cifar100
from PIL import Image

from vcrbench.data.cifar import CIFAR10_CLASSES, read_cifar_python
from vcrbench.data.config import check_dataset
from vcrbench.data.datasets import (
    IMAGE_SIZE,
    NATIVE,
    build_index,
    dataset_side,
    index_size,
    label_space,
    list_entries,
    prepare_image,
)
from vcrbench.data.prepared import DecodedImages, PreparedImages, write_store
from vcrbench.errors import VcrbenchError


def _block(**keys) -> dict:
    """A dataset block with the schema's defaults."""
    return {"source": "builtin", "path": None, "labels": None, "limit": None, "per_class": None,
            "categories16_only": False, "exclude_categories16": False, "skip_unreadable": False,
            "split": "test", "classes": "imagenet", "size": IMAGE_SIZE, **keys}


def _class_folders(root: Path, sizes: dict[str, list[int]]) -> Path:
    """``root/<class>/<k>.png`` with one random image of each given side per class."""
    rng = np.random.default_rng(3)
    for name, sides in sizes.items():
        (root / name).mkdir(parents=True)
        for k, side in enumerate(sides):
            array = rng.integers(0, 256, (side, side, 3), dtype=np.uint8)
            Image.fromarray(array).save(root / name / f"{k:04d}.png")
    return root


def test_cifar10_index_rows_are_the_pickles(tmp_path: Path) -> None:
    root = write_cifar10(tmp_path)
    table, skipped = build_index("cifar10", str(root), split="test", size=NATIVE)
    data = read_cifar_python(root, "cifar10", "test")
    assert skipped == 0 and index_size(table) == NATIVE
    assert table.column("image_id").to_pylist() == list(data.image_ids)
    assert table.column("label").to_pylist() == data.labels.tolist()
    assert set(table.column("category16").to_pylist()) == {-1}
    for i, path in enumerate(table.column("path").to_pylist()):
        assert path.startswith("cifar10://")
        np.testing.assert_array_equal(prepare_image(path, NATIVE), data.images[i])
    # at 224 px the same image is resized like any photograph (short side 256, centre crop)
    assert prepare_image(table.column("path")[0].as_py()).shape == (224, 224, 3)


def test_cifar100_index_keeps_coarse_labels(tmp_path: Path) -> None:
    root = write_cifar100(tmp_path)
    table, _ = build_index("cifar100", str(root), split="train", size=NATIVE)
    data = read_cifar_python(root, "cifar100", "train")
    assert table.column("label").to_pylist() == data.labels.tolist()
    assert table.column("coarse_label").to_pylist() == data.coarse_labels.tolist()


def test_native_store_round_trip(tmp_path: Path) -> None:
    root = write_cifar10(tmp_path)
    table, _ = build_index("cifar10", str(root), split="train", size=NATIVE)
    store = tmp_path / "index-prepared.npy"
    write_store(table.column("path").to_pylist(), store, threads=2, size=NATIVE)
    prepared = PreparedImages(store, table)
    data = read_cifar_python(root, "cifar10", "train")
    assert prepared.image_shape == (32, 32, 3)
    np.testing.assert_array_equal(prepared.all(), data.images)
    ids = [data.image_ids[5], data.image_ids[0]]
    np.testing.assert_array_equal(prepared.images(ids), data.images[[5, 0]])
    np.testing.assert_array_equal(DecodedImages(table).images(ids), data.images[[5, 0]])


def test_store_of_another_size_is_refused(tmp_path: Path) -> None:
    root = write_cifar10(tmp_path)
    table, _ = build_index("cifar10", str(root), split="test", size=NATIVE)
    store = tmp_path / "index-prepared.npy"
    np.save(store, np.zeros((table.num_rows, 32, 32, 3), np.uint8))
    assert PreparedImages(store, table).image_shape == (32, 32, 3)
    for shape in ((224, 224, 3), (32, 16, 3)):  # a 224 px store of a native index, not square
        np.save(store, np.zeros((table.num_rows, *shape), np.uint8))
        with pytest.raises(VcrbenchError, match="delete the store"):
            PreparedImages(store, table)
    table_224, _ = build_index("cifar10", str(root), split="test")
    np.save(store, np.zeros((table.num_rows, 32, 32, 3), np.uint8))
    with pytest.raises(VcrbenchError, match="delete the store"):
        PreparedImages(store, table_224)


def test_class_folders_label_by_cifar10_class(tmp_path: Path) -> None:
    root = _class_folders(tmp_path / "test", {"cat": [32, 32], "airplane": [32], "truck": [32]})
    table, _ = build_index("imagefolder", str(root), classes="cifar10", size=NATIVE)
    labels = dict(zip(table.column("image_id").to_pylist(), table.column("label").to_pylist(),
                      strict=True))
    assert labels == {"airplane/0000": 0, "cat/0000": 3, "cat/0001": 3, "truck/0000": 9}
    assert CIFAR10_CLASSES[labels["truck/0000"]] == "truck"


def test_per_class_takes_the_first_images_of_each_class(tmp_path: Path) -> None:
    root = _class_folders(tmp_path, {"cat": [32] * 3, "dog": [32] * 2, "ship": [32]})
    entries = list_entries("imagefolder", str(root), classes="cifar10", per_class=2)
    assert [e.image_id for e in entries] == ["cat/0000", "cat/0001", "dog/0000", "dog/0001",
                                             "ship/0000"]
    assert len(list_entries("imagefolder", str(root), classes="cifar10", per_class=2,
                            limit=3)) == 3


def test_unknown_class_folder_is_refused(tmp_path: Path) -> None:
    root = _class_folders(tmp_path, {"cat": [32], "zebra": [32]})
    with pytest.raises(VcrbenchError, match="zebra.*not a CIFAR-10 class"):
        build_index("imagefolder", str(root), classes="cifar10", size=NATIVE)


def test_mixed_sizes_in_a_native_set_are_refused_naming_the_file(tmp_path: Path) -> None:
    root = _class_folders(tmp_path, {"cat": [32, 40]})
    with pytest.raises(VcrbenchError, match=r"0001\.png: image is 40x40 px but .* is 32x32"):
        build_index("imagefolder", str(root), classes="cifar10", size=NATIVE)
    # a non-square image is refused too, and skip_unreadable does not hide a size problem
    Image.fromarray(np.zeros((32, 48, 3), np.uint8)).save(root / "cat" / "0000.png")
    with pytest.raises(VcrbenchError, match="square"):
        build_index("imagefolder", str(root), classes="cifar10", size=NATIVE,
                    skip_unreadable=True)


def test_dataset_side_and_label_space(tmp_path: Path) -> None:
    root = _class_folders(tmp_path / "f", {"cat": [48]})
    assert dataset_side(_block(source="imagefolder", path=str(root), classes="cifar10",
                               size=NATIVE)) == 48
    assert dataset_side(_block(source="cifar10", path="x", size=NATIVE)) == 32
    assert dataset_side(_block(source="cifar10", path="x")) == 224
    assert label_space(_block(source="cifar100", path="x")).classes == 100
    assert label_space(_block(source="imagefolder", classes="cifar10")).classes == 10
    space = label_space(_block())
    assert (space.name, space.classes, space.has_categories16) == ("imagenet", 1000, True)


def test_config_refusals(tmp_path: Path) -> None:
    with pytest.raises(VcrbenchError, match="holds no cifar-10-batches-py.*download"):
        check_dataset(_block(source="cifar10", path=str(tmp_path)), "dataset")
    with pytest.raises(VcrbenchError, match="path is not set"):
        check_dataset(_block(source="cifar100"), "dataset")
    write_cifar10(tmp_path)
    check_dataset(_block(source="cifar10", path=str(tmp_path)), "dataset")
    with pytest.raises(VcrbenchError, match="classes is for imagefolder"):
        check_dataset(_block(source="cifar10", path=str(tmp_path), classes="cifar10"), "dataset")
    with pytest.raises(VcrbenchError, match="no 16-class category"):
        check_dataset(_block(source="cifar10", path=str(tmp_path), categories16_only=True),
                      "dataset")
