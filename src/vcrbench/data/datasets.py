"""Clean images: the dataset index and the one image preparation every stage shares.

Preparation (docs/architecture.md, "Contracts"): decode, convert to RGB, resize so the short
side is 256 px (bilinear, antialiased), centre-crop 224 x 224, uint8. Corruptions, VIF and every
model see that array. A data set at its native size (``dataset.size: native``, e.g. CIFAR's
32 x 32) is only decoded and converted to RGB: every image must have the same square size, which
every later stage takes from the data.

Sources:

- ``builtin``: natural colour photographs shipped inside installed packages (scikit-image,
  matplotlib), so the default run needs no download. Only Chelsea (a cat) has a label, in the
  16-class space; the others give consistency metrics only.
- ``imagefolder``: any folder tree of images; the label is the ImageNet index of a WNID taken
  from the parent folder name or a ``<WNID>_`` file-name prefix, when there is one.
- ``imagenet-val``: the ILSVRC2012 validation set, either in WNID subfolders or flat
  ``ILSVRC2012_val_XXXXXXXX.JPEG`` files with a ground-truth file (``dataset.labels``).
- ``cifar10`` / ``cifar100``: one split (``dataset.split``) of the python version users download
  (:mod:`vcrbench.data.cifar`); the index path of image ``test-00042`` is
  ``cifar10://<folder>#test-00042``, and its label is the CIFAR class (CIFAR-100: the fine label;
  the coarse one is the index's extra ``coarse_label`` column).

Label spaces (:func:`label_space`): ImageNet-1k for builtin, imagenet-val and imagefolder (WNID
folder names), CIFAR-10's 10 classes for ``cifar10`` and for an imagefolder with
``dataset.classes: cifar10`` (class-name folders, the shared JPEG copy), CIFAR-100's 100 fine
classes for ``cifar100``. Only ImageNet labels have a 16-class category.
"""

from __future__ import annotations

import csv
import functools
import logging
import os
import re
import time
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
#: ``dataset.size``: the prepared 224 crop, or the images as they are.
NATIVE = "native"
#: ``dataset.crop``: how a 224 x 224 image is prepared (RobustBench's names of the geometries):
#: short side 256 with a bilinear or bicubic filter then the centre 224 crop, or the whole image
#: resized to 224 x 224. The first is the default; the others travel as the prepared ``size``
#: (:func:`prepare_pil`, :func:`index_size`).
DEFAULT_CROP = "res256-crop224"
CROPS = (DEFAULT_CROP, "bicubic-res256-crop224", "res224")
#: Schema metadata keys of an index whose images keep their native size (``native``, and the
#: side in px).
SIZE_METADATA = b"vcrbench.image_size"
SIDE_METADATA = b"vcrbench.image_side"
CIFAR_SOURCES = ("cifar10", "cifar100")
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
class LabelSpace:
    """The classes the labels of a data set (and its models' outputs) index.

    Attributes:
        name: ``imagenet``, ``cifar10`` or ``cifar100``.
        classes: how many (1000, 10, 100).
    """

    name: str
    classes: int

    @property
    def has_categories16(self) -> bool:
        """Whether labels map to the 16 categories of the human experiments (ImageNet only)."""
        return self.name == "imagenet"


LABEL_SPACES = {"imagenet": LabelSpace("imagenet", 1000), "cifar10": LabelSpace("cifar10", 10),
                "cifar100": LabelSpace("cifar100", 100)}


def label_space(dataset: dict) -> LabelSpace:
    """The label space of a validated config dataset block."""
    if dataset["source"] in CIFAR_SOURCES:
        return LABEL_SPACES[dataset["source"]]
    return LABEL_SPACES[dataset.get("classes", "imagenet")]


@dataclass(frozen=True)
class IndexEntry:
    image_id: str
    path: str
    label: int
    wnid: str | None
    category16: int
    coarse_label: int | None = None  # CIFAR-100's superclass, None elsewhere


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


def prepare_pil(image: Image.Image, size: int | str = IMAGE_SIZE) -> np.ndarray:
    """Resize (short side 256, bilinear) and centre-crop a PIL image: (224, 224, 3) uint8 RGB;
    with ``size`` ``"native"`` the image as it is, (H, W, 3) uint8 RGB; with a crop of
    :data:`CROPS` that crop (``bicubic-res256-crop224``: the resize bicubic; ``res224``: the
    whole image resized to 224 x 224, bilinear), as torchvision's ``Resize`` / ``CenterCrop``
    do on PIL images (up to the float rounding of the long side, ``int(long * (256 / short))``
    here, which can differ by a pixel from torchvision's ``int(256 * long / short)``)."""
    image = to_rgb(image)
    width, height = image.size
    if min(width, height) < 32:
        raise VcrbenchError(
            f"image is {width}x{height} px; at least 32 px per side is needed (remove it, or set "
            "dataset.skip_unreadable: true to skip such files)"
        )
    if size == NATIVE:
        return np.ascontiguousarray(np.asarray(image, dtype=np.uint8))
    if size == "res224":
        image = image.resize((IMAGE_SIZE, IMAGE_SIZE), Image.Resampling.BILINEAR)
        return np.ascontiguousarray(np.asarray(image, dtype=np.uint8))
    if size not in (IMAGE_SIZE, DEFAULT_CROP, "bicubic-res256-crop224"):
        raise VcrbenchError(
            f"image size {size!r} is not one of {IMAGE_SIZE}, {NATIVE}, {', '.join(CROPS)}")
    resample = (Image.Resampling.BICUBIC if size == "bicubic-res256-crop224"
                else Image.Resampling.BILINEAR)
    scale = RESIZE_SHORT_SIDE / min(width, height)
    size = (
        (RESIZE_SHORT_SIDE, int(height * scale))
        if width <= height
        else (int(width * scale), RESIZE_SHORT_SIDE)
    )
    image = image.resize(size, resample)
    left = int(round((size[0] - IMAGE_SIZE) / 2.0))
    top = int(round((size[1] - IMAGE_SIZE) / 2.0))
    image = image.crop((left, top, left + IMAGE_SIZE, top + IMAGE_SIZE))
    return np.ascontiguousarray(np.asarray(image, dtype=np.uint8))


def cifar_path(dataset: str, folder: str | Path, image_id: str) -> str:
    """The index path of one image of the python version of CIFAR (``dataset``)."""
    return f"{dataset}://{Path(folder).resolve()}#{image_id}"


@functools.lru_cache(maxsize=4)
def _cifar_split(dataset: str, folder: str, split: str):
    """One split of the python version and its id -> row map, read once per process."""
    from vcrbench.data.cifar import read_cifar_python

    data = read_cifar_python(folder, dataset, split)
    return data, {image_id: i for i, image_id in enumerate(data.image_ids)}


def _cifar_image(path: str) -> np.ndarray:
    """The (32, 32, 3) uint8 image of a ``cifar10://<folder>#<split>-<n>`` index path."""
    dataset, _, rest = path.partition("://")
    folder, _, image_id = rest.rpartition("#")
    data, row = _cifar_split(dataset, folder, image_id.partition("-")[0])
    if image_id not in row:
        raise VcrbenchError(f"{path}: no image {image_id} in {folder}; rebuild the index")
    return data.images[row[image_id]]


def prepare_image(path: str | Path, size: int | str = IMAGE_SIZE) -> np.ndarray:
    """Decode one image file (or ``builtin:<spec>``, ``cifar10://…``) and prepare it:
    (224, 224, 3) uint8 RGB, or (H, W, 3) as it is with ``size`` ``"native"``.

    Raises :class:`VcrbenchError` naming the file when it cannot be decoded, is truncated, is
    too large (decompression bomb) or too small.
    """
    path = str(path)
    if path.startswith("builtin:"):
        return prepare_pil(_open_builtin(path.removeprefix("builtin:")), size)
    if path.startswith(tuple(f"{d}://" for d in CIFAR_SOURCES)):
        image = _cifar_image(path)
        return image.copy() if size == NATIVE else prepare_pil(Image.fromarray(image), size)
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
            return prepare_pil(image, size)
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


def _wnid_of_path(relative: str) -> str | None:
    """The WNID of an image from its path relative to the folder (POSIX): its file name's
    ``<WNID>_`` prefix, else the nearest enclosing folder named after a WNID."""
    parts = relative.split("/")
    match = WNID_PATTERN.match(parts[-1])
    if match:
        return match.group(1)
    for folder in reversed(parts[:-1]):
        if WNID_PATTERN.match(folder + "_"):
            return folder
    return None


def _image_files(root: Path) -> list[tuple[str, str]]:
    """Every image file under ``root`` as ``(path relative to root, POSIX; str(root / it))``,
    sorted by the relative path: files with an image suffix (any case), symbolic links to
    files included, linked folders not entered (as ``Path.rglob`` of Python 3.11).

    Strings and ``os.scandir`` only, and a folder's listing is kept while no folder of its tree
    changes (:func:`_folder_signature`): Snakemake's config checks list a data set a dozen
    times before any job, and CIFAR-10's 50,000 training files took seconds each time with a
    ``Path`` per file."""
    base = str(root)
    folder, signature = os.path.abspath(base), _folder_signature(base)
    # a folder changed in the last seconds may change again within the file system's
    # timestamp granularity, unseen by the signature: list it afresh
    settled = max(signature, default=0) < time.time_ns() - SETTLED_NS
    relatives = _listing(folder, signature) if settled else _walk_images(folder)
    return [(relative, relative if base == os.curdir else os.path.join(base, relative))
            for relative in relatives]


#: How long (ns) a folder tree must have been left unchanged before its listing is kept.
SETTLED_NS = 2_000_000_000


def _folder_signature(folder: str) -> tuple:
    """The modification time (ns) of ``folder`` and of every folder inside it (linked folders
    not entered): one of them changes whenever a file is added, removed or renamed anywhere in
    the tree. Reads folder entries' types only, a small part of a full listing's cost."""
    times = []

    def walk(current: str) -> None:
        try:
            times.append(os.stat(current).st_mtime_ns)
            with os.scandir(current) as entries:
                folders = [e.path for e in entries if e.is_dir(follow_symlinks=False)]
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            return
        for inner in sorted(folders):
            walk(inner)

    walk(folder)
    return tuple(times)


@functools.lru_cache(maxsize=8)
def _listing(folder: str, signature: tuple) -> tuple[str, ...]:
    """:func:`_walk_images` of ``folder`` kept for the state ``signature`` describes
    (:func:`_folder_signature`, part of the cache key)."""
    return _walk_images(folder)


def _walk_images(folder: str) -> tuple[str, ...]:
    """The sorted relative POSIX paths of the image files under ``folder``."""
    found: list[str] = []

    def walk(current: str, prefix: str) -> None:
        try:
            entries = list(os.scandir(current))
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            return  # as rglob: a folder that cannot be listed holds nothing
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                walk(entry.path, prefix + entry.name + "/")
            elif (os.path.splitext(entry.name)[1].lower() in IMAGE_SUFFIXES
                  and entry.is_file()):
                found.append(prefix + entry.name)

    walk(folder, "")
    return tuple(sorted(found))


def _image_id(relative: str) -> str:
    """An image's id: its path relative to the folder without the file's suffix."""
    return relative[: len(relative) - len(os.path.splitext(relative)[1])]


def _builtin_index() -> list[IndexEntry]:
    from vcrbench.data.imagenet16 import CATEGORIES16

    entries = []
    for image_id, (spec, category) in sorted(_builtin_images().items()):
        category16 = CATEGORIES16.index(category) if category else -1
        entries.append(IndexEntry(image_id, f"builtin:{spec}", -1, None, category16))
    return entries


def _imagefolder_index(root: Path, classes: str = "imagenet") -> list[IndexEntry]:
    if classes != "imagenet":
        return _class_folder_index(root, classes)
    entries = []
    for relative, path in _image_files(root):
        label, wnid, category16 = _label_of_wnid(_wnid_of_path(relative))
        entries.append(IndexEntry(_image_id(relative), path, label, wnid, category16))
    return entries


def _class_folder_index(root: Path, classes: str) -> list[IndexEntry]:
    """An imagefolder whose parent folder names are class names of ``classes`` (cifar10)."""
    from vcrbench.data.cifar import CIFAR10_CLASSES

    if classes != "cifar10":
        raise VcrbenchError(f"dataset.classes {classes!r}: class-name folders are known for "
                            "cifar10 only; use source cifar100 for CIFAR-100's python version")
    entries = []
    for relative, path in _image_files(root):
        name = relative.rsplit("/", 2)[-2] if "/" in relative else root.name
        if name not in CIFAR10_CLASSES:
            raise VcrbenchError(
                f"{path}: its folder {name!r} is not a CIFAR-10 class ({', '.join(CIFAR10_CLASSES)}"
                "); with dataset.classes: cifar10 every image sits in a folder named after its "
                "class"
            )
        entries.append(IndexEntry(_image_id(relative), path, CIFAR10_CLASSES.index(name),
                                  None, -1))
    return entries


def _cifar_index(dataset: str, root: Path, split: str) -> list[IndexEntry]:
    """Every image of one split of the python version (labels read from its pickles)."""
    from vcrbench.data.cifar import cifar_folder

    folder = cifar_folder(root, dataset)
    data, _ = _cifar_split(dataset, str(folder.resolve()), split)
    coarse = data.coarse_labels
    return [IndexEntry(image_id, cifar_path(dataset, folder, image_id), int(label), None, -1,
                       None if coarse is None else int(coarse[i]))
            for i, (image_id, label) in enumerate(zip(data.image_ids, data.labels, strict=True))]


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
    if any(_wnid_of_path(relative) for relative, _ in files[:10]):
        return _imagefolder_index(root)
    if not labels:
        raise VcrbenchError(
            f"dataset.path {root} holds flat validation images; set dataset.labels to the "
            "ground-truth file (LOC_val_solution.csv, or one WNID per line)"
        )
    truth = _read_ground_truth(Path(labels))
    entries = []
    for relative, path in files:
        stem = _image_id(relative.rsplit("/", 1)[-1])
        if stem not in truth:
            raise VcrbenchError(f"{path}: no ground truth for {stem} in {labels}")
        label, wnid, category16 = _label_of_wnid(truth[stem])
        entries.append(IndexEntry(stem, path, label, wnid, category16))
    return entries


def list_entries(
    source: str,
    path: str | None = None,
    *,
    labels: str | None = None,
    limit: int | None = None,
    categories16_only: bool = False,
    exclude_categories16: bool = False,
    classes: str = "imagenet",
    split: str = "test",
    per_class: int | None = None,
) -> list[IndexEntry]:
    """The entries :func:`build_index` keeps, from file names alone (nothing is decoded; the
    CIFAR pickles are read), sorted by ``image_id``: cheap enough for config checks that need a
    data set's size or image ids before any job (an unreadable file is found only by
    :func:`build_index`)."""
    if source == "builtin":
        entries = _builtin_index()
    elif source == "imagefolder":
        entries = _imagefolder_index(Path(path), classes)
    elif source == "imagenet-val":
        entries = _imagenet_val_index(Path(path), labels)
    elif source in CIFAR_SOURCES:
        entries = _cifar_index(source, Path(path), split)
    else:
        raise VcrbenchError(
            f"dataset.source {source!r} unknown; use builtin, imagefolder, imagenet-val, "
            "cifar10 or cifar100"
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
    if per_class is not None:
        seen: dict[int, int] = {}
        kept = []
        for entry in entries:
            if entry.label >= 0 and seen.get(entry.label, 0) < per_class:
                seen[entry.label] = seen.get(entry.label, 0) + 1
                kept.append(entry)
        if not kept:
            raise VcrbenchError(f"dataset {source} {path or ''}: per_class keeps labelled images "
                                "only, and none has a label")
        entries = kept
    if limit is not None:
        entries = entries[:limit]
    return entries


def dataset_side(dataset: dict) -> int:
    """The side (px) of the images a validated config dataset block prepares, before any job:
    224, or for ``size: native`` 32 for CIFAR sources and the first image's (header only) for a
    folder (that every image shares it is checked when the index is built)."""
    if dataset.get("size", IMAGE_SIZE) != NATIVE:
        return IMAGE_SIZE
    if dataset["source"] in CIFAR_SOURCES:
        from vcrbench.data.cifar import CIFAR_SIZE

        return CIFAR_SIZE
    entries = list_entries_from_config({**dataset, "limit": 1})
    if not entries:
        raise VcrbenchError(f"dataset {dataset['source']} {dataset['path'] or ''}: no images")
    path = entries[0].path
    if path.startswith("builtin:"):
        width, height = _open_builtin(path.removeprefix("builtin:")).size
    else:
        try:
            with Image.open(path) as image:
                width, height = image.size
        except (UnidentifiedImageError, OSError) as error:
            raise VcrbenchError(f"{path}: cannot read this image ({error})") from None
    if width != height:
        raise VcrbenchError(f"{path}: image is {width}x{height} px; dataset.size: native needs "
                            "square images of one size (or use dataset.size: 224)")
    return width


def list_entries_from_config(dataset: dict) -> list[IndexEntry]:
    """:func:`list_entries` of a validated config dataset block."""
    return list_entries(
        dataset["source"],
        dataset["path"],
        labels=dataset["labels"],
        limit=dataset["limit"],
        categories16_only=dataset["categories16_only"],
        exclude_categories16=dataset["exclude_categories16"],
        classes=dataset.get("classes", "imagenet"),
        split=dataset.get("split", "test"),
        per_class=dataset.get("per_class"),
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
    classes: str = "imagenet",
    split: str = "test",
    size: int | str = IMAGE_SIZE,
    per_class: int | None = None,
) -> tuple[pa.Table, int]:
    """The dataset index as a table (:data:`INDEX_SCHEMA`) and the number of skipped images.

    Every image is decoded once here, so a corrupt file stops the run at its first stage
    (or is skipped and logged with ``skip_unreadable``). ``categories16_only`` keeps the images
    of the 16 human-experiment categories (before ``limit``), ``exclude_categories16`` the others.
    With ``size`` ``"native"`` every image must have the first one's square size (an image of
    another size is an error, never skipped), and the table's schema metadata says so
    (:func:`index_size`); CIFAR-100's index has a ``coarse_label`` (int8) column.
    """
    entries = list_entries(source, path, labels=labels, limit=limit,
                           categories16_only=categories16_only,
                           exclude_categories16=exclude_categories16, classes=classes,
                           split=split, per_class=per_class)
    kept, skipped, shape = [], 0, None
    for entry in entries:
        try:
            image = prepare_image(entry.path, size)
        except VcrbenchError as error:
            if not skip_unreadable:
                raise
            skipped += 1
            log.warning("skipped unreadable image: %s", error)
            continue
        if size == NATIVE:
            shape = _check_native_shape(entry, image.shape, shape, kept)
        kept.append(entry)
    if not kept:
        raise VcrbenchError(f"dataset {source} {path or ''}: no readable images")
    schema = INDEX_SCHEMA
    if source == "cifar100":
        schema = schema.append(pa.field("coarse_label", pa.int8(), nullable=False))
    rows = [{k: v for k, v in e.__dict__.items() if k in schema.names} for e in kept]
    table = pa.Table.from_pylist(rows, schema=schema)
    if size == NATIVE:
        table = table.replace_schema_metadata({SIZE_METADATA: NATIVE.encode(),
                                               SIDE_METADATA: str(shape[0]).encode()})
    elif size in CROPS and size != DEFAULT_CROP:
        table = table.replace_schema_metadata({SIZE_METADATA: str(size).encode()})
    return table, skipped


def _check_native_shape(entry: IndexEntry, shape: tuple, first: tuple | None,
                        kept: list[IndexEntry]) -> tuple:
    """The native size shared by every image so far; an error for a non-square image or one of
    another size than the first."""
    if shape[0] != shape[1]:
        raise VcrbenchError(
            f"{entry.path}: image is {shape[1]}x{shape[0]} px; dataset.size: native needs square "
            "images of one size (crop them, or use dataset.size: 224)"
        )
    if first is not None and shape != first:
        raise VcrbenchError(
            f"{entry.path}: image is {shape[1]}x{shape[0]} px but {kept[0].path} is "
            f"{first[1]}x{first[0]}; dataset.size: native needs every image at one size (remove "
            "or resize it, or use dataset.size: 224)"
        )
    return shape


def index_size(index: pa.Table) -> int | str:
    """``"native"`` for an index of native-size images (:func:`build_index`), the crop of
    :data:`CROPS` it was prepared with when not the default, else 224."""
    metadata = index.schema.metadata or {}
    recorded = metadata.get(SIZE_METADATA, b"").decode()
    return recorded if recorded == NATIVE or recorded in CROPS else IMAGE_SIZE


def index_side(index: pa.Table) -> int:
    """The side (px) of the prepared images of an index: 224, or the native side it records."""
    metadata = index.schema.metadata or {}
    if index_size(index) != NATIVE:
        return IMAGE_SIZE
    if SIDE_METADATA not in metadata:
        raise VcrbenchError("a native-size index without its image side; delete it and re-run "
                            "to rebuild it")
    return int(metadata[SIDE_METADATA])


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
        classes=dataset.get("classes", "imagenet"),
        split=dataset.get("split", "test"),
        size=prepared_size(dataset),
        per_class=dataset.get("per_class"),
    )


def prepared_size(dataset: dict) -> int | str:
    """The ``size`` a config dataset block prepares its images at: ``"native"``, 224 (the
    default crop) or its ``crop``."""
    size = dataset.get("size", IMAGE_SIZE)
    crop = dataset.get("crop", DEFAULT_CROP)
    return size if size == NATIVE or crop == DEFAULT_CROP else crop


def load_images(paths: list[str], size: int | str = IMAGE_SIZE) -> np.ndarray:
    """Prepared images for a list of index paths: (N, 224, 224, 3) uint8 (native: (N, H, W, 3),
    every image at one size)."""
    images = [prepare_image(path, size) for path in paths]
    if not images:
        return np.empty((0, IMAGE_SIZE, IMAGE_SIZE, 3), dtype=np.uint8)
    if len({image.shape for image in images}) > 1:
        raise VcrbenchError("images of several sizes cannot be stacked; a native-size data set "
                            "needs every image at one size")
    return np.stack(images)
