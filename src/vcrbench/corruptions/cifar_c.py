"""CIFAR-10-C's five severities in the registry's parameters (``CIFAR_C_SEVERITIES``).

CIFAR-10-C (Hendrycks & Dietterich 2019) was made by ``make_cifar_c.py`` of hendrycks/robustness
(``ImageNet-C/create_c/``): the ImageNet-C corruptions with constants chosen for 32 x 32 images.
Here each of its 19 corruptions (ImageNet-C's 15 and the extras speckle noise, Gaussian blur,
spatter, saturate) has its five severities written in the parameters of the registry entry of the
same name, converted as the registry converts ImageNet-C's own constants (each entry's ``docs``), so
that ``apply_corruption(name, images_32px, point, seeds)`` runs CIFAR-10-C's severity on 32 px
images. ``cifar_c_severities`` returns them as dicts.

What "the same operation" means. Every corruption of the registry quantises by rounding, where
``make_cifar_c.py`` truncates with ``np.uint8`` (except JPEG and pixelate, whose outputs are
already 8-bit): our outputs are on average half a grey level brighter (registry module
docstring). Motion blur is no exception although ImageMagick returns 8 bits: ImageMagick 6.9.11
(Debian's package, measured once by hand for issue 51, not by a test or benchmark here) returns
the *floor* of the float blur on 99.4 to 99.7 % of values, so the registry's rounding is again
+0.5 grey level on average. Snow's streak layer (``cifar_layer``) is rounded to 8 bits after its
blur where ImageMagick floors it: up to 2 grey levels in the output. The random corruptions
draw their noise from the per-sample seed, where
``make_cifar_c.py`` draws from numpy's global generator: the same laws, other numbers. Below,
"exact" means the same function of the image up to those two points and float round-off (at most 1
grey level); every other case is listed as a difference. The registry functions take their sizes
from the image where CIFAR-10-C does (glass blur's shuffling loop runs over ``H - max_delta …
max_delta + 1``, fog's plasma fractal is made on the next power of two ``>= max(H, W)``, i.e. 32 as
CIFAR-10-C's ``mapsize=32``, the elastic affine's points sit ``min(H, W) // 3`` px around the
centre, ``clipped_zoom`` crops ``ceil(H / z)`` px), and all blur and displacement parameters are in
pixels of the image at hand, so CIFAR-10-C's constants (set in pixels of a 32 px image) are used as
they are. Two layers were made to follow the image size for this: frost's photograph and
spatter's settings (below). Where a constant lies off what the registry draws, the point uses
what the registry allows *given* points only, so drawn samples and their bytes are unchanged: a
wider ``point_domain`` (defocus blur's anti-alias 0.6, fog's decay 3 and 2.5, elastic's sigma 0
and 0.96, snow's flake zoom 1 and 1.25) or a *setting* (snow's layer spread, streak radius and
order of steps; zoom blur's ``cifar_factors``; saturate's ``offset_shift``), added to the point
only at the severities that need it (a severity sample's column holds the setting's default at
the others).

Per corruption, CIFAR-10-C's constants ``c`` for severities 1 to 5, the registry point, and whether
it is CIFAR-10-C's operation at 32 px:

- ``gaussian_noise``: ``sigma = c`` = 0.04, 0.06, 0.08, 0.09, 0.10. Exact (in law).
- ``shot_noise``: photons ``lam = c`` = 500, 250, 100, 75, 50, ``noise_scale = lam ** -0.5``
  = 0.0447, 0.0632, 0.1, 0.1155, 0.1414. Exact (in law).
- ``impulse_noise``: ``amount = c`` = 0.01, 0.02, 0.03, 0.05, 0.07 (salt and pepper per value,
  skimage's ``s&p``). Exact (in law).
- ``speckle_noise``: ``sigma = c`` = 0.06, 0.10, 0.12, 0.16, 0.20. Exact (in law).
- ``gaussian_blur``: ``sigma = c`` = 0.4, 0.6, 0.7, 0.8, 1.0 px (skimage ``gaussian``). Exact.
- ``glass_blur``: ``(sigma, max_delta, iterations) = c`` = (0.05, 1, 1), (0.25, 1, 1), (0.4, 1, 1),
  (0.25, 1, 2), (0.4, 1, 2). Exact (in law): the loop ``range(32 - max_delta, max_delta, -1)`` is
  the registry's ``H - max_delta … max_delta + 1`` at H = 32, and the "swap" is the same row-view
  copy. At sigma 0.05 both Gaussian passes are the identity (radius ``int(4 sigma + 0.5) = 0``).
  (The registry's truncation of the first pass to 8 bits keeps a value within 1e-4 under an integer,
  ``blur._TRUNCATION_SLACK``: rarely a pixel 1 level apart.)
- ``defocus_blur``: ``(radius, alias_blur) = c`` = (0.3, 0.4), (0.4, 0.5), (0.5, 0.6), (1, 0.2),
  (1.5, 0.1). Exact (same ``disk`` kernel: a 17 x 17 support, 3 x 3 anti-alias Gaussian).
  Severity 3's alias_blur 0.6 lies above the drawn domain's 0.5 and is allowed for given points
  (``point_domain``). Before issue 52 it was clipped to 0.5: severity 2's kernel (a 3 x 3
  Gaussian of 0.5, centre weight 0.62, where CIFAR-10-C's radius 0.5 disk, one pixel, gives a
  Gaussian of 0.6, centre weight 0.45), severities 2 and 3 the same image.
- ``motion_blur``: ``(radius, sigma) = c`` = (6, 1), (6, 1.5), (6, 2), (8, 2), (9, 2.5) px,
  direction U(-45, 45) degrees. Not ImageMagick: CIFAR-10-C ran ImageMagick's
  ``MagickMotionBlurImage`` (via Wand) on the 8-bit PNG; the registry runs ``imagecorruptions``'
  numpy port of its kernel (same width ``2 radius + 1``, same one-sided Gaussian weights, same tap
  offsets ``ceil(i cos a - 0.5)``, ``ceil(i sin a - 0.5)``, edges replicated like ImageMagick's
  default ``edge`` virtual pixels) in float, without ImageMagick's 16-bit quantum and its rounding
  to 8 bits: ImageMagick's output is the floor of its float blur on 99.4 to 99.7 % of values
  (the measurement above), the registry's is rounded, +0.5 grey level on average. The port's
  "stop at the first tap outside the image" never acts at 32 px (at most 18 px of shift). No
  test compares it with ImageMagick itself (CI has none).
- ``zoom_blur``: ``zoom`` = the largest factor of CIFAR-10-C's ``np.arange(1, stop, 0.01)`` = 1.06,
  1.11, 1.15, 1.20, 1.25 (the first has 7 factors: ``arange(1, 1.06, 0.01)`` ends at 1.06).
  Exact (the same factors, to the float, and the same ``clipped_zoom``; its centred trim
  ``(out - 32) // 2`` is 0 for these zooms, like the registry's top-left crop). Severities 2 and
  3 are on the registry's drawn path (ImageNet-C's factors every 0.01 up to 1.15); severities 1,
  4 and 5 set the registry's setting ``cifar_factors`` = 1 (given points only; drawn samples
  keep 0): CIFAR-10-C's factors every 0.01 up to ``zoom`` (``imagenet_c_more.cifar_zoom_factors``),
  each copy ``clipped_zoom`` trimmed about its centre, where the drawn path mixes enlargements
  about the centre into zooms under 1.11 (``imagenet_c_more.ZOOM_CENTRED_BELOW``, chosen for 224
  px: 5/6 of the image at 1.06) and steps ImageNet-C's coarser 0.02 at 1.20 (11 factors where
  CIFAR-10-C has 21) and 0.0208 at 1.25 (13 for 26). Before issue 52 severities 1, 4 and 5 were
  the drawn path's: 5 to 7 grey levels from CIFAR-10-C's on average on smooth images at 1 (20 on
  white noise), 0.6 to 0.9 at 4 and 5 (2.5 and 3.3 on white noise).
- ``snow``: CIFAR-10-C's ``(loc, scale, zoom, threshold, blur radius, blur sigma, mix)`` are
  ``snow_mean`` = loc, ``threshold``, ``flake_zoom`` = zoom, ``blur_sigma``, ``blend`` = mix,
  ``opacity`` = 1, and the registry's snow settings (given points only; drawn samples keep their
  defaults) ``layer_std`` = scale, ``blur_radius`` = radius and ``cifar_layer`` = 1: the zoomed
  layer trimmed about its centre, thresholded, truncated to 8 bits, then blurred, as
  ``make_cifar_c.py`` does. CIFAR-10-C's zoom 1 and 1.25 lie under the drawn domain's 1.5 and
  are allowed for given points (``point_domain``). Every severity is CIFAR-10-C's operation
  except for the streak blur, which is ImageNet-C's numpy port of ImageMagick's motion blur
  (``kernels.motion_taps``, as ``motion_blur``) where CIFAR-10-C calls ImageMagick (tested
  against a step-by-step reference with that kernel, fed the same draws), and the blurred layer
  is rounded to 8 bits where ImageMagick floors it (up to 2 grey levels in the output).
  Before 2026-11-27
  the layer's spread (0.3) and radius (12) were fixed, zooms clipped to 1.5 and the layer
  blurred in float before its top-left trim: severities 1, 2 had darker flakes at the same
  z-score, 1, 2, 5 flakes 1.2 to 1.5 times larger, 5 a slightly shorter streak.
- ``frost``: ``(image_weight, frost_weight) = c`` = (1, 0.2), (1, 0.3), (0.9, 0.4), (0.85, 0.4),
  (0.75, 0.45); the photograph is one of frost1 to frost5 (``randint(5)``) in both. Every severity
  is CIFAR-10-C's operation: at 32 px ``weather.frost_layer`` shrinks the photograph by 0.2
  (``cv2.resize``, bilinear) before the random 32 x 32 crop, as CIFAR-10-C does (its scale is
  ``0.2 · side / 32`` below 176 px, ImageNet-C's enlargement by 1.1 above); only the photograph
  index and the crop corner come from the sample's seed instead of numpy's global stream.
- ``fog``: ``fog_weight = c / (1 + c)`` for CIFAR-10-C's strength c = 0.2, 0.5, 0.75, 1, 1.5 (1/6,
  1/3, 3/7, 1/2, 3/5); ``decay`` = CIFAR-10-C's wibbledecay 3, 3, 2.5, 2, 1.75. Exact (in law): a
  32 x 32 plasma fractal (``mapsize=32``), the same diamond-square steps and mixing. Decay 3 and
  2.5 (severities 1 to 3) lie above the drawn domain's 2 and are allowed for given points
  (``point_domain``). Before issue 52 they were clipped to 2: a rougher fog than CIFAR-10-C's
  (the noise amplitude fell by 4 per octave instead of 9, 9 and 6.25).
- ``brightness``: ``shift = c`` = 0.05, 0.1, 0.15, 0.2, 0.3 (added to V in HSV). Exact.
- ``contrast``: ``contrast = c`` = 0.75, 0.5, 0.4, 0.3, 0.15 (per-channel means). Exact.
- ``elastic_transform``: ``(alpha, sigma, affine)`` = CIFAR-10-C's ``32 * (...)``: (0, 0, 2.56),
  (1.6, 6.4, 2.24), (2.56, 1.92, 1.92), (3.2, 1.28, 1.6), (3.2, 0.96, 0.96). Exact (in law; the
  affine by float bilinear sampling, which OpenCV's ``warpAffine`` before 4.11 rounded to 1/32
  px). Severity 1's sigma 0 and severity 5's 0.96 lie under the drawn domain's 1 and are allowed
  for given points (``point_domain``; sigma 0 is an unsmoothed field, and with severity 1's alpha
  0 no field at all). Before issue 52 both were raised to 1: severity 1's image was the same,
  severity 5's field smoothed with 1 px and alpha raised to 3.333 to keep the displacement's
  spread (0.5 grey levels from CIFAR-10-C's on average, fed the same draws).
- ``pixelate``: ``block = 1 / c`` for c = 0.95, 0.9, 0.85, 0.75, 0.65 (1.053, 1.111, 1.176, 1.333,
  1.538): Pillow's BOX reduction to ``int(32 c)`` = 30, 28, 27, 24, 20 px. Exact (within 1 grey
  level: Pillow rounds after each axis): CIFAR-10-C enlarges back with BOX where the registry uses
  NEAREST, but enlarging to 32 px the two are the same selection (each output pixel's box holds
  exactly one input pixel, ``floor((j + 0.5) n / 32)``, as no centre falls on a pixel boundary).
- ``jpeg_compression``: ``quality = c`` = 80, 65, 58, 50, 40 (Pillow's encoder). Exact.
- ``spatter``: ``strength`` = 1, 3, 4, 5, 6, the knots of the registry's strength path, which
  at 32 px runs through CIFAR-10-C's settings (loc, scale, blur sigma, threshold, intensity or
  mud blur, mud) = (0.62, 0.1, 0.7, 0.7, 0.5, water), (0.65, 0.1, 0.8, 0.7, 0.5, water), (0.65,
  0.3, 1, 0.69, 0.5, water), (0.65, 0.1, 0.7, 0.69, 0.6, mud), (0.65, 0.1, 0.5, 0.68, 0.6, mud)
  (``digital.spatter_severities``: the layers follow the image's side, ImageNet-C's settings at
  224 px). Every severity is CIFAR-10-C's operation (fed the same noise, within a grey level:
  the registry rounds where CIFAR-10-C truncates). Before 2026-11-27 the path ran through
  ImageNet-C's settings at every size: water matched on its amount, in larger blobs, and two to
  three times CIFAR-10-C's mud.
- ``saturate``: CIFAR-10-C's ``S' = clip(S a + b)`` with (a, b) = (0.3, 0), (0.1, 0), (1.5, 0), (2,
  0.1), (2.5, 0.2). For a < 1: ``saturation = a - 1`` = -0.7, -0.9; for a > 1: ``saturation = 1 - 1
  / a`` = 1/3, 0.5, 0.6, with the registry's offset tied to it (``digital.saturate_gain_offset``:
  0 up to saturation 0.5, 1/30 at 0.6). Exact. Severities 4 and 5 set the registry's setting
  ``offset_shift`` (given points only; drawn samples keep 0), added to the tied offset: 0.1 and
  0.2 - 1/30, so that b is CIFAR-10-C's 0.1 and 0.2. Before issue 52 they were least-squares fits
  on the tied path, 0.564 and 0.692 (a = 2.29, b = 0.021 and a = 3.25, b = 0.064): grey and weakly
  saturated pixels got less colour (S' = 0.02 and 0.06 instead of 0.1 and 0.2 at S = 0).

In short, at 32 px: exact for gaussian_noise, shot_noise, impulse_noise, speckle_noise,
gaussian_blur, glass_blur, defocus_blur, zoom_blur, fog, brightness, contrast, elastic_transform,
pixelate, jpeg_compression, spatter, saturate; the numpy port of ImageMagick for motion_blur;
exact for frost with the photograph and crop drawn from the sample's seed; ImageNet-C's numpy
port of ImageMagick's motion blur for snow's streaks.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from vcrbench.corruptions.digital import saturate_gain_offset
from vcrbench.corruptions.registry import get_corruption, validate_point
from vcrbench.errors import VcrbenchError


def _saturate(gain: float, offset: float) -> dict[str, float]:
    """CIFAR-10-C's ``S' = clip(S gain + offset)`` (gain > 1) as a registry point: the saturation
    of that gain, and ``offset_shift`` where its offset is not the registry's tied one."""
    saturation = 1.0 - 1.0 / gain
    shift = offset - saturate_gain_offset(saturation)[1]
    return {"saturation": saturation} | ({"offset_shift": shift} if shift else {})


def _levels(names: tuple[str, ...], *levels: tuple[float, ...]) -> tuple[dict[str, float], ...]:
    return tuple({n: float(v) for n, v in zip(names, level, strict=True)} for level in levels)


def _single(name: str, values: tuple[float, ...]) -> tuple[dict[str, float], ...]:
    return _levels((name,), *((v,) for v in values))


_SNOW = ("snow_mean", "threshold", "flake_zoom", "blur_sigma", "blend", "opacity", "layer_std",
         "blur_radius", "cifar_layer")

_TABLE: dict[str, tuple[dict[str, float], ...]] = {
    "gaussian_noise": _single("sigma", (0.04, 0.06, 0.08, 0.09, 0.10)),
    "shot_noise": _single("noise_scale", tuple(lam ** -0.5 for lam in (500, 250, 100, 75, 50))),
    "impulse_noise": _single("amount", (0.01, 0.02, 0.03, 0.05, 0.07)),
    "speckle_noise": _single("sigma", (0.06, 0.1, 0.12, 0.16, 0.2)),
    "gaussian_blur": _single("sigma", (0.4, 0.6, 0.7, 0.8, 1.0)),
    "glass_blur": _levels(("sigma", "max_delta", "iterations"),
                          (0.05, 1, 1), (0.25, 1, 1), (0.4, 1, 1), (0.25, 1, 2), (0.4, 1, 2)),
    # severity 3's alias_blur 0.6 is above the drawn domain's 0.5 (the point domain's 0.6)
    "defocus_blur": _levels(("radius", "alias_blur"),
                            (0.3, 0.4), (0.4, 0.5), (0.5, 0.6), (1, 0.2), (1.5, 0.1)),
    "motion_blur": _levels(("radius", "sigma"), (6, 1), (6, 1.5), (6, 2), (8, 2), (9, 2.5)),
    # the largest factor of np.arange(1, 1.06 / 1.11 / 1.16 / 1.21 / 1.26, 0.01); 1, 4 and 5
    # with CIFAR-10-C's factors (2 and 3: the registry's are the same, docstring)
    "zoom_blur": tuple({"zoom": z} | ({"cifar_factors": 1.0} if k in (1, 4, 5) else {})
                       for k, z in enumerate((1.06, 1.11, 1.15, 1.20, 1.25), 1)),
    # CIFAR-10-C's (loc, threshold, zoom, blur sigma, mix), opacity 1, and the settings:
    # (scale, blur radius) and its order of the layer's steps (docstring)
    "snow": _levels(_SNOW,
                    (0.1, 0.6, 1.0, 3, 0.95, 1, 0.2, 8, 1),
                    (0.1, 0.5, 1.0, 4, 0.9, 1, 0.2, 10, 1),
                    (0.15, 0.55, 1.75, 4, 0.9, 1, 0.3, 10, 1),
                    (0.25, 0.6, 2.25, 6, 0.85, 1, 0.3, 12, 1),
                    (0.3, 0.65, 1.25, 12, 0.8, 1, 0.3, 14, 1)),
    "frost": _levels(("image_weight", "frost_weight"),
                     (1, 0.2), (1, 0.3), (0.9, 0.4), (0.85, 0.4), (0.75, 0.45)),
    # fog_weight = c / (1 + c); decay 3, 3, 2.5 above the drawn domain's 2 (point domain's 3)
    "fog": _levels(("fog_weight", "decay"),
                   *((c / (1 + c), d) for c, d in
                     ((0.2, 3), (0.5, 3), (0.75, 2.5), (1, 2), (1.5, 1.75)))),
    "brightness": _single("shift", (0.05, 0.1, 0.15, 0.2, 0.3)),
    "contrast": _single("contrast", (0.75, 0.5, 0.4, 0.3, 0.15)),
    # sigma 0 and 0.96 under the drawn domain's 1 (the point domain's 0)
    "elastic_transform": _levels(("alpha", "sigma", "affine"),
                                 (32 * 0.0, 32 * 0.0, 32 * 0.08),
                                 (32 * 0.05, 32 * 0.2, 32 * 0.07),
                                 (32 * 0.08, 32 * 0.06, 32 * 0.06),
                                 (32 * 0.1, 32 * 0.04, 32 * 0.05),
                                 (32 * 0.1, 32 * 0.03, 32 * 0.03)),
    "pixelate": _single("block", tuple(1 / c for c in (0.95, 0.9, 0.85, 0.75, 0.65))),
    "jpeg_compression": _single("quality", (80, 65, 58, 50, 40)),
    # the knots of the strength path, CIFAR-10-C's settings at 32 px (docstring)
    "spatter": _single("strength", (1.0, 3.0, 4.0, 5.0, 6.0)),
    # a - 1 below 1, 1 - 1 / a above; 4 and 5 shift the tied offset to CIFAR-10-C's (docstring)
    "saturate": (*_single("saturation", (0.3 - 1, 0.1 - 1, 1 - 1 / 1.5)),
                 _saturate(2.0, 0.1), _saturate(2.5, 0.2)),
}


def _freeze(table: dict[str, tuple[dict[str, float], ...]]
            ) -> Mapping[str, tuple[Mapping[str, float], ...]]:
    out = {}
    for name, levels in table.items():
        spec = get_corruption(name)
        if spec.source != "imagenet-c" or len(levels) != 5:
            raise ValueError(f"{name}: CIFAR-10-C has five severities of ImageNet-C corruptions")
        for level in levels:
            validate_point(spec, level)
        out[name] = tuple(MappingProxyType(dict(level)) for level in levels)
    return MappingProxyType(out)


#: CIFAR-10-C's severities 1 to 5 per corruption, in the registry's parameters (docstring).
CIFAR_C_SEVERITIES: Mapping[str, tuple[Mapping[str, float], ...]] = _freeze(_TABLE)


def cifar_c_severities(name: str) -> tuple[dict[str, float], ...]:
    """CIFAR-10-C's five severities (1 to 5) of a corruption, as registry parameter points.

    ``VcrbenchError`` for an unknown corruption or one without CIFAR-10-C constants.
    """
    spec = get_corruption(name)
    if spec.name not in CIFAR_C_SEVERITIES:
        raise VcrbenchError(
            f"{name} has no CIFAR-10-C severities (it comes from {spec.source}); corruptions "
            f"that do: {', '.join(CIFAR_C_SEVERITIES)}")
    return tuple(dict(level) for level in CIFAR_C_SEVERITIES[spec.name])
