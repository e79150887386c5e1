"""Small CIFAR data sets written in the real python-version pickle format (byte-string keys, as
the CIFAR authors' Python 2 cPickle wrote them), and the format's pixel definition."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from vcrbench.data.cifar import CIFAR10_CLASSES


def dump_pickle(path: Path, content: dict) -> None:
    """Write a pickle as the CIFAR authors did: byte-string keys (Python 2 cPickle)."""
    with path.open("wb") as handle:
        pickle.dump({k.encode(): v for k, v in content.items()}, handle)


def random_rows(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(0, 256, (n, 3072), dtype=np.uint8)


def reference_image(row: np.ndarray) -> np.ndarray:
    """Pixel (y, x) of channel c is row[c * 1024 + y * 32 + x] (the format's definition)."""
    image = np.zeros((32, 32, 3), np.uint8)
    for c in range(3):
        for y in range(32):
            for x in range(32):
                image[y, x, c] = row[c * 1024 + y * 32 + x]
    return image


def write_cifar10(root: Path, train_per_batch: int = 3, test: int = 4, seed: int = 0) -> Path:
    """``root/cifar-10-batches-py`` with five training batches and a test batch of random
    images and labels; returns ``root``."""
    rng = np.random.default_rng(seed)
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    dump_pickle(folder / "batches.meta", {"label_names": [n.encode() for n in CIFAR10_CLASSES]})
    for name, n in [*((f"data_batch_{i}", train_per_batch) for i in range(1, 6)),
                    ("test_batch", test)]:
        dump_pickle(folder / name, {"data": random_rows(rng, n),
                                    "labels": list(rng.integers(0, 10, n)),
                                    "batch_label": name.encode()})
    return root


def write_cifar100(root: Path, train: int = 6, test: int = 2, seed: int = 1) -> Path:
    """``root/cifar-100-python`` with random images, fine and coarse labels; returns ``root``."""
    rng = np.random.default_rng(seed)
    folder = root / "cifar-100-python"
    folder.mkdir(parents=True)
    dump_pickle(folder / "meta", {"fine_label_names": [f"f{i}".encode() for i in range(100)],
                                  "coarse_label_names": [f"c{i}".encode() for i in range(20)]})
    for name, n in (("train", train), ("test", test)):
        dump_pickle(folder / name, {"data": random_rows(rng, n),
                                    "fine_labels": list(rng.integers(0, 100, n)),
                                    "coarse_labels": list(rng.integers(0, 20, n))})
    return root


def cifar_run_config(root: Path, **changes) -> dict:
    """A run config on the CIFAR-10 python version under ``root`` (:func:`write_cifar10`): its
    test split at 32 px evaluated with fastnet trained on its training split; ``changes``
    replace top-level keys."""
    data = {"source": "cifar10", "path": str(root), "size": "native"}
    config = {
        "dataset": {**data, "split": "test"},
        "train": [{"name": "net", "architecture": "fastnet", "preset": "fast",
                   "data": {**data, "split": "train"}}],
        "models": ["trained:net"],
        "corruptions": ["gaussian_noise"],
    }
    config.update(changes)
    return config


def write_two_class_folder(root: Path, n: int, offset: int) -> Path:
    """``root/<class>/NNNN.png`` 32 px images of two CIFAR-10 classes: airplane reddish,
    automobile bluish (with noise), ``n`` each; file numbers from ``offset``."""
    rng = np.random.default_rng(offset)
    for label, colour in ((0, (200, 60, 60)), (1, (60, 60, 200))):
        folder = root / CIFAR10_CLASSES[label]
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(n):
            noise = rng.integers(-50, 51, (32, 32, 3))
            image = np.clip(np.array(colour) + noise, 0, 255).astype(np.uint8)
            Image.fromarray(image).save(folder / f"{offset + i:04d}.png")
    return root


def toy_colour_data(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` 32 px uint8 images (N, 32, 32, 3) of three classes that differ in their mean
    colour, plus noise, and their int64 labels (seed 3)."""
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 3, n)
    images = rng.normal(128, 30, (n, 32, 32, 3))
    images[np.arange(n), :, :, labels] += 60
    return (torch.as_tensor(np.clip(images, 0, 255).astype(np.uint8)),
            torch.as_tensor(labels, dtype=torch.int64))
