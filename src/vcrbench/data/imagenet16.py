"""The 16 entry-level categories of the human experiments and the 16-class decision.

Source: R. Geirhos, C. R. M. Temme, J. Rauber, H. H. Schuett, M. Bethge, F. A. Wichmann,
"Generalisation in humans and deep neural networks", NeurIPS 2018 (the "16-class-ImageNet"
categories; the ImageNet members are those the authors' evaluation code uses, also in
bethgelab/model-vs-human ``helper/human_categories.py`` as ImageNet indices). 207 of the 1,000
ImageNet-1k classes belong to exactly one of the 16 categories; the other 793 to none.

A model's 16-class decision is the category with the highest *mean* softmax probability over
its member classes (Geirhos et al. 2018, section "Mapping DNN outputs to 16 categories").
Categories are indexed 0..15 in alphabetical order (:data:`CATEGORIES16`); -1 means "none".
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np

from vcrbench.errors import VcrbenchError

if TYPE_CHECKING:
    import torch

#: Category -> member WNIDs (sorted), 207 ImageNet-1k classes in total.
# fmt: off
WNIDS16: dict[str, tuple[str, ...]] = {
    "airplane": (
        "n02690373",
    ),
    "bear": (
        "n02132136", "n02133161", "n02134084", "n02134418",
    ),
    "bicycle": (
        "n02835271", "n03792782",
    ),
    "bird": (
        "n01514859", "n01530575", "n01531178", "n01532829", "n01534433", "n01537544",
        "n01558993", "n01560419", "n01582220", "n01592084", "n01601694", "n01614925",
        "n01616318", "n01622779", "n01795545", "n01796340", "n01797886", "n01798484",
        "n01817953", "n01818515", "n01819313", "n01820546", "n01824575", "n01828970",
        "n01829413", "n01833805", "n01843065", "n01843383", "n01855032", "n01855672",
        "n01860187", "n02002556", "n02002724", "n02006656", "n02007558", "n02009229",
        "n02009912", "n02011460", "n02013706", "n02017213", "n02018207", "n02018795",
        "n02025239", "n02027492", "n02028035", "n02033041", "n02037110", "n02051845",
        "n02056570",
    ),
    "boat": (
        "n02951358", "n03344393", "n03662601", "n04273569", "n04612504",
    ),
    "bottle": (
        "n02823428", "n03937543", "n03983396", "n04557648", "n04560804", "n04579145",
        "n04591713",
    ),
    "car": (
        "n02814533", "n03100240", "n04285008",
    ),
    "cat": (
        "n02123045", "n02123159", "n02123394", "n02123597", "n02124075", "n02125311",
    ),
    "chair": (
        "n02791124", "n03376595", "n04099969", "n04429376",
    ),
    "clock": (
        "n02708093", "n03196217", "n04548280",
    ),
    "dog": (
        "n02085782", "n02085936", "n02086079", "n02086240", "n02086646", "n02086910",
        "n02087046", "n02087394", "n02088094", "n02088238", "n02088364", "n02088466",
        "n02088632", "n02089078", "n02089867", "n02089973", "n02090379", "n02090622",
        "n02090721", "n02091032", "n02091134", "n02091244", "n02091467", "n02091635",
        "n02091831", "n02092002", "n02092339", "n02093256", "n02093428", "n02093647",
        "n02093754", "n02093859", "n02093991", "n02094114", "n02094258", "n02094433",
        "n02095314", "n02095570", "n02095889", "n02096051", "n02096294", "n02096437",
        "n02096585", "n02097047", "n02097130", "n02097209", "n02097298", "n02097474",
        "n02097658", "n02098105", "n02098286", "n02099267", "n02099429", "n02099601",
        "n02099712", "n02099849", "n02100236", "n02100583", "n02100735", "n02100877",
        "n02101006", "n02101388", "n02101556", "n02102040", "n02102177", "n02102318",
        "n02102480", "n02102973", "n02104029", "n02104365", "n02105056", "n02105162",
        "n02105251", "n02105505", "n02105641", "n02105855", "n02106030", "n02106166",
        "n02106382", "n02106550", "n02106662", "n02107142", "n02107312", "n02107574",
        "n02107683", "n02107908", "n02108000", "n02108422", "n02108551", "n02108915",
        "n02109047", "n02109525", "n02109961", "n02110063", "n02110185", "n02110627",
        "n02110806", "n02110958", "n02111129", "n02111277", "n02111500", "n02112018",
        "n02112350", "n02112706", "n02113023", "n02113624", "n02113712", "n02113799",
        "n02113978",
    ),
    "elephant": (
        "n02504013", "n02504458",
    ),
    "keyboard": (
        "n03085013", "n04505470",
    ),
    "knife": (
        "n03041632",
    ),
    "oven": (
        "n04111531",
    ),
    "truck": (
        "n03345487", "n03417042", "n03770679", "n03796401", "n03930630", "n03977966",
        "n04461696", "n04467665",
    ),
}
# fmt: on

#: The 16 categories in alphabetical order; a 16-class decision is an index into this tuple.
CATEGORIES16: tuple[str, ...] = tuple(sorted(WNIDS16))


@functools.cache
def _label_to_category16() -> np.ndarray:
    from vcrbench.data.imagenet import index_of_wnid

    table = np.full(1000, -1, dtype=np.int8)
    for c, category in enumerate(CATEGORIES16):
        for wnid in WNIDS16[category]:
            table[index_of_wnid(wnid)] = c
    table.setflags(write=False)
    return table


def label_to_category16() -> np.ndarray:
    """(1000,) int8 read-only: the 16-class index of every ImageNet-1k label, -1 for none."""
    return _label_to_category16()


def category16_of_label(label: int) -> int:
    """16-class index (0..15) of an ImageNet-1k label; -1 when the class is in none of the 16."""
    if not 0 <= int(label) < 1000:
        return -1
    return int(_label_to_category16()[int(label)])


@functools.cache
def member_indices(category: str | int) -> tuple[int, ...]:
    """Sorted ImageNet-1k label indices of one category (name or 0..15 index)."""
    if isinstance(category, str):
        if category not in WNIDS16:
            raise VcrbenchError(f"{category!r} is not one of the 16 categories {CATEGORIES16}")
        c = CATEGORIES16.index(category)
    else:
        c = int(category)
        if not 0 <= c < len(CATEGORIES16):
            raise VcrbenchError(f"16-class index {category} is outside 0..15")
    return tuple(int(i) for i in np.flatnonzero(_label_to_category16() == c))


def mean_probabilities16(probabilities: np.ndarray) -> np.ndarray:
    """(B, 1000) softmax probabilities -> (B, 16) float64 mean probability per category."""
    p = np.asarray(probabilities, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] != 1000:
        raise VcrbenchError(f"expected (B, 1000) class probabilities, got shape {p.shape}")
    return np.stack(
        [p[:, list(member_indices(c))].mean(axis=1) for c in range(len(CATEGORIES16))], axis=1
    )


def decide_16(probabilities: np.ndarray | torch.Tensor) -> np.ndarray:
    """16-class decisions: (B, 1000) probabilities (numpy or torch) -> (B,) int8 in 0..15.

    The category with the highest mean probability over its member classes (means in float64);
    exact ties go to the alphabetically first category. Pass softmax probabilities, not logits
    (the mean of logits ranks categories differently).
    """
    if hasattr(probabilities, "detach"):
        probabilities = probabilities.detach().float().cpu().numpy()
    return np.argmax(mean_probabilities16(probabilities), axis=1).astype(np.int8)
