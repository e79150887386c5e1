"""CIFAR-10 and CIFAR-100 at their own resolution (32 x 32 RGB), as users download them.

Two readers return the same :class:`CifarSplit`:

- :func:`read_cifar_python`: the standard "python version" (Krizhevsky 2009):
  ``cifar-10-batches-py/{data_batch_1..5, test_batch, batches.meta}`` and
  ``cifar-100-python/{train, test, meta}``, pickles whose ``data`` is (N, 3072) uint8 in
  channel-planar order (1024 red, 1024 green, 1024 blue values, each row-major). CIFAR-100 has
  100 fine labels (the labels used) and 20 coarse labels (kept as ``coarse_labels``).
- :func:`read_cifar_folder`: a class-folder copy, ``<root>/<split>/<class>/<file>`` (the shared
  JPEG re-encoding of CIFAR-10 in ``../shared/data/cifar10``); labels are the class's index in
  the canonical class order, files are read in sorted name order.

Image ids are stable and name the split and the position: ``train-00000`` … ``train-49999`` and
``test-00000`` … ``test-09999`` for the pickles (the order of the batch files), and
``<split>/<class>/<file stem>`` for folders.

Every problem (a missing batch file, a pickle of the wrong shape, a label outside the classes, an
image of another size) is a :class:`~vcrbench.errors.VcrbenchError` naming the file and what to do.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from vcrbench.errors import VcrbenchError

#: Side of a CIFAR image (px).
CIFAR_SIZE = 32
#: CIFAR-10's classes in label order (``batches.meta``'s ``label_names``).
CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse",
                   "ship", "truck")
SPLITS = ("train", "test")
_LAYOUT = {
    "cifar10": {"folder": "cifar-10-batches-py", "meta": "batches.meta",
                "train": tuple(f"data_batch_{i}" for i in range(1, 6)), "test": ("test_batch",),
                "classes": 10, "sizes": {"train": 50_000, "test": 10_000}},
    "cifar100": {"folder": "cifar-100-python", "meta": "meta", "train": ("train",),
                 "test": ("test",), "classes": 100, "sizes": {"train": 50_000, "test": 10_000}},
}
_DOWNLOAD = ("download the python version from https://www.cs.toronto.edu/~kriz/cifar.html "
             "and unpack it (tar xzf) so that {path} exists")


@dataclass(frozen=True)
class CifarSplit:
    """One split of a CIFAR data set.

    Attributes:
        images: (N, 32, 32, 3) uint8 RGB.
        labels: (N,) int64 class indices in ``[0, len(classes))``.
        image_ids: N stable ids, unique.
        classes: class names in label order.
        coarse_labels: (N,) int64 CIFAR-100 superclass indices, or None.
        coarse_classes: the 20 superclass names, or None.
    """

    images: np.ndarray
    labels: np.ndarray
    image_ids: tuple[str, ...]
    classes: tuple[str, ...]
    coarse_labels: np.ndarray | None = None
    coarse_classes: tuple[str, ...] | None = None

    def __len__(self) -> int:
        return len(self.labels)


def cifar_folder(root: str | Path, dataset: str) -> Path:
    """The folder of the python version of ``dataset`` under ``root`` (or ``root`` itself)."""
    layout = _layout(dataset)
    root = Path(root)
    return root if root.name == layout["folder"] else root / layout["folder"]


def _layout(dataset: str) -> dict:
    if dataset not in _LAYOUT:
        raise VcrbenchError(f"unknown CIFAR data set {dataset!r}; choose cifar10 or cifar100")
    return _LAYOUT[dataset]


def _check_split(split: str) -> None:
    if split not in SPLITS:
        raise VcrbenchError(f"unknown CIFAR split {split!r}; choose train or test")


def _load_pickle(path: Path) -> dict:
    if not path.is_file():
        raise VcrbenchError(f"CIFAR file {path} is missing; " + _DOWNLOAD.format(path=path))
    try:
        with path.open("rb") as handle:
            content = pickle.load(handle, encoding="bytes")
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError) as error:
        raise VcrbenchError(
            f"CIFAR file {path} is not a readable pickle ({error}); download it again"
        ) from error
    if not isinstance(content, dict):
        raise VcrbenchError(f"CIFAR file {path} holds a {type(content).__name__}, not a dict; "
                            "download it again")
    return {key.decode() if isinstance(key, bytes) else key: value
            for key, value in content.items()}


def _names(meta: dict, key: str, path: Path, expected: int) -> tuple[str, ...]:
    if key not in meta:
        raise VcrbenchError(f"CIFAR meta file {path} has no {key!r}; download it again")
    names = tuple(n.decode() if isinstance(n, bytes) else str(n) for n in meta[key])
    if len(names) != expected:
        raise VcrbenchError(f"CIFAR meta file {path}: {key!r} lists {len(names)} classes, "
                            f"expected {expected}")
    return names


def _labels(batch: dict, key: str, path: Path, n: int, classes: int) -> np.ndarray:
    if key not in batch:
        raise VcrbenchError(f"CIFAR file {path} has no {key!r} entry; download it again")
    labels = np.asarray(batch[key])
    if labels.shape != (n,) or not np.issubdtype(labels.dtype, np.integer):
        raise VcrbenchError(f"CIFAR file {path}: {key!r} has shape {labels.shape} "
                            f"({labels.dtype}), expected {n} integer labels")
    bad = np.flatnonzero((labels < 0) | (labels >= classes))
    if bad.size:
        raise VcrbenchError(f"CIFAR file {path}: label {int(labels[bad[0]])} at row {bad[0]} is "
                            f"outside the {classes} classes (0–{classes - 1}); download it again")
    return labels.astype(np.int64)


def read_cifar_python(root: str | Path, dataset: str, split: str) -> CifarSplit:
    """Read one split of the python version of CIFAR-10 or CIFAR-100.

    Args:
        root: the folder holding ``cifar-10-batches-py`` / ``cifar-100-python``, or that folder.
        dataset: ``cifar10`` or ``cifar100``.
        split: ``train`` or ``test``.
    """
    layout = _layout(dataset)
    _check_split(split)
    folder = cifar_folder(root, dataset)
    if not folder.is_dir():
        raise VcrbenchError(f"CIFAR folder {folder} is missing; " + _DOWNLOAD.format(path=folder))
    meta_path = folder / layout["meta"]
    meta = _load_pickle(meta_path)
    n_classes = layout["classes"]
    fine_key = "label_names" if dataset == "cifar10" else "fine_label_names"
    classes = _names(meta, fine_key, meta_path, n_classes)
    coarse_classes = (None if dataset == "cifar10"
                      else _names(meta, "coarse_label_names", meta_path, 20))
    images, labels, coarse = [], [], []
    for name in layout[split]:
        path = folder / name
        batch = _load_pickle(path)
        data = np.asarray(batch.get("data"))
        if data.ndim != 2 or data.shape[1] != 3 * CIFAR_SIZE**2 or data.dtype != np.uint8:
            raise VcrbenchError(
                f"CIFAR file {path}: 'data' has shape {data.shape} ({data.dtype}), expected "
                f"(N, {3 * CIFAR_SIZE**2}) uint8 rows of 32 x 32 RGB images; download it again"
            )
        n = data.shape[0]
        images.append(data.reshape(n, 3, CIFAR_SIZE, CIFAR_SIZE).transpose(0, 2, 3, 1))
        if dataset == "cifar10":
            labels.append(_labels(batch, "labels", path, n, n_classes))
        else:
            labels.append(_labels(batch, "fine_labels", path, n, n_classes))
            coarse.append(_labels(batch, "coarse_labels", path, n, 20))
    all_images = np.ascontiguousarray(np.concatenate(images))
    ids = tuple(f"{split}-{i:05d}" for i in range(len(all_images)))
    return CifarSplit(
        images=all_images, labels=np.concatenate(labels), image_ids=ids, classes=classes,
        coarse_labels=np.concatenate(coarse) if coarse else None, coarse_classes=coarse_classes,
    )


def read_cifar_folder(root: str | Path, split: str,
                      classes: tuple[str, ...] = CIFAR10_CLASSES) -> CifarSplit:
    """Read ``<root>/<split>/<class>/<file>`` images (32 x 32 each) in class, then name order."""
    _check_split(split)
    folder = Path(root) / split
    if not folder.is_dir():
        raise VcrbenchError(f"CIFAR image folder {folder} is missing; expected "
                            f"<root>/{split}/<class>/<image> with classes {', '.join(classes)}")
    unknown = sorted(p.name for p in folder.iterdir() if p.is_dir() and p.name not in classes)
    if unknown:
        raise VcrbenchError(f"{folder} has class folders {unknown} outside the classes "
                            f"{', '.join(classes)}; remove them or pass their names")
    images, labels, ids = [], [], []
    for label, name in enumerate(classes):
        class_folder = folder / name
        files = sorted(class_folder.iterdir()) if class_folder.is_dir() else []
        for path in files:
            images.append(_read_small_image(path))
            labels.append(label)
            ids.append(f"{split}/{name}/{path.stem}")
    if not images:
        raise VcrbenchError(f"no images under {folder}/<class>/")
    return CifarSplit(images=np.stack(images), labels=np.asarray(labels, dtype=np.int64),
                      image_ids=tuple(ids), classes=tuple(classes))


def _read_small_image(path: Path) -> np.ndarray:
    try:
        with Image.open(path) as image:
            array = np.asarray(image.convert("RGB"), dtype=np.uint8)
    except (UnidentifiedImageError, OSError) as error:
        raise VcrbenchError(f"cannot read image {path} ({error}); remove or replace it") from error
    if array.shape != (CIFAR_SIZE, CIFAR_SIZE, 3):
        raise VcrbenchError(f"image {path} is {array.shape[1]} x {array.shape[0]} px; a CIFAR "
                            f"set holds {CIFAR_SIZE} x {CIFAR_SIZE} images only")
    return array
