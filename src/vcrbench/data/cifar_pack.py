"""CIFAR-10's class-folder copy packed to travel, and the train and test splits loaded once and
cached as arrays (the CIFAR benchmarks and ``vcrbench cifar-c``).

``load(source)`` returns ``(train, test)`` :class:`~vcrbench.data.cifar.CifarSplit`s from

- a class-folder copy (``../shared/data/cifar10``);
- a packed file (``.cifarpack.npz``, written by :func:`pack`): every JPEG's bytes after the
  prefix all of them share (the JPEG headers: 623 of the 916 bytes of an image of the shared
  copy), so the whole set travels in about 18 MB to a machine without ``../shared`` and decodes
  to exactly the same pixels; :func:`unfold` writes it back as the class folders, byte for byte
  (for a workflow run there).

Either is decoded once and cached as an uncompressed ``.npz`` with ``cache``, since 60,000
small JPEG decodes take about 20 s.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
from PIL import Image

from vcrbench.data.cifar import CIFAR10_CLASSES, CifarSplit, read_cifar_folder

SPLITS = ("train", "test")


def pack(folder: Path, out: Path) -> None:
    """Pack ``folder/{train,test}/<class>/*.jpg`` into one npz of shared prefix + suffixes."""
    arrays: dict[str, np.ndarray] = {}
    blobs = []
    for split in SPLITS:
        files, labels = [], []
        for label, name in enumerate(CIFAR10_CLASSES):
            for path in sorted((folder / split / name).iterdir()):
                files.append(path)
                labels.append(label)
        blobs += [(split, f.read_bytes()) for f in files]
        arrays[f"{split}_labels"] = np.asarray(labels, np.int64)
        arrays[f"{split}_ids"] = np.asarray([f"{split}/{f.parent.name}/{f.stem}" for f in files])
    prefix = os.path.commonprefix([b for _, b in blobs])
    for split in SPLITS:
        parts = [b[len(prefix):] for s, b in blobs if s == split]
        arrays[f"{split}_offsets"] = np.cumsum([0] + [len(p) for p in parts]).astype(np.int64)
        arrays[f"{split}_bytes"] = np.frombuffer(b"".join(parts), np.uint8)
    arrays["prefix"] = np.frombuffer(prefix, np.uint8)
    np.savez_compressed(out, **arrays)


def unfold(path: Path, folder: Path) -> int:
    """Write a pack's JPEGs back as ``folder/{train,test}/<class>/<id>.jpg``, byte for byte the
    files it was packed from (a workflow config's class-folder copy on a host without
    ``../shared``); returns the number of files."""
    data = np.load(path)
    prefix = data["prefix"].tobytes()
    count = 0
    for split in SPLITS:
        raw, offsets = data[f"{split}_bytes"].tobytes(), data[f"{split}_offsets"]
        for image_id, a, b in zip(data[f"{split}_ids"], offsets[:-1], offsets[1:], strict=True):
            target = folder / f"{image_id}.jpg"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(prefix + raw[a:b])
            count += 1
    return count


def _unpack(path: Path) -> tuple[CifarSplit, CifarSplit]:
    data = np.load(path)
    prefix = data["prefix"].tobytes()
    splits = []
    for split in SPLITS:
        raw, offsets = data[f"{split}_bytes"].tobytes(), data[f"{split}_offsets"]
        images = np.stack([
            np.asarray(Image.open(io.BytesIO(prefix + raw[a:b])).convert("RGB"))
            for a, b in zip(offsets[:-1], offsets[1:], strict=True)])
        splits.append(CifarSplit(images, data[f"{split}_labels"],
                                 tuple(str(i) for i in data[f"{split}_ids"]), CIFAR10_CLASSES))
    return splits[0], splits[1]


def load(source: str | Path, cache: str | Path | None = None) -> tuple[CifarSplit, CifarSplit]:
    """(train, test) of a class folder or a pack; a folder's arrays are cached in ``cache``."""
    source = Path(source)
    if cache is not None and Path(cache).is_file():
        data = np.load(cache)
        return tuple(CifarSplit(data[f"{s}_images"], data[f"{s}_labels"],
                                tuple(str(i) for i in data[f"{s}_ids"]), CIFAR10_CLASSES)
                     for s in SPLITS)
    if source.is_file():
        train, test = _unpack(source)
    else:
        train, test = (read_cifar_folder(source, s) for s in SPLITS)
    if cache is not None:
        Path(cache).parent.mkdir(parents=True, exist_ok=True)
        np.savez(cache, **{f"{s}_{k}": v for s, split in zip(SPLITS, (train, test), strict=True)
                           for k, v in (("images", split.images), ("labels", split.labels),
                                        ("ids", np.asarray(split.image_ids)))})
    return train, test
