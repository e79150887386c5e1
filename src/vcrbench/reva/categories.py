"""The perturbation categories of REVa's groups (REVa Sec. 3.1.2, Table 1).

ImageNet-C's four corruption categories (Hendrycks & Dietterich 2019: noise, blur, weather,
digital; the paper's Table 1 groups its columns by them) for the ImageNet-C corruptions and
their four extra ones; the registry's visual class (``noise``, ``blur``, ``colour``,
``weather``, ``digital``) for any other corruption; one category, ``adversarial``, for every
attack. The visual class is passed in by the caller (the workflow reads it from
:data:`vcrbench.corruptions.CORRUPTIONS`), so this module, and every statistics job that uses
it, stays free of torch.
"""

from __future__ import annotations

from vcrbench.errors import VcrbenchError

#: ImageNet-C corruption (the 15 of the benchmark and its 4 extra ones) -> its category.
REVA_CATEGORIES: dict[str, str] = {
    **dict.fromkeys(("gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise"), "noise"),
    **dict.fromkeys(("defocus_blur", "glass_blur", "motion_blur", "zoom_blur", "gaussian_blur"),
                    "blur"),
    **dict.fromkeys(("snow", "frost", "fog", "brightness", "spatter"), "weather"),
    **dict.fromkeys(("contrast", "elastic_transform", "pixelate", "jpeg_compression",
                     "saturate"), "digital"),
}
#: The category of every attack.
ADVERSARIAL = "adversarial"
#: The category of a corruption that is neither in ImageNet-C nor given a visual class.
OTHER = "other"
#: Values of ``kind`` in the REVa tables that have a category.
KINDS = ("corruption", "attack")


def category_of(name: str, visual_class: str | None = None, *, kind: str = "corruption") -> str:
    """The REVa category of a perturbation.

    Args:
        name: corruption or attack name.
        visual_class: the corruption registry's visual class of ``name`` (used when ``name``
            is not an ImageNet-C corruption); None: unknown.
        kind: ``corruption`` or ``attack`` (every attack is ``adversarial``).

    Returns:
        ImageNet-C's category, else ``visual_class``, else ``other``; ``adversarial`` for an
        attack.
    """
    if kind == "attack":
        return ADVERSARIAL
    if kind != "corruption":
        raise VcrbenchError(f"kind must be one of {KINDS}, got {kind!r}")
    return REVA_CATEGORIES.get(name) or visual_class or OTHER
