"""Dataset index and image preparation, including hostile files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vcrbench.data.datasets import build_index, prepare_image, prepare_pil
from vcrbench.data.imagenet16 import CATEGORIES16
from vcrbench.errors import VcrbenchError


def test_builtin_index_is_sorted_and_labelled():
    table, skipped = build_index("builtin")
    ids = table.column("image_id").to_pylist()
    assert skipped == 0 and ids == sorted(ids) and len(ids) >= 5
    rows = {r["image_id"]: r for r in table.to_pylist()}
    assert rows["skimage-chelsea"]["category16"] == 7  # "cat" in the alphabetical 16 categories
    assert all(r["label"] == -1 for r in rows.values())


def test_prepare_matches_resize_and_centre_crop():
    rng = np.random.default_rng(0)
    array = rng.integers(0, 256, size=(300, 400, 3), dtype=np.uint8)
    prepared = prepare_pil(Image.fromarray(array))
    assert prepared.shape == (224, 224, 3) and prepared.dtype == np.uint8
    # Reference: torchvision-style resize of the short side to 256, then a centred 224 crop.
    resized = np.asarray(Image.fromarray(array).resize((341, 256), Image.Resampling.BILINEAR))
    top, left = round((256 - 224) / 2), round((341 - 224) / 2)
    assert np.array_equal(prepared, resized[top : top + 224, left : left + 224])


@pytest.mark.parametrize("mode", ["L", "CMYK", "RGBA", "P", "I;16"])
def test_modes_convert_to_rgb(mode, tmp_path):
    rng = np.random.default_rng(1)
    base = Image.fromarray(rng.integers(0, 256, size=(80, 90, 3), dtype=np.uint8))
    if mode == "I;16":
        image = Image.fromarray(rng.integers(0, 65536, size=(80, 90), dtype=np.uint16))
    else:
        image = base.convert(mode)
    suffix = ".tif" if mode in ("CMYK", "I;16") else ".png"
    path = tmp_path / f"image{suffix}"
    image.save(path)
    assert prepare_image(path).shape == (224, 224, 3)


def test_corrupt_and_empty_files_name_the_file(tmp_path):
    broken = tmp_path / "n01440764_broken.JPEG"
    broken.write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    empty = tmp_path / "n01440764_empty.JPEG"
    empty.write_bytes(b"")
    for path in (broken, empty):
        with pytest.raises(VcrbenchError, match=path.name):
            prepare_image(path)


def test_small_image_is_rejected(tmp_path):
    path = tmp_path / "tiny.png"
    Image.new("RGB", (20, 40)).save(path)
    with pytest.raises(VcrbenchError, match="at least 32 px"):
        prepare_image(path)


def test_decompression_bomb_header_is_rejected(tmp_path):
    path = tmp_path / "bomb.png"
    Image.new("1", (20000, 20000)).save(path)
    limit = Image.MAX_IMAGE_PIXELS
    with pytest.raises(VcrbenchError, match="header says 20000x20000 px.*decompression bomb"):
        prepare_image(path)
    assert Image.MAX_IMAGE_PIXELS == limit  # PIL's own limit is restored


def test_large_image_under_our_limit_is_read(tmp_path):
    """PIL alone would refuse 10000 x 10000 (above its 89-megapixel default); ours allows it."""
    path = tmp_path / "large.png"
    Image.new("L", (10000, 10000), 128).save(path)
    assert prepare_image(path).shape == (224, 224, 3)


def test_imagefolder_labels_and_skip_unreadable(tmp_path):
    folder = tmp_path / "images"
    (folder / "n01443537").mkdir(parents=True)
    Image.new("RGB", (64, 64), (10, 20, 30)).save(folder / "n01440764_tench.JPEG")
    Image.new("RGB", (64, 64), (30, 20, 10)).save(folder / "n01443537" / "fish.png")
    Image.new("RGB", (64, 64)).save(folder / "unlabelled.png")
    (folder / "n01440764_bad.JPEG").write_bytes(b"garbage")
    with pytest.raises(VcrbenchError, match="n01440764_bad.JPEG"):
        build_index("imagefolder", str(folder))
    table, skipped = build_index("imagefolder", str(folder), skip_unreadable=True)
    assert skipped == 1
    rows = {r["image_id"]: r for r in table.to_pylist()}
    assert rows["n01440764_tench"]["label"] == 0 and rows["n01440764_tench"]["wnid"] == "n01440764"
    assert rows["n01443537/fish"]["label"] == 1
    assert rows["unlabelled"]["label"] == -1 and rows["unlabelled"]["wnid"] is None
    limited, skipped = build_index("imagefolder", str(folder), limit=2, skip_unreadable=True)
    assert limited.num_rows == 1 and skipped == 1  # the limit applies before skipping


def test_categories16_only_keeps_the_images_of_the_human_categories(tmp_path):
    """n02123045 (tabby cat) is in category "cat"; n01440764 (tench) is in none."""
    folder = tmp_path / "images"
    folder.mkdir()
    Image.new("RGB", (64, 64), (10, 20, 30)).save(folder / "n01440764_tench.JPEG")
    Image.new("RGB", (64, 64), (30, 20, 10)).save(folder / "n02123045_tabby.JPEG")
    table, _ = build_index("imagefolder", str(folder), categories16_only=True)
    assert table.column("image_id").to_pylist() == ["n02123045_tabby"]
    assert table.column("category16").to_pylist() == [CATEGORIES16.index("cat")]
    (folder / "n02123045_tabby.JPEG").unlink()
    with pytest.raises(VcrbenchError, match="no image belongs to the 16 categories"):
        build_index("imagefolder", str(folder), categories16_only=True)


def _rglob_reference(root):
    """The listing by Path.rglob that _image_files replaced (slow, obviously right)."""
    from vcrbench.data.datasets import IMAGE_SUFFIXES

    files = [p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES]
    return sorted(((p.relative_to(root).as_posix(), str(p)) for p in files), key=lambda t: t[0])


def test_image_files_list_what_rglob_lists(tmp_path, monkeypatch):
    from vcrbench.data.datasets import _image_files, list_entries

    tree = tmp_path / "data"
    for relative in ["n01440764/a.JPEG", "n01440764/deep/b.png", "n02102040_c.jpg",
                     "plain/d.jpeg", "plain/e.txt", "plain/.jpg", "plain/f.tar.jpg", "g.JPG"]:
        (tree / relative).parent.mkdir(parents=True, exist_ok=True)
        (tree / relative).write_bytes(b"x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "h.jpg").write_bytes(b"x")
    (tree / "linked.jpg").symlink_to(outside / "h.jpg")      # a linked file: listed
    (tree / "linked-folder").symlink_to(outside)              # a linked folder: not entered
    (tree / "broken.jpg").symlink_to(tmp_path / "missing.jpg")  # not a file
    monkeypatch.chdir(tree)
    assert _image_files(Path(".")) == _rglob_reference(Path("."))
    monkeypatch.chdir(tmp_path)
    for root in (tree, Path("data"), Path("./data/")):  # the paths str(Path) gives
        assert _image_files(root) == _rglob_reference(root)
    ids = [e.image_id for e in list_entries("imagefolder", "data")]
    assert ids == sorted(["n01440764/a", "n01440764/deep/b", "n02102040_c", "plain/d",
                          "plain/f.tar", "g", "linked"])
    labels = {e.image_id: e.wnid for e in list_entries("imagefolder", "data")}
    assert labels["n01440764/deep/b"] == "n01440764" and labels["n02102040_c"] == "n02102040"
    assert labels["plain/d"] is None


def test_a_kept_listing_follows_files_added_or_removed_anywhere_in_the_tree(tmp_path,
                                                                           monkeypatch):
    import os

    from vcrbench.data import datasets

    walks = []
    walk = datasets._walk_images
    monkeypatch.setattr(datasets, "_walk_images", lambda folder: walks.append(1) or walk(folder))
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    (deep / "one.jpg").write_bytes(b"x")

    def settle():  # every folder of the tree last changed an hour ago
        for folder in (tmp_path, tmp_path / "a", tmp_path / "a" / "b", deep):
            os.utime(folder, ns=(os.stat(folder).st_atime_ns, os.stat(folder).st_mtime_ns
                                 - 3600 * 10**9))

    def listed():
        return [relative for relative, _ in datasets._image_files(tmp_path)]

    assert listed() == ["a/b/c/one.jpg"] and len(walks) == 1  # just changed: listed afresh
    assert listed() == ["a/b/c/one.jpg"] and len(walks) == 2
    settle()
    assert listed() == ["a/b/c/one.jpg"] and len(walks) == 3
    assert listed() == ["a/b/c/one.jpg"] and len(walks) == 3  # settled: kept
    (deep / "two.png").write_bytes(b"x")                         # three folders down
    assert listed() == ["a/b/c/one.jpg", "a/b/c/two.png"] and len(walks) == 4
    settle()  # settled again, at another state: not the kept listing
    assert listed() == ["a/b/c/one.jpg", "a/b/c/two.png"] and len(walks) == 5
    (deep / "one.jpg").unlink()
    settle()
    assert listed() == ["a/b/c/two.png"] and len(walks) == 6
    (deep / "two.png").rename(deep / "three.png")
    settle()
    assert listed() == ["a/b/c/three.png"] and len(walks) == 7
    assert listed() == ["a/b/c/three.png"] and len(walks) == 7
