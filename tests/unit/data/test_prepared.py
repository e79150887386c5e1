"""The prepared-image store holds exactly what decoding each file gives, row by index row."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from PIL import Image

from vcrbench.data.datasets import prepare_image
from vcrbench.data.prepared import DecodedImages, PreparedImages, store_path, write_store
from vcrbench.errors import VcrbenchError


@pytest.fixture
def index(tmp_path):
    """Five small JPEG and PNG files of different sizes, indexed as the pipeline does."""
    rng = np.random.default_rng(0)
    paths = []
    for i, (w, h) in enumerate([(300, 260), (260, 400), (512, 300), (64, 48), (256, 256)]):
        path = tmp_path / f"img{i}.{'png' if i % 2 else 'jpg'}"
        Image.fromarray(rng.integers(0, 256, (h, w, 3), np.uint8)).save(path)
        paths.append(str(path))
    ids = [f"id{i}" for i in range(len(paths))]
    return pa.table({"image_id": ids, "path": paths})


def test_store_path_is_beside_its_index():
    assert store_path("results/x/data/index.parquet") == "results/x/data/index-prepared.npy"
    with pytest.raises(VcrbenchError, match="parquet"):
        store_path("results/x/data/index.csv")


@pytest.mark.parametrize("threads", [1, 3])
def test_store_rows_are_the_decoded_images(index, tmp_path, threads):
    out = tmp_path / "index-prepared.npy"
    write_store(index.column("path").to_pylist(), out, threads=threads)
    store = PreparedImages(out, index)
    reference = np.stack([prepare_image(p) for p in index.column("path").to_pylist()])
    assert np.array_equal(store.all(), reference)
    # any order, repeats included, as the samples of a shard ask for them
    ids = ["id3", "id0", "id3", "id4"]
    assert np.array_equal(store.images(ids), reference[[3, 0, 3, 4]])
    assert np.array_equal(DecodedImages(index).images(ids), reference[[3, 0, 3, 4]])
    assert not list(tmp_path.glob(".*tmp*"))  # the atomic write left no temporary file


def test_store_bytes_do_not_depend_on_threads(index, tmp_path):
    write_store(index.column("path").to_pylist(), tmp_path / "a.npy", threads=1)
    write_store(index.column("path").to_pylist(), tmp_path / "b.npy", threads=4)
    assert (tmp_path / "a.npy").read_bytes() == (tmp_path / "b.npy").read_bytes()


def test_a_store_that_does_not_match_its_index_is_refused(index, tmp_path):
    out = tmp_path / "index-prepared.npy"
    write_store(index.column("path").to_pylist()[:3], out)
    with pytest.raises(VcrbenchError, match="delete the store"):
        PreparedImages(out, index)
    with pytest.raises(VcrbenchError, match="is missing"):
        PreparedImages(tmp_path / "none.npy", index)
    store = PreparedImages(out, index.slice(0, 3))
    with pytest.raises(VcrbenchError, match="not in the index"):
        store.images(["id4"])


def test_an_unreadable_file_leaves_no_store(index, tmp_path):
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"not an image")
    out = tmp_path / "index-prepared.npy"
    with pytest.raises(VcrbenchError):
        write_store([*index.column("path").to_pylist(), str(bad)], out, threads=2)
    assert not out.exists() and not list(tmp_path.glob(".*tmp*"))
