"""The prepared-image store: every image of an index decoded and prepared once per run.

Every stage that needs clean pixels (scoring, clean predictions, regenerating corrupted images
for inference, the ImageNet-C and REVa branches) reads them from this store instead of decoding
the files again: a paper-scale run scores 14 corruptions of the same 50,000 images, which
would otherwise be 700,000 JPEG decodes and resizes.

File ``<index>-prepared.npy`` next to its index (``data/index.parquet`` ->
``data/index-prepared.npy``): a NumPy ``.npy`` array of shape ``(N, 224, 224, 3)`` (an index of
native-size images: ``(N, S, S, 3)``, e.g. 32 for CIFAR), uint8 RGB, row ``i`` the
:func:`~vcrbench.data.datasets.prepare_image` of row ``i`` of the index (the index is sorted by
``image_id``). It is raw pixels rather than Parquet so that a job reads
only the rows it needs (memory-mapped, no decompression); 150,528 bytes per image (7.5 GB for
ImageNet's 50,000 validation images). The bytes are a pure function of the image files, so a
re-run writes the same file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pyarrow as pa

from vcrbench.core.files import atomic_write
from vcrbench.core.progress import Progress
from vcrbench.data.datasets import IMAGE_SIZE, NATIVE, index_side, index_size, prepare_image
from vcrbench.errors import VcrbenchError

#: Suffix of a store next to its index: ``<stem>.parquet`` -> ``<stem>-prepared.npy``.
STORE_SUFFIX = "-prepared.npy"
#: Shape of one stored image of a 224 px index.
IMAGE_SHAPE = (IMAGE_SIZE, IMAGE_SIZE, 3)


def store_path(index_path: str | Path) -> str:
    """The store of the index file ``index_path`` (``…/x.parquet`` -> ``…/x-prepared.npy``)."""
    index_path = str(index_path)
    if not index_path.endswith(".parquet"):
        raise VcrbenchError(f"an index is a .parquet file, got {index_path!r}")
    return index_path[: -len(".parquet")] + STORE_SUFFIX


def write_store(paths: Sequence[str], out: str | Path, *, threads: int = 1,
                size: int | str = IMAGE_SIZE) -> None:
    """Decode and prepare the images at ``paths`` (index order) into the store ``out``.

    ``threads`` workers decode in parallel (PIL releases the GIL while it decodes and resizes);
    each image is written into its own row, so the file does not depend on the thread count.
    ``size``: 224 or ``"native"`` (the index's :func:`~vcrbench.data.datasets.index_size`; every
    image must then have the first one's shape). The file is written atomically: a failing or
    killed job leaves no store behind.
    """
    n = len(paths)
    shape = IMAGE_SHAPE if size != NATIVE or not n else prepare_image(paths[0], size).shape
    progress = Progress("prepare images", n, "images")
    with atomic_write(out) as tmp:
        rows = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.uint8, shape=(n, *shape))
        with ThreadPoolExecutor(max_workers=max(1, int(threads))) as pool:
            for i, image in enumerate(pool.map(lambda p: prepare_image(p, size), paths)):
                if image.shape != shape:
                    raise VcrbenchError(f"{paths[i]}: image is {image.shape[1]}x{image.shape[0]} "
                                        f"px, the first image {shape[1]}x{shape[0]}; a native-size "
                                        "data set needs every image at one size")
                rows[i] = image
                progress.advance(1)
        rows.flush()
        del rows  # unmap the file before it is renamed


def _refuse_unknown(image_ids: Sequence[str], known) -> None:
    """A VcrbenchError naming the first few ``image_ids`` not in ``known`` (an index's ids)."""
    missing = [i for i in image_ids if i not in known]
    if missing:
        raise VcrbenchError(f"images not in the index: {sorted(set(missing))[:5]}; the table "
                            "that names them was made from another index: re-run the workflow "
                            "so that both are rebuilt")


class PreparedImages:
    """Read access to a store by ``image_id``.

    Args:
        path: the ``.npy`` store.
        index: the index it was made from (its ``image_id`` column gives the rows).
    """

    def __init__(self, path: str | Path, index: pa.Table):
        self.path = str(path)
        if not os.path.exists(self.path):
            raise VcrbenchError(f"prepared-image store {self.path} is missing; re-run the workflow "
                                "to make it (rule prepare_images)")
        self._array = np.load(self.path, mmap_mode="r")
        ids = index.column("image_id").to_pylist()
        shape = self._array.shape
        side = index_side(index)
        expected = (len(ids), side, side, 3)
        if shape != expected or self._array.dtype != np.uint8:
            raise VcrbenchError(
                f"prepared-image store {self.path} holds {shape} {self._array.dtype}, "
                f"but its index has {len(ids)} images of {expected[1:]} uint8; delete the store "
                "and re-run to rebuild it"
            )
        #: Shape of one image, (S, S, 3).
        self.image_shape = tuple(shape[1:])
        self._row = {image_id: i for i, image_id in enumerate(ids)}

    def __len__(self) -> int:
        return len(self._row)

    def __contains__(self, image_id: str) -> bool:
        return image_id in self._row

    def rows(self, image_ids: Sequence[str]) -> np.ndarray:
        """Row numbers of ``image_ids`` in the store: (K,) int64."""
        _refuse_unknown(image_ids, self._row)
        return np.fromiter((self._row[i] for i in image_ids), np.int64, len(image_ids))

    def images(self, image_ids: Sequence[str]) -> np.ndarray:
        """The prepared images of ``image_ids``, in that order: (K, 224, 224, 3) uint8 (a copy
        in memory, writable)."""
        rows = self.rows(image_ids)
        order = np.argsort(rows, kind="stable")  # read the file front to back
        out = np.empty((len(rows), *self.image_shape), np.uint8)
        out[order] = self._array[rows[order]]
        return out

    def all(self) -> np.ndarray:
        """Every image, in index order: (N, 224, 224, 3) uint8 (a copy in memory)."""
        return np.array(self._array)


class DecodedImages:
    """:class:`PreparedImages`' reading interface over an index without a store: each image is
    decoded and prepared on first use and kept (benchmarks, notebooks, small tests).

    Args:
        index: a table with ``image_id`` and ``path`` columns.
    """

    def __init__(self, index: pa.Table):
        self._path = dict(zip(index.column("image_id").to_pylist(),
                              index.column("path").to_pylist(), strict=True))
        self._size = index_size(index)
        self._cache: dict[str, np.ndarray] = {}
        #: Shape of one image, (S, S, 3).
        self.image_shape = (index_side(index),) * 2 + (3,)

    def __len__(self) -> int:
        return len(self._path)

    def __contains__(self, image_id: str) -> bool:
        return image_id in self._path

    def images(self, image_ids: Sequence[str]) -> np.ndarray:
        """As :meth:`PreparedImages.images`."""
        _refuse_unknown(image_ids, self._path)
        out = np.empty((len(image_ids), *self.image_shape), np.uint8)
        for row, image_id in enumerate(image_ids):
            if image_id not in self._cache:
                self._cache[image_id] = prepare_image(self._path[image_id], self._size)
            out[row] = self._cache[image_id]
        return out
