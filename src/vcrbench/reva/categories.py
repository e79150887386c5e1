"""The corruption categories of REVa's groups: ImageNet-C's four (Hendrycks & Dietterich 2019:
noise, blur, weather, digital; the paper's Table 1 uses them), the registry's visual class for a
corruption outside ImageNet-C, and one category for all adversarial attacks."""

from __future__ import annotations

#: ImageNet-C corruption (and its four extra ones) -> category.
IMAGENET_C_CATEGORIES: dict[str, str] = {
    **dict.fromkeys(("gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise"), "noise"),
    **dict.fromkeys(("defocus_blur", "glass_blur", "motion_blur", "zoom_blur", "gaussian_blur"),
                    "blur"),
    **dict.fromkeys(("snow", "frost", "fog", "brightness", "spatter"), "weather"),
    **dict.fromkeys(("contrast", "elastic_transform", "pixelate", "jpeg_compression",
                     "saturate"), "digital"),
}
#: The category of every attack.
ADVERSARIAL = "adversarial"


def category_of(corruption: str, visual_class: str | None = None) -> str:
    """ImageNet-C's category of a corruption, else its registry ``visual_class`` (given by the
    caller, so that statistics jobs need not load the registry), else ``other``."""
    return IMAGENET_C_CATEGORIES.get(corruption) or visual_class or "other"
