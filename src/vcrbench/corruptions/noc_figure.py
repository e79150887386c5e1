"""NOC's candidate corruptions of its appendix figure (Laugros et al., Figures 2 and 6): border,
translation, shear, elastic, rotation, backlight, brightness, contrast, colour distortion,
greyscale and hue; and three variants of ours kept from before (radial backlight, smooth elastic,
channel gains), which are not NOC's.

The paper shows these only as pictures (their descriptions and severity ranges were images that
did not survive in the text). Border, elastic, backlight, colour distortion, contrast and
translation follow the NOC authors' definitions in words (issue 33): a mid-grey frame, one side
cropped and the rest stretched back, the image split into a brightened and a darkened part, a
constant added to one colour channel, a blend towards the mean of all values, independent x and
y shifts. The rest are standard, clearly defined operations; the registry's ``docs`` say which
choices are ours.

Units. Lengths are in *pixels of a 224 px side*: on an ``H x W`` image a length ``d`` is
``d * W / 224`` px horizontally and ``d * H / 224`` px vertically (the image is treated as a
224 x 224 square stretched to its shape, so the same parameter does the same to any size).

Geometry. The affine corruptions are backward warps: output pixel ``p`` takes the input at a
location ``T(p)`` by bilinear interpolation with ``torch.nn.functional.grid_sample(mode=
"bilinear", padding_mode="zeros", align_corners=False)``: locations are in normalised
coordinates where ``-1`` and ``+1`` are the *outer edges* of the border pixels (pixel ``j``'s
centre is at ``(2 j + 1) / W - 1``), the convention of ``torchvision.transforms.v2.functional``'s
``affine``, ``rotate`` and ``elastic``; locations outside the image read black (zeros), so
exposed areas are black. Affine maps are ``theta`` matrices for ``affine_grid`` (output
normalised coordinates -> input normalised coordinates). Grids and resampling matrices are
built on the CPU in float64 from the sample's own parameters and seed and then moved to the
image's device and dtype, so they are the same on every device and in every batch.

Randomness (sign, side, split, channel, light position, gains, displacement field) comes only
from the sample's seed, through :func:`vcrbench.corruptions.generators.torch_generator`;
parameter values at the clean end return the image itself.
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
#: Radial backlight: radius (px of a 224 px side) where the light has fallen to half its peak.
BACKLIGHT_RADIUS = 56.0
#: Border: the grey of NOC's frame (mid-grey, in [0, 1]).
BORDER_GREY = 0.5
#: Elastic: the sides that can be cropped, in the order of :func:`keyed_side`.
SIDES = ("left", "right", "top", "bottom")


# --------------------------------------------------------------------------- keyed draws


def keyed_sign(seed: int) -> float:
    """+1 or -1 with equal odds: the first ``torch.rand`` of the sample's generator < 0.5."""
    u = torch.rand(1, generator=torch_generator(seed), dtype=torch.float64)
    return 1.0 if float(u) < 0.5 else -1.0


def keyed_side(seed: int) -> str:
    """Elastic: the cropped side, ``SIDES[floor(4 u)]`` with ``u`` the generator's first
    ``torch.rand`` (left, right, top, bottom with equal odds)."""
    u = torch.rand(1, generator=torch_generator(seed), dtype=torch.float64)
    return SIDES[min(int(float(u) * 4.0), 3)]


def keyed_split(seed: int) -> tuple[bool, float, bool]:
    """Backlight: ``(vertical, position, bright_first)`` from ``u = torch.rand(3)``: a vertical
    split line (left and right parts) if ``u0 < 0.5``, else horizontal (top and bottom); its
    position a fraction ``0.25 + 0.5 u1`` of the width (height), in the central half; the left
    (top) part brightened if ``u2 < 0.5``, else the right (bottom) one."""
    u = torch.rand(3, generator=torch_generator(seed), dtype=torch.float64)
    return float(u[0]) < 0.5, 0.25 + 0.5 * float(u[1]), float(u[2]) < 0.5


def keyed_channel(seed: int) -> int:
    """Colour distortion: the channel (0 R, 1 G, 2 B) ``floor(3 u)``, ``u`` the generator's first
    ``torch.rand`` (each with odds 1/3)."""
    u = torch.rand(1, generator=torch_generator(seed), dtype=torch.float64)
    return min(int(float(u) * 3.0), 2)


def keyed_light_centre(seed: int) -> tuple[float, float]:
    """Backlight centre ``(u, v)`` as fractions of the width and height, each uniform in
    ``[0.25, 0.75]`` (the central half of each axis)."""
    u = torch.rand(2, generator=torch_generator(seed), dtype=torch.float64)
    return 0.25 + 0.5 * float(u[0]), 0.25 + 0.5 * float(u[1])


def keyed_gain_exponents(seed: int) -> np.ndarray:
    """Channel gains: three exponents ``z_c`` uniform in ``[-1, 1]`` (R, G, B)."""
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


def translation_theta(dx: float, dy: float) -> np.ndarray:
    """Content moved by ``dx`` px (of 224) to the right and ``dy`` px down: output ``p`` reads the
    input at ``p - t``, ``t = (dx, dy) / 224`` of each side, i.e. ``2 (dx, dy) / 224`` in
    normalised units."""
    return np.array([[1.0, 0.0, -2.0 * dx / SIDE], [0.0, 1.0, -2.0 * dy / SIDE]])


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
    """A mid-grey frame ``width`` px (of 224) wide on every side (NOC's):
    ``keep * x + (1 - keep) * 0.5``, ``keep`` of :func:`border_keep`."""
    _, _, h, w = images.shape
    out = []
    for image, width_224 in zip(images, _values(params, "width"), strict=True):
        if width_224 == 0:
            out.append(image)
            continue
        keep = border_keep(width_224, h, w).to(device=image.device, dtype=image.dtype)
        out.append(image * keep + (1.0 - keep) * BORDER_GREY)
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
    """Shift by ``dx`` px (of 224) to the right and ``dy`` px down, each its own parameter (NOC's
    x and y shifts are independent), exposed areas black; ``(0, 0)`` is the image itself."""
    _, _, h, w = images.shape
    return torch.stack([
        image if dx == 0 and dy == 0 else affine_warp(image, translation_theta(dx, dy))
        for image, dx, dy in zip(images, _values(params, "dx"), _values(params, "dy"),
                                 strict=True)])


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


def smooth_elastic(images: torch.Tensor, params: dict[str, np.ndarray],
                   seeds: Sequence[int]) -> torch.Tensor:
    """Output ``p`` reads the input at ``p + amplitude * field(p)`` (bilinear, black outside):
    a smooth random displacement field, ours (``noc_smooth_elastic``), not NOC's elastic."""
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


def stretch_matrix(n: int, crop: float, far: bool) -> np.ndarray:
    """``(n, n)`` float64 linear-interpolation matrix that crops ``crop`` px (continuous, ``0 <=
    crop < n - 1``) off one end of an axis of ``n`` px and stretches the rest back to ``n`` px.

    Pixel ``j`` covers ``[j, j + 1)``; the kept interval ``[crop, n)`` (near end cropped) or
    ``[0, n - crop)`` (``far``: the far end cropped) is mapped linearly onto ``[0, n)``, so output
    ``j`` reads the input at pixel index ``t = a + (j + 1/2) s - 1/2``, ``s = (n - crop) / n``,
    ``a = crop`` (near) or 0 (far), clamped to the kept pixels' centres (``[crop, n - 1]`` or
    ``[0, n - 1 - crop]``), with weights ``1 - f`` and ``f`` on pixels ``floor(t)`` and
    ``floor(t) + 1``, ``f = t - floor(t)``. For a whole-pixel crop this is cutting those pixels
    off and ``torch.nn.functional.interpolate(mode="bilinear", align_corners=False)`` back.
    """
    s = (n - crop) / n
    j = np.arange(n, dtype=np.float64)
    if far:
        t = np.clip((j + 0.5) * s - 0.5, 0.0, n - 1.0 - crop)
    else:
        t = np.clip(crop + (j + 0.5) * s - 0.5, crop, n - 1.0)
    lo = np.minimum(np.floor(t).astype(np.int64), n - 1)
    frac = t - lo
    hi = np.minimum(lo + 1, n - 1)
    m = np.zeros((n, n))
    np.add.at(m, (np.arange(n), lo), 1.0 - frac)
    np.add.at(m, (np.arange(n), hi), frac)
    return m


def crop_stretch(image: torch.Tensor, crop_224: float, side: str) -> torch.Tensor:
    """One ``(3, H, W)`` image with ``crop_224`` px (of 224) cut off ``side`` and the rest
    stretched back along that axis (:func:`stretch_matrix`; ``crop_224 * W / 224`` px for left
    and right, ``crop_224 * H / 224`` px for top and bottom)."""
    _, h, w = image.shape
    horizontal = side in ("left", "right")
    n = w if horizontal else h
    m = torch.from_numpy(stretch_matrix(n, crop_224 * n / SIDE, side in ("right", "bottom")))
    m = m.to(device=image.device, dtype=image.dtype)
    return torch.matmul(image, m.T) if horizontal else torch.matmul(m, image)


def elastic(images: torch.Tensor, params: dict[str, np.ndarray],
            seeds: Sequence[int]) -> torch.Tensor:
    """NOC's elastic: ``crop`` px (of 224) cropped off one side, drawn from the seed
    (:func:`keyed_side`), and the rest stretched back to the image's size along that axis."""
    return torch.stack([
        image if c == 0 else crop_stretch(image, c, keyed_side(int(seed)))
        for image, c, seed in zip(images, _values(params, "crop"), seeds, strict=True)])


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


def radial_backlight(images: torch.Tensor, params: dict[str, np.ndarray],
                     seeds: Sequence[int]) -> torch.Tensor:
    """``clip(x + strength * light)``: white light added to every channel (ours,
    ``noc_radial_backlight``; not NOC's backlight)."""
    return _add_keyed_field(images, params, seeds, backlight_light)


def split_fraction(n: int, position: float) -> torch.Tensor:
    """``(n,)`` float64: the fraction of each pixel ``[j, j + 1)`` of an axis of ``n`` px that
    lies before the split at ``position * n`` px (1 before it, 0 after, the area in between)."""
    j = torch.arange(n, dtype=torch.float64)
    return (position * n - j).clamp(0.0, 1.0)


def backlight_shift(seed: int, height: int, width: int) -> torch.Tensor:
    """``(H, W)`` float64 in ``[-1, 1]``: +1 on the brightened part, -1 on the darkened part of
    :func:`keyed_split`'s split, ``2 a - 1`` on pixels the line crosses (``a`` the brightened
    fraction of the pixel's area)."""
    vertical, position, bright_first = keyed_split(seed)
    if vertical:
        first = split_fraction(width, position)[None, :].expand(height, width)
    else:
        first = split_fraction(height, position)[:, None].expand(height, width)
    bright = first if bright_first else 1.0 - first
    return 2.0 * bright - 1.0


def backlight(images: torch.Tensor, params: dict[str, np.ndarray],
              seeds: Sequence[int]) -> torch.Tensor:
    """NOC's backlight: the image split in two by a straight line (:func:`keyed_split`), one part
    brightened and the other darkened by ``strength``: ``clip(x + strength * shift)`` on every
    channel, ``shift`` of :func:`backlight_shift`."""
    return _add_keyed_field(images, params, seeds, backlight_shift)


def _add_keyed_field(images: torch.Tensor, params: dict[str, np.ndarray], seeds: Sequence[int],
                     field) -> torch.Tensor:
    """``clip(x + strength * field(seed, H, W))`` on every channel of each image; an image at
    strength 0 is returned as it is."""
    _, _, h, w = images.shape
    out = []
    for image, b, seed in zip(images, _values(params, "strength"), seeds, strict=True):
        if b == 0:
            out.append(image)
            continue
        added = (b * field(int(seed), h, w)).to(device=image.device, dtype=image.dtype)
        out.append((image + added).clamp(0.0, 1.0))
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
    """``m + factor * (x - m)``, ``m`` the mean of all values of the image (all pixels and
    channels, NOC's; a factor in [0, 1] never leaves [0, 1])."""
    out = []
    for image, c in zip(images, _values(params, "factor"), strict=True):
        if c == 1:
            out.append(image)
            continue
        m = image.mean()
        out.append((image * c + m * (1.0 - c)).clamp(0.0, 1.0))
    return torch.stack(out)


def colour_distortion(images: torch.Tensor, params: dict[str, np.ndarray],
                      seeds: Sequence[int]) -> torch.Tensor:
    """NOC's colour distortion: ``clip(x_c + shift)`` on the one channel ``c`` drawn from the seed
    (:func:`keyed_channel`), the other two kept."""
    out = []
    for image, shift, seed in zip(images, _values(params, "shift"), seeds, strict=True):
        if shift == 0:
            out.append(image)
            continue
        c = keyed_channel(int(seed))
        image = image.clone()
        image[c] = (image[c] + shift).clamp(0.0, 1.0)
        out.append(image)
    return torch.stack(out)


def channel_gains(images: torch.Tensor, params: dict[str, np.ndarray],
                  seeds: Sequence[int]) -> torch.Tensor:
    """``clip(x_c * 2 ** (strength * z_c))``, ``z_c`` uniform in [-1, 1] per channel (seed):
    ours (``noc_channel_gains``), not NOC's colour distortion."""
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
