"""ImageNet-1k class table: WNIDs, names and label-index helpers.

Labels are indices into the 1,000 ILSVRC2012 WNIDs sorted as strings (``n01440764`` is 0,
``n15075141`` is 999), the order every torchvision/timm ImageNet classifier uses.

Sources (no table is stored in this package, both ship with pinned dependencies):

- WNIDs and WordNet lemmas ("tench, Tinca tinca"): ``timm.data.ImageNetInfo`` (timm's
  ``imagenet_synsets.txt`` / ``imagenet_synset_to_lemma.txt``).
- Short readable names ("tench", "great white shark"): torchvision's ImageNet weights metadata
  (``ResNet50_Weights.IMAGENET1K_V1.meta["categories"]``), which is index-aligned with the WNIDs.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from vcrbench.errors import VcrbenchError

NUM_CLASSES = 1000
_WNID = re.compile(r"n\d{8}")


@functools.cache
def _timm_info():  # -> timm.data.ImageNetInfo (imported lazily)
    try:
        from timm.data import ImageNetInfo
    except ImportError:  # pragma: no cover - timm is a declared dependency
        raise VcrbenchError(
            "the ImageNet class table comes from the timm package, which is not installed; "
            "pip install timm==1.0.31"
        ) from None
    return ImageNetInfo("imagenet-1k")


@functools.cache
def wnids() -> tuple[str, ...]:
    """The 1,000 ImageNet-1k WNIDs in label order (sorted)."""
    info = _timm_info()
    table = tuple(info.index_to_label_name(i) for i in range(info.num_classes()))
    if len(table) != NUM_CLASSES or list(table) != sorted(table):
        raise VcrbenchError("timm's ImageNet-1k synset table is not the 1,000 sorted WNIDs")
    return table


@functools.cache
def wnid_to_index() -> dict[str, int]:
    """WNID -> label index (0..999)."""
    return {wnid: i for i, wnid in enumerate(wnids())}


@functools.cache
def lemmas() -> tuple[str, ...]:
    """WordNet lemmas per label, comma-separated (``"tench, Tinca tinca"``)."""
    info = _timm_info()
    return tuple(info.index_to_description(i) for i in range(NUM_CLASSES))


@functools.cache
def class_names() -> tuple[str, ...]:
    """Short readable class name per label (``"tench"``, ``"great white shark"``)."""
    from torchvision.models import ResNet50_Weights

    names = tuple(ResNet50_Weights.IMAGENET1K_V1.meta["categories"])
    if len(names) != NUM_CLASSES:  # pragma: no cover - defensive
        raise VcrbenchError("torchvision's ImageNet category list does not have 1,000 names")
    return names


def index_of_wnid(wnid: str) -> int:
    """Label index of a WNID; :class:`VcrbenchError` when it is not an ImageNet-1k class."""
    try:
        return wnid_to_index()[wnid]
    except KeyError:
        raise VcrbenchError(f"{wnid!r} is not one of the 1,000 ImageNet-1k WNIDs") from None


def wnid_of_index(label: int) -> str:
    """WNID of a label index (0..999)."""
    if not 0 <= int(label) < NUM_CLASSES:
        raise VcrbenchError(f"label {label} is outside 0..{NUM_CLASSES - 1}")
    return wnids()[int(label)]


def label_of_filename(path: str | Path) -> int:
    """Label of a file named ``<WNID>_<anything>`` (the WNID is the prefix before the first '_').

    Returns -1 when the prefix is not an ImageNet-1k WNID.
    """
    prefix = Path(path).name.split("_", 1)[0]
    if not _WNID.fullmatch(prefix):
        return -1
    return wnid_to_index().get(prefix, -1)
