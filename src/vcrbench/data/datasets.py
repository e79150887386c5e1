"""Clean images: the dataset index and the one image preparation every stage shares.

Preparation (docs/architecture.md, "Contracts"): decode, convert to RGB, resize so the short
side is 256 px (bilinear, antialiased), centre-crop 224 x 224, uint8. Corruptions, VIF and every
model see that array.

Sources:

- ``builtin``: natural colour photographs shipped inside installed packages (scikit-image,
  matplotlib), so the default run needs no download. Only Chelsea (a cat) has a label, in the
  16-class space; the others give consistency metrics only.
- ``imagefolder``: any folder tree of images; the label is the ImageNet index of a WNID taken
  from the parent folder name or a ``<WNID>_`` file-name prefix, when there is one.
- ``imagenet-val``: the ILSVRC2012 validation set, either in WNID subfolders or flat
  ``ILSVRC2012_val_XXXXXXXX.JPEG`` files with a ground-truth file (``dataset.labels``).
"""

from __future__ import annotations

import csv
import logging
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
from PIL import Image, ImageFile, UnidentifiedImageError

from vcrbench.errors import VcrbenchError

log = logging.getLogger(__name__)

#: Side of the stored square image (px) and the short side it is cropped from.
IMAGE_SIZE = 224
RESIZE_SHORT_SIDE = 256
#: Largest accepted image (pixels): a larger header is treated as a decompression bomb.
MAX_PIXELS = 16_000 * 16_000
IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp", ".ppm", ".gif"}
WNID_PATTERN = re.compile(r"^(n\d{8})(?:_|$)")

#: Schema of ``data/index.parquet`` (one row per clean image, sorted by ``image_id``).
INDEX_SCHEMA = pa.schema(
    [
        pa.field("image_id", pa.string(), nullable=False),  # unique, stable id
        pa.field("path", pa.string(), nullable=False),  # file path or builtin:<name>
        pa.field("label", pa.int16(), nullable=False),  # ImageNet-1k index, -1 unknown
        pa.field("wnid", pa.string()),  # WordNet id of the label, null unknown
        pa.field("category16", pa.int8(), nullable=False),  # 16-class index, -1 none/unknown
    ]
)


@dataclass(frozen=True)
class IndexEntry:
    image_id: str
    path: str
    label: int
    wnid: str | None
    category16: int


def _builtin_images() -> dict[str, tuple[str, str | None]]:
    """builtin image id -> (loader spec, 16-class category name or None)."""
    return {
        "skimage-astronaut": ("skimage:astronaut.png", None),
        "skimage-chelsea": ("skimage:chelsea.png", "cat"),
        "skimage-coffee": ("skimage:coffee.png", None),
        "skimage-motorcycle": ("skimage:motorcycle_left.png", None),
        "skimage-rocket": ("skimage:rocket.jpg", None),
        "matplotlib-grace-hopper": ("matplotlib:grace_hopper.jpg", None),
    }


def _open_builtin(spec: str) -> Image.Image:
    package, name = spec.split(":", 1)
    if package == "skimage":
        import skimage.data

        folder = Path(skimage.data.__file__).parent
    elif package == "matplotlib":
        import matplotlib

        folder = Path(matplotlib.get_data_path()) / "sample_data"
    else:
        raise VcrbenchError(f"unknown builtin image {spec!r}")
    path = folder / name
    if not path.is_file():
        raise VcrbenchError(f"builtin image {spec!r} is missing at {path}; reinstall {package}")
    with Image.open(path) as image:
        image.load()
        return image.copy()


def to_rgb(image: Image.Image) -> Image.Image:
    """RGB view of any PIL mode: 16-bit and float grayscale are scaled to 8 bit first."""
    if image.mode in ("I;16", "I;16B", "I;16L", "I"):
        array = np.asarray(image, dtype=np.float64)
        top = 65535.0 if image.mode.startswith("I;16") or array.max() > 255 else 255.0
        array = np.clip(np.round(array / top * 255.0), 0, 255).astype(np.uint8)
        image = Image.fromarray(array, mode="L")
    elif image.mode == "F":
        array = np.clip(np.round(np.asarray(image, dtype=np.float64) * 255.0), 0, 255)
        image = Image.fromarray(array.astype(np.uint8), mode="L")
    elif image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        image = image.convert("RGBA")
        background = Image.new("RGBA", image.size, (255, 255, 255, 255))
        image = Image.alpha_composite(background, image)
    return image.convert("RGB")


def prepare_pil(image: Image.Image) -> np.ndarray:
    """Resize (short side 256, bilinear) and centre-crop a PIL image: (224, 224, 3) uint8 RGB."""
    image = to_rgb(image)
    width, height = image.size
    if min(width, height) < 32:
        raise VcrbenchError(
            f"image is {width}x{height} px; at least 32 px per side is needed (remove it, or set "
            "dataset.skip_unreadable: true to skip such files)"
        )
    scale = RESIZE_SHORT_SIDE / min(width, height)
    size = (
        (RESIZE_SHORT_SIDE, int(height * scale))
        if width <= height
        else (int(width * scale), RESIZE_SHORT_SIDE)
    )
    image = image.resize(size, Image.Resampling.BILINEAR)
    left = int(round((size[0] - IMAGE_SIZE) / 2.0))
    top = int(round((size[1] - IMAGE_SIZE) / 2.0))
    image = image.crop((left, top, left + IMAGE_SIZE, top + IMAGE_SIZE))
    return np.ascontiguousarray(np.asarray(image, dtype=np.uint8))


def prepare_image(path: str | Path) -> np.ndarray:
    """Decode one image file (or ``builtin:<spec>``) and prepare it: (224, 224, 3) uint8 RGB.

    Raises :class:`VcrbenchError` naming the file when it cannot be decoded, is truncated, is
    too large (decompression bomb) or too small.
    """
    path = str(path)
    if path.startswith("builtin:"):
        return prepare_pil(_open_builtin(path.removeprefix("builtin:")))
    ImageFile.LOAD_TRUNCATED_IMAGES = False
    # Our own limit (MAX_PIXELS, checked from the header before decoding) replaces PIL's, which
    # would otherwise reject anything above 89 megapixels with a less helpful message.
    pil_limit = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = None
    try:
        with Image.open(path) as image:
            width, height = image.size
            if width * height > MAX_PIXELS:
                raise VcrbenchError(
                    f"{path}: image header says {width}x{height} px, above the limit of "
                    f"{MAX_PIXELS} px (decompression bomb?); resize it or remove it, or set "
                    "dataset.skip_unreadable: true to skip such files"
                )
            image.load()
            return prepare_pil(image)
    except VcrbenchError as error:
        if str(error).startswith(path):
            raise
        raise VcrbenchError(f"{path}: {error}") from None
    except (
        UnidentifiedImageError,
        OSError,
        SyntaxError,
        ValueError,
        Image.DecompressionBombError,
        Image.DecompressionBombWarning,
    ) as error:
        raise VcrbenchError(
            f"{path}: cannot read this image ({type(error).__name__}: {error}); fix or remove the "
            "file, or set dataset.skip_unreadable: true to skip such files"
        ) from None
    finally:
        Image.MAX_IMAGE_PIXELS = pil_limit


def _label_of_wnid(wnid: str | None) -> tuple[int, str | None, int]:
    from vcrbench.data.imagenet import wnid_to_index
    from vcrbench.data.imagenet16 import category16_of_label

    if wnid is None:
        return -1, None, -1
    index = wnid_to_index().get(wnid)
    if index is None:
        return -1, None, -1
    return index, wnid, int(category16_of_label(index))


def _wnid_of_path(path: Path, root: Path) -> str | None:
    match = WNID_PATTERN.match(path.name)
    if match:
        return match.group(1)
    for parent in path.relative_to(root).parents:
        if WNID_PATTERN.match(parent.name + "_"):
            return parent.name
    return None


def _image_files(root: Path) -> list[Path]:
    files = [p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES]
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def _builtin_index() -> list[IndexEntry]:
    from vcrbench.data.imagenet16 import CATEGORIES16

    entries = []
    for image_id, (spec, category) in sorted(_builtin_images().items()):
        category16 = CATEGORIES16.index(category) if category else -1
        entries.append(IndexEntry(image_id, f"builtin:{spec}", -1, None, category16))
    return entries


def _imagefolder_index(root: Path) -> list[IndexEntry]:
    entries = []
    for path in _image_files(root):
        label, wnid, category16 = _label_of_wnid(_wnid_of_path(path, root))
        image_id = path.relative_to(root).with_suffix("").as_posix()
        entries.append(IndexEntry(image_id, str(path), label, wnid, category16))
    return entries


def _read_ground_truth(path: Path) -> dict[str, str]:
    """ILSVRC2012 val ground truth: file stem -> WNID.

    Accepts Kaggle's ``LOC_val_solution.csv`` (ImageId, PredictionString starting with the WNID)
    or the devkit's ``ILSVRC2012_validation_ground_truth.txt`` (1-based ILSVRC2012 IDs in
    file-name order, which needs the devkit's meta order; WNIDs per line are accepted too).
    """
    from vcrbench.data.imagenet import wnids

    text = path.read_text(encoding="utf-8").splitlines()
    if text and text[0].startswith("ImageId"):
        rows = csv.reader(text[1:])
        return {row[0]: row[1].split()[0] for row in rows if row}
    values = [line.strip() for line in text if line.strip()]
    stems = [f"ILSVRC2012_val_{i:08d}" for i in range(1, len(values) + 1)]
    if all(WNID_PATTERN.match(v + "_") for v in values):
        return dict(zip(stems, values, strict=True))
    raise VcrbenchError(
        f"{path}: ground truth must be LOC_val_solution.csv or one WNID per line "
        f"(devkit ILSVRC2012 IDs use a different order than the sorted WNIDs {wnids()[0]}…)"
    )


def _imagenet_val_index(root: Path, labels: str | None) -> list[IndexEntry]:
    files = _image_files(root)
    if not files:
        raise VcrbenchError(f"dataset.path {root}: no images found")
    if any(_wnid_of_path(p, root) for p in files[:10]):
        return _imagefolder_index(root)
    if not labels:
        raise VcrbenchError(
            f"dataset.path {root} holds flat validation images; set dataset.labels to the "
            "ground-truth file (LOC_val_solution.csv, or one WNID per line)"
        )
    truth = _read_ground_truth(Path(labels))
    entries = []
    for path in files:
        if path.stem not in truth:
            raise VcrbenchError(f"{path}: no ground truth for {path.stem} in {labels}")
        label, wnid, category16 = _label_of_wnid(truth[path.stem])
        entries.append(IndexEntry(path.stem, str(path), label, wnid, category16))
    return entries


def list_entries(
    source: str,
    path: str | None = None,
    *,
    labels: str | None = None,
    limit: int | None = None,
    categories16_only: bool = False,
    exclude_categories16: bool = False,
) -> list[IndexEntry]:
    """The entries :func:`build_index` keeps, from file names alone (nothing is decoded), sorted
    by ``image_id``: cheap enough for config checks that need a data set's size or image ids
    before any job (an unreadable file is found only by :func:`build_index`)."""
    if source == "builtin":
        entries = _builtin_index()
    elif source == "imagefolder":
        entries = _imagefolder_index(Path(path))
    elif source == "imagenet-val":
        entries = _imagenet_val_index(Path(path), labels)
    else:
        raise VcrbenchError(
            f"dataset.source {source!r} unknown; use builtin, imagefolder or imagenet-val"
        )
    entries.sort(key=lambda e: e.image_id)
    if categories16_only:
        entries = [e for e in entries if e.category16 >= 0]
        if not entries:
            raise VcrbenchError(
                f"dataset {source} {path or ''}: no image belongs to the 16 categories of the "
                "human experiments (dataset.categories16_only: true); check the labels"
            )
    if exclude_categories16:
        entries = [e for e in entries if e.category16 < 0]
        if not entries:
            raise VcrbenchError(
                f"dataset {source} {path or ''}: every image belongs to the 16 categories "
                "(exclude_categories16: true) and none is left"
            )
    if limit is not None:
        entries = entries[:limit]
    return entries


def list_entries_from_config(dataset: dict) -> list[IndexEntry]:
    """:func:`list_entries` of a validated config dataset block."""
    return list_entries(
        dataset["source"],
        dataset["path"],
        labels=dataset["labels"],
        limit=dataset["limit"],
        categories16_only=dataset["categories16_only"],
        exclude_categories16=dataset["exclude_categories16"],
    )


def build_index(
    source: str,
    path: str | None = None,
    *,
    labels: str | None = None,
    limit: int | None = None,
    skip_unreadable: bool = False,
    categories16_only: bool = False,
    exclude_categories16: bool = False,
) -> tuple[pa.Table, int]:
    """The dataset index as a table (:data:`INDEX_SCHEMA`) and the number of skipped images.

    Every image is decoded once here, so a corrupt file stops the run at its first stage
    (or is skipped and logged with ``skip_unreadable``). ``categories16_only`` keeps the images
    of the 16 human-experiment categories (before ``limit``), ``exclude_categories16`` the others.
    """
    entries = list_entries(source, path, labels=labels, limit=limit,
                           categories16_only=categories16_only,
                           exclude_categories16=exclude_categories16)
    kept, skipped = [], 0
    for entry in entries:
        try:
            prepare_image(entry.path)
        except VcrbenchError as error:
            if not skip_unreadable:
                raise
            skipped += 1
            log.warning("skipped unreadable image: %s", error)
            continue
        kept.append(entry)
    if not kept:
        raise VcrbenchError(f"dataset {source} {path or ''}: no readable images")
    table = pa.Table.from_pylist([e.__dict__ for e in kept], schema=INDEX_SCHEMA)
    return table, skipped


def build_index_from_config(dataset: dict) -> tuple[pa.Table, int]:
    """:func:`build_index` of a validated config dataset block (``dataset`` or a ``train``)."""
    return build_index(
        dataset["source"],
        dataset["path"],
        labels=dataset["labels"],
        limit=dataset["limit"],
        skip_unreadable=dataset["skip_unreadable"],
        categories16_only=dataset["categories16_only"],
        exclude_categories16=dataset["exclude_categories16"],
    )


def load_images(paths: list[str]) -> np.ndarray:
    """Prepared images for a list of index paths: (N, 224, 224, 3) uint8."""
    out = np.empty((len(paths), IMAGE_SIZE, IMAGE_SIZE, 3), dtype=np.uint8)
    for i, path in enumerate(paths):
        out[i] = prepare_image(path)
    return out
