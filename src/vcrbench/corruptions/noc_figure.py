"""NOC's candidate corruptions of its appendix figure (Laugros et al., Figures 2 and 6): border,
translation, shear, elastic, rotation, backlight, brightness, contrast, colour distortion,
greyscale and hue.

The paper shows these only as pictures (their descriptions and severity ranges were images that
did not survive in the text), so each is implemented here as a standard, clearly defined
operation; the registry's ``docs`` say which choices are ours.

Units. Lengths are in *pixels of a 224 px side*: on an ``H x W`` image a length ``d`` is
``d * W / 224`` px horizontally and ``d * H / 224`` px vertically (the image is treated as a
224 x 224 square stretched to its shape, so the same parameter does the same to any size).

Geometry. Every geometric corruption is a backward warp: output pixel ``p`` takes the input at a
location ``T(p)`` by bilinear interpolation with ``torch.nn.functional.grid_sample(mode=
"bilinear", padding_mode="zeros", align_corners=False)``: locations are in normalised
coordinates where ``-1`` and ``+1`` are the *outer edges* of the border pixels (pixel ``j``'s
centre is at ``(2 j + 1) / W - 1``), the convention of ``torchvision.transforms.v2.functional``'s
``affine``, ``rotate`` and ``elastic``; locations outside the image read black (zeros), so
exposed areas are black. Affine maps are ``theta`` matrices for ``affine_grid`` (output
normalised coordinates -> input normalised coordinates). Grids are built on the CPU in float64
from the sample's own parameters and seed and then moved to the image's device and dtype, so
they are the same on every device and in every batch.

Randomness (direction, sign, light position, gains, displacement field) comes only from the
sample's seed, through :func:`vcrbench.corruptions.generators.torch_generator`; parameter values
at the clean end return the image itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from vcrbench.corruptions.colour import hsv_to_rgb, rgb_to_hsv
from vcrbench.corruptions.generators import torch_generator
from vcrbench.corruptions.kernels import gaussian_taps, separable_filter

#: The reference side: lengths are in pixels of a 224 px side.
SIDE = 224.0
#: ITU-R BT.601 luma weights (OpenCV's RGB2GRAY, the grey image VIF is computed on).
LUMA = (0.299, 0.587, 0.114)
#: Backlight: radius (px of a 224 px side) where the light has fallen to half its peak.
BACKLIGHT_RADIUS = 56.0


# --------------------------------------------------------------------------- keyed draws


def keyed_sign(seed: int) -> float:
    """+1 or -1 with equal odds: the first ``torch.rand`` of the sample's generator < 0.5."""
    u = torch.rand(1, generator=torch_generator(seed), dtype=torch.float64)
    return 1.0 if float(u) < 0.5 else -1.0


def keyed_direction(seed: int) -> float:
    """An angle uniform in ``[0, 2 pi)`` (radians) from the sample's generator."""
    u = torch.rand(1, generator=torch_generator(seed), dtype=torch.float64)
    return float(u) * 2.0 * math.pi


def keyed_light_centre(seed: int) -> tuple[float, float]:
    """Backlight centre ``(u, v)`` as fractions of the width and height, each uniform in
    ``[0.25, 0.75]`` (the central half of each axis)."""
    u = torch.rand(2, generator=torch_generator(seed), dtype=torch.float64)
    return 0.25 + 0.5 * float(u[0]), 0.25 + 0.5 * float(u[1])


def keyed_gain_exponents(seed: int) -> np.ndarray:
    """Colour distortion: three exponents ``z_c`` uniform in ``[-1, 1]`` (R, G, B)."""
    u = torch.rand(3, generator=torch_generator(seed), dtype=torch.float64)
    return (2.0 * u - 1.0).numpy()


def unit_displacement_field(seed: int, height: int, width: int, smoothness: float) -> np.ndarray:
    """A smooth random field ``(2, H, W)`` (x then y component) with RMS 1 over both components.

    White Gaussian noise (``torch.randn`` from the sample's generator, float64, on the CPU) is
    smoothed by a Gaussian of standard deviation ``smoothness * W / 224`` px along x and
    ``smoothness * H / 224`` px along y (scipy's taps, truncated at 4 sigma, borders reflected
    as ``gfedcb|abcd``), then divided by its root mean square.
    """
    noise = torch.randn((2, height, width), generator=torch_generator(seed), dtype=torch.float64)
    taps_h = gaussian_taps(smoothness * height / SIDE)
    taps_w = gaussian_taps(smoothness * width / SIDE)
    field = separable_filter(noise, taps_h, taps_w, "reflect101")
    rms = float(field.pow(2).mean().sqrt())
    return (field / rms).numpy() if rms > 0 else field.numpy()


# --------------------------------------------------------------------------- warping


def _warp(image: torch.Tensor, grid: torch.Tensor) -> torch.Tensor:
    """Bilinear backward warp of one ``(3, H, W)`` image by a float64 CPU ``(1, H, W, 2)`` grid."""
    grid = grid.to(device=image.device, dtype=image.dtype)
    out = F.grid_sample(image[None], grid, mode="bilinear", padding_mode="zeros",
                        align_corners=False)
    return out[0]


def affine_warp(image: torch.Tensor, theta: np.ndarray) -> torch.Tensor:
    """Warp one ``(3, H, W)`` image by a ``(2, 3)`` ``affine_grid`` matrix (normalised
    coordinates, ``align_corners=False``); the grid is computed in float64 on the CPU."""
    _, h, w = image.shape
    theta_t = torch.as_tensor(np.asarray(theta, dtype=np.float64)).reshape(1, 2, 3)
    grid = F.affine_grid(theta_t, [1, 3, h, w], align_corners=False)
    return _warp(image, grid)


def translation_theta(distance: float, angle: float) -> np.ndarray:
    """Content moved by ``distance`` px (of 224) in direction ``angle`` (radians, x right, y down):
    output ``p`` reads the input at ``p - t``, ``t = distance * (cos, sin) / 224`` of each side,
    i.e. ``2 * distance * (cos, sin) / 224`` in normalised units."""
    tx = 2.0 * distance * math.cos(angle) / SIDE
    ty = 2.0 * distance * math.sin(angle) / SIDE
    return np.array([[1.0, 0.0, -tx], [0.0, 1.0, -ty]])


def shear_theta(factor: float, height: int, width: int) -> np.ndarray:
    """Horizontal shear about the centre: the row ``Y`` px below the centre moves right by
    ``factor * Y`` px (output ``(X, Y)`` reads the input at ``(X - factor * Y, Y)``, in pixels
    from the centre). In normalised units ``x_in = x - factor * (H / W) * y``."""
    return np.array([[1.0, -factor * height / width, 0.0], [0.0, 1.0, 0.0]])


def rotation_theta(degrees: float, height: int, width: int) -> np.ndarray:
    """Rotation about the centre by ``degrees``, counter-clockwise on screen for positive angles
    (torchvision's convention), isotropic in pixels: output ``(X, Y)`` (px from the centre, y
    down) reads the input at ``(c X - s Y, s X + c Y)``, ``c, s = cos, sin(angle)``."""
    a = math.radians(degrees)
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s * height / width, 0.0], [s * width / height, c, 0.0]])


# --------------------------------------------------------------------------- geometric / occlusion


def _values(params: dict[str, np.ndarray], name: str) -> list[float]:
    return [float(v) for v in params[name]]


def border_keep(width_224: float, height: int, width: int) -> torch.Tensor:
    """The fraction of each pixel left uncovered by a frame ``width_224`` px (of 224) wide:
    ``(H, W)`` float64. Frame bands are ``bx = width_224 * W / 224`` px wide on the left and
    right and ``by = width_224 * H / 224`` px on top and bottom; a pixel ``[j, j + 1)`` that a
    band covers in part is covered by that fraction (area coverage, so the frame grows
    continuously); keep = ``(1 - cover_x) * (1 - cover_y)``."""
    def cover(n: int, band: float) -> torch.Tensor:
        j = torch.arange(n, dtype=torch.float64)
        first = (band - j).clamp(0.0, 1.0)
        last = (j + 1.0 - (n - band)).clamp(0.0, 1.0)
        return (first + last).clamp(max=1.0)

    cy = cover(height, width_224 * height / SIDE)
    cx = cover(width, width_224 * width / SIDE)
    return (1.0 - cy)[:, None] * (1.0 - cx)[None, :]


def border(images: torch.Tensor, params: dict[str, np.ndarray],
           seeds: Sequence[int]) -> torch.Tensor:
    """A black frame ``width`` px (of 224) wide on every side: ``x * keep``."""
    _, _, h, w = images.shape
    out = []
    for image, width_224 in zip(images, _values(params, "width"), strict=True):
        if width_224 == 0:
            out.append(image)
            continue
        keep = border_keep(width_224, h, w).to(device=image.device, dtype=image.dtype)
        out.append(image * keep)
    return torch.stack(out)


def _warp_each(images: torch.Tensor, values: np.ndarray, seeds: Sequence[int],
               theta: Callable[[float, int, int, int], torch.Tensor]) -> torch.Tensor:
    """Each image warped by the affine ``theta(value, seed, height, width)``; a value of 0 (the
    clean end) returns the image itself."""
    _, _, h, w = images.shape
    return torch.stack([
        image if value == 0 else affine_warp(image, theta(float(value), int(seed), h, w))
        for image, value, seed in zip(images, values, seeds, strict=True)])


def translation(images: torch.Tensor, params: dict[str, np.ndarray],
                seeds: Sequence[int]) -> torch.Tensor:
    """Shift by ``distance`` px (of 224) in a direction uniform on the circle (from the seed)."""
    return _warp_each(images, _values(params, "distance"), seeds,
                      lambda d, seed, h, w: translation_theta(d, keyed_direction(seed)))


def shear(images: torch.Tensor, params: dict[str, np.ndarray],
          seeds: Sequence[int]) -> torch.Tensor:
    """Horizontal shear by ``angle`` degrees (factor ``tan(angle)``), sign from the seed."""
    return _warp_each(
        images, _values(params, "angle"), seeds,
        lambda angle, seed, h, w: shear_theta(keyed_sign(seed) * math.tan(math.radians(angle)),
                                              h, w))


def rotation(images: torch.Tensor, params: dict[str, np.ndarray],
             seeds: Sequence[int]) -> torch.Tensor:
    """Rotation by ``angle`` degrees about the centre, sign from the seed, corners black."""
    return _warp_each(images, _values(params, "angle"), seeds,
                      lambda angle, seed, h, w: rotation_theta(keyed_sign(seed) * angle, h, w))


def elastic_displacement(seed: int, height: int, width: int, amplitude: float,
                         smoothness: float) -> torch.Tensor:
    """The displacement ``(1, H, W, 2)`` (normalised units, x then y, float64) added to the
    identity grid: ``amplitude`` px (of 224) times the unit-RMS field, i.e.
    ``2 * amplitude / 224 * field`` in normalised units (torchvision ``elastic``'s layout)."""
    field = unit_displacement_field(seed, height, width, smoothness)
    return torch.from_numpy(2.0 * amplitude / SIDE * field).permute(1, 2, 0)[None]


def elastic(images: torch.Tensor, params: dict[str, np.ndarray],
            seeds: Sequence[int]) -> torch.Tensor:
    """Output ``p`` reads the input at ``p + amplitude * field(p)`` (bilinear, black outside)."""
    _, _, h, w = images.shape
    identity = F.affine_grid(torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]],
                                          dtype=torch.float64), [1, 3, h, w], align_corners=False)
    out = []
    for image, a, s, seed in zip(images, _values(params, "amplitude"),
                                 _values(params, "smoothness"), seeds, strict=True):
        if a == 0:
            out.append(image)
            continue
        out.append(_warp(image, identity + elastic_displacement(seed, h, w, a, s)))
    return torch.stack(out)


# --------------------------------------------------------------------------- colour


def backlight_light(seed: int, height: int, width: int) -> torch.Tensor:
    """The light's profile ``(H, W)`` float64, 1 at its centre:
    ``1 / (1 + r^2 / R^2)``, ``r`` the distance (px of 224 on each axis) from a centre drawn in
    the central half of the image (:func:`keyed_light_centre`), ``R = 56`` px."""
    u, v = keyed_light_centre(seed)
    x = (torch.arange(width, dtype=torch.float64) + 0.5 - u * width) * SIDE / width
    y = (torch.arange(height, dtype=torch.float64) + 0.5 - v * height) * SIDE / height
    r2 = y[:, None] ** 2 + x[None, :] ** 2
    return 1.0 / (1.0 + r2 / BACKLIGHT_RADIUS**2)


def backlight(images: torch.Tensor, params: dict[str, np.ndarray],
              seeds: Sequence[int]) -> torch.Tensor:
    """``clip(x + strength * light)``: white light added to every channel."""
    _, _, h, w = images.shape
    out = []
    for image, b, seed in zip(images, _values(params, "strength"), seeds, strict=True):
        if b == 0:
            out.append(image)
            continue
        light = (b * backlight_light(seed, h, w)).to(device=image.device, dtype=image.dtype)
        out.append((image + light).clamp(0.0, 1.0))
    return torch.stack(out)


def brightness(images: torch.Tensor, params: dict[str, np.ndarray],
               seeds: Sequence[int]) -> torch.Tensor:
    """``clip(x + shift)`` on every RGB channel."""
    shift = torch.as_tensor(params["shift"]).to(device=images.device, dtype=images.dtype)
    return (images + shift.view(-1, 1, 1, 1)).clamp(0.0, 1.0)


def luma(image: torch.Tensor) -> torch.Tensor:
    """BT.601 luma ``(1, H, W)`` of a ``(3, H, W)`` image."""
    return (image[0] * LUMA[0] + image[1] * LUMA[1] + image[2] * LUMA[2])[None]


def contrast(images: torch.Tensor, params: dict[str, np.ndarray],
             seeds: Sequence[int]) -> torch.Tensor:
    """``m + factor * (x - m)``, ``m`` the mean luma of the image (torchvision's
    ``adjust_contrast``; a factor in [0, 1] never leaves [0, 1])."""
    out = []
    for image, c in zip(images, _values(params, "factor"), strict=True):
        if c == 1:
            out.append(image)
            continue
        m = luma(image).mean()
        out.append((image * c + m * (1.0 - c)).clamp(0.0, 1.0))
    return torch.stack(out)


def colour_distortion(images: torch.Tensor, params: dict[str, np.ndarray],
                      seeds: Sequence[int]) -> torch.Tensor:
    """``clip(x_c * 2 ** (strength * z_c))``, ``z_c`` uniform in [-1, 1] per channel (seed)."""
    out = []
    for image, s, seed in zip(images, _values(params, "strength"), seeds, strict=True):
        if s == 0:
            out.append(image)
            continue
        gains = torch.from_numpy(np.exp2(s * keyed_gain_exponents(seed)))
        gains = gains.to(device=image.device, dtype=image.dtype).view(3, 1, 1)
        out.append((image * gains).clamp(0.0, 1.0))
    return torch.stack(out)


def greyscale(images: torch.Tensor, params: dict[str, np.ndarray],
              seeds: Sequence[int]) -> torch.Tensor:
    """``(1 - f) * x + f * Y``, ``Y`` the BT.601 luma (``f = 1``: the grey image)."""
    out = []
    for image, f in zip(images, _values(params, "factor"), strict=True):
        if f == 0:
            out.append(image)
            continue
        out.append((image * (1.0 - f) + luma(image) * f).clamp(0.0, 1.0))
    return torch.stack(out)


def hue(images: torch.Tensor, params: dict[str, np.ndarray],
        seeds: Sequence[int]) -> torch.Tensor:
    """Rotate the HSV hue by ``angle`` degrees, sign from the seed (torchvision's
    ``adjust_hue`` with ``hue_factor = ±angle / 360``)."""
    out = []
    for image, angle, seed in zip(images, _values(params, "angle"), seeds, strict=True):
        if angle == 0:
            out.append(image)
            continue
        h, s, v = rgb_to_hsv(image).unbind(0)
        h = torch.remainder(h + keyed_sign(seed) * angle / 360.0, 1.0)
        out.append(hsv_to_rgb(torch.stack((h, s, v))).clamp(0.0, 1.0))
    return torch.stack(out)
