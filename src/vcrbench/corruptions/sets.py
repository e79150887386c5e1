"""Named corruption sets, usable wherever a config lists corruptions (``corruptions:``,
``overlap.candidates``): a set's name stands for its members, in the order below.

* ``vcr``: the 14 corruptions of the VCR paper, in its order (the default run).
* ``imagenet-c``: the 15 corruptions of ImageNet-C (Hendrycks & Dietterich 2019) in its order:
  noise, blur, weather, digital.
* ``imagenet-c-extra``: its 4 extra (held-out) corruptions.
* ``noc-candidates``: the NOC paper's candidate set S (its Fig. 2 and appendix A): NOC's own
  corruptions plus Gaussian noise, for which NOC uses the ImageNet-C formula (our
  ``gaussian_noise``, whose domain holds NOC's σ 0.05–0.18).
* ``imagenet-noc``: the NOC paper's benchmark ImageNet-NOC, the 8 corruptions Algorithm 1
  selected: quantization, blur, vertical artifacts, rain, border, shear, brightness, hue.
"""

from __future__ import annotations

from collections.abc import Sequence

CORRUPTION_SETS: dict[str, tuple[str, ...]] = {
    "vcr": (
        "shot_noise", "impulse_noise", "gaussian_noise", "glass_blur", "gaussian_blur",
        "defocus_blur", "motion_blur", "brightness", "frost", "blur", "median_blur",
        "hue_saturation_value", "color_jitter", "uniform_noise",
    ),
    "imagenet-c": (
        "gaussian_noise", "shot_noise", "impulse_noise", "defocus_blur", "glass_blur",
        "motion_blur", "zoom_blur", "snow", "frost", "fog", "brightness", "contrast",
        "elastic_transform", "pixelate", "jpeg_compression",
    ),
    "imagenet-c-extra": ("speckle_noise", "gaussian_blur", "spatter", "saturate"),
    "noc-candidates": (
        "noc_quantization", "gaussian_noise", "noc_salt_pepper", "noc_blur",
        "noc_thumbnail_resize", "noc_pixelate", "noc_artifacts", "noc_vertical_artifacts",
        "noc_rhombus", "noc_rain", "noc_circles", "noc_obstruction", "noc_border",
        "noc_translation", "noc_shear", "noc_elastic", "noc_rotation", "noc_backlight",
        "noc_brightness", "noc_contrast", "noc_colour_distortion", "noc_greyscale", "noc_hue",
    ),
    "imagenet-noc": (
        "noc_quantization", "noc_blur", "noc_vertical_artifacts", "noc_rain", "noc_border",
        "noc_shear", "noc_brightness", "noc_hue",
    ),
}


def expand_sets(names: str | Sequence[str]) -> list[str]:
    """Corruption names with every set name replaced by its members, in order, each name once
    (its first occurrence). One name may stand for a one-element list. Names that are not sets
    pass through unchanged (the caller checks them against the registry)."""
    entries = [names] if isinstance(names, str) else list(names)
    out: list[str] = []
    for name in entries:
        members = CORRUPTION_SETS.get(name, (name,)) if isinstance(name, str) else (name,)
        out += [m for m in members if m not in out]
    return out
