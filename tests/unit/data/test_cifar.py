"""CIFAR readers against files written in the real python-version pickle format."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
from helpers.cifar_files import (
    dump_pickle,
    reference_image,
    write_cifar10,
    write_cifar100,
)
from helpers.paths import REPO
from PIL import Image

from vcrbench.data.cifar import (
    CIFAR10_CLASSES,
    read_cifar_folder,
    read_cifar_python,
)
from vcrbench.errors import VcrbenchError

SHARED_CIFAR = REPO.parent / "shared" / "data" / "cifar10"


_dump, _reference_image = dump_pickle, reference_image


@pytest.fixture
def cifar10_root(tmp_path: Path) -> Path:
    return write_cifar10(tmp_path)


@pytest.fixture
def cifar100_root(tmp_path: Path) -> Path:
    return write_cifar100(tmp_path)


def test_cifar10_pixels_labels_and_ids(cifar10_root: Path) -> None:
    train = read_cifar_python(cifar10_root, "cifar10", "train")
    assert train.images.shape == (15, 32, 32, 3) and train.images.dtype == np.uint8
    assert train.image_ids[0] == "train-00000" and train.image_ids[-1] == "train-00014"
    assert train.classes == CIFAR10_CLASSES and train.coarse_labels is None
    with (cifar10_root / "cifar-10-batches-py" / "data_batch_2").open("rb") as handle:
        batch = pickle.load(handle, encoding="bytes")
    np.testing.assert_array_equal(train.images[3], _reference_image(batch[b"data"][0]))
    assert train.labels[3] == batch[b"labels"][0]
    test = read_cifar_python(cifar10_root / "cifar-10-batches-py", "cifar10", "test")
    assert len(test) == 4 and test.image_ids[1] == "test-00001"


def test_cifar100_fine_and_coarse_labels(cifar100_root: Path) -> None:
    train = read_cifar_python(cifar100_root, "cifar100", "train")
    with (cifar100_root / "cifar-100-python" / "train").open("rb") as handle:
        batch = pickle.load(handle, encoding="bytes")
    np.testing.assert_array_equal(train.labels, batch[b"fine_labels"])
    np.testing.assert_array_equal(train.coarse_labels, batch[b"coarse_labels"])
    assert len(train.classes) == 100 and train.coarse_classes[19] == "c19"
    np.testing.assert_array_equal(train.images[5], _reference_image(batch[b"data"][5]))


def test_missing_batch_file_names_it(cifar10_root: Path) -> None:
    (cifar10_root / "cifar-10-batches-py" / "data_batch_4").unlink()
    with pytest.raises(VcrbenchError, match="data_batch_4 is missing; download"):
        read_cifar_python(cifar10_root, "cifar10", "train")


def test_missing_folder_says_how_to_get_it(tmp_path: Path) -> None:
    with pytest.raises(VcrbenchError, match="cifar-100-python is missing.*tar xzf"):
        read_cifar_python(tmp_path, "cifar100", "test")


def test_wrong_shape_is_refused(cifar10_root: Path) -> None:
    _dump(cifar10_root / "cifar-10-batches-py" / "test_batch",
          {"data": np.zeros((4, 3000), np.uint8), "labels": [0, 1, 2, 3]})
    with pytest.raises(VcrbenchError, match=r"test_batch: 'data' has shape \(4, 3000\)"):
        read_cifar_python(cifar10_root, "cifar10", "test")


def test_label_outside_the_classes_is_refused(cifar10_root: Path) -> None:
    _dump(cifar10_root / "cifar-10-batches-py" / "test_batch",
          {"data": np.zeros((4, 3072), np.uint8), "labels": [0, 1, 10, 3]})
    with pytest.raises(VcrbenchError, match="label 10 at row 2 is outside the 10 classes"):
        read_cifar_python(cifar10_root, "cifar10", "test")


def test_not_a_pickle_is_refused(cifar10_root: Path) -> None:
    (cifar10_root / "cifar-10-batches-py" / "test_batch").write_bytes(b"<html>not found")
    with pytest.raises(VcrbenchError, match="not a readable pickle"):
        read_cifar_python(cifar10_root, "cifar10", "test")


def test_unknown_dataset_and_split() -> None:
    with pytest.raises(VcrbenchError, match="cifar10 or cifar100"):
        read_cifar_python(".", "cifar20", "train")
    with pytest.raises(VcrbenchError, match="train or test"):
        read_cifar_python(".", "cifar10", "val")


def test_folder_reader_labels_by_class_order(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    expected = {}
    for name in ("cat", "airplane"):
        (tmp_path / "test" / name).mkdir(parents=True)
        for stem in ("0002", "0001"):
            array = rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)
            Image.fromarray(array).save(tmp_path / "test" / name / f"{stem}.png")
            expected[f"test/{name}/{stem}"] = array
    split = read_cifar_folder(tmp_path, "test")
    assert split.image_ids == ("test/airplane/0001", "test/airplane/0002", "test/cat/0001",
                               "test/cat/0002")
    assert list(split.labels) == [0, 0, 3, 3]
    for image_id, image in zip(split.image_ids, split.images, strict=True):
        np.testing.assert_array_equal(image, expected[image_id])


def test_folder_reader_refuses_another_size(tmp_path: Path) -> None:
    (tmp_path / "train" / "dog").mkdir(parents=True)
    Image.new("RGB", (64, 32)).save(tmp_path / "train" / "dog" / "big.png")
    with pytest.raises(VcrbenchError, match=r"big.png is 64 x 32 px; a CIFAR set holds 32 x 32"):
        read_cifar_folder(tmp_path, "train")


def test_folder_reader_refuses_unknown_class(tmp_path: Path) -> None:
    (tmp_path / "train" / "dragon").mkdir(parents=True)
    with pytest.raises(VcrbenchError, match=r"class folders \['dragon'\] outside the classes"):
        read_cifar_folder(tmp_path, "train")


@pytest.mark.shared
def test_shared_copy_test_split() -> None:
    if not SHARED_CIFAR.is_dir():
        pytest.skip(f"{SHARED_CIFAR} is absent")
    test = read_cifar_folder(SHARED_CIFAR, "test")
    assert test.images.shape == (10_000, 32, 32, 3)
    assert np.bincount(test.labels).tolist() == [1000] * 10
