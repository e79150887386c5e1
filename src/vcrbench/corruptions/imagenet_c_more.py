"""The rest of ImageNet-C's 15 corruptions: zoom blur, snow, fog and elastic transform.

Each function takes ``(B, 3, H, W)`` float images in ``[0, 1]`` and returns the same; every
sample is corrupted on its own from its own parameters and seed. The random fields (snow's
Gaussian layer, fog's plasma fractal, elastic's uniform fields and affine jitter) are drawn on the
CPU in float64 from the sample's ``torch_generator`` and turned into sampling positions there
(fields of at most ``H x W``, a few milliseconds); the per-pixel work (resampling, blending,
blurring) runs in torch on the images' device. Each corruption is split into the draw and a
function of the draws (``*_one``), so tests can feed the peer's own random numbers.

The algorithms are those of ImageNet-C (Hendrycks & Dietterich 2019) as packaged by
``imagecorruptions`` 1.1.2, re-implemented here:

- ``clipped_zoom``: the central ``ceil(n / z)`` pixels of each axis are enlarged by
  ``scipy.ndimage.zoom(order=1)`` (output ``round(ceil(n / z) * z)`` pixels, output position
  ``o`` reads input position ``o (in - 1) / (out - 1)``), and the top-left ``n`` are kept.
- Snow uses ImageNet-C's own motion blur (``kernels.motion_taps``) on its layer, as
  ``imagecorruptions`` does: the original ImageNet-C used ImageMagick's (Wand's) motion blur.
- Fog's plasma fractal is the diamond-square heightmap of ``imagecorruptions.plasma_fractal``
  (noise amplitude ``wibble**2``, ``wibble`` = 100 divided by ``decay`` per octave), on a
  periodic square grid of the next power of two ``>= max(H, W)``, cropped to ``H x W``.
- Elastic transform is the published ImageNet-C's (``make_imagenet_c.py``): a random affine
  (``cv2.warpAffine``, reproduced by bilinear sampling at the same float positions) then an
  elastic displacement (``scipy.ndimage.map_coordinates(order=1, mode="reflect")``).
  ``imagecorruptions`` 1.1.2 drops the affine and scales alpha and sigma with the image size;
  it is the special case ``affine = 0``, ``alpha = 0.005 H c``, ``sigma = 0.01 H``.
- Zoom blur below ImageNet-C's first severity and above its last departs from ImageNet-C's
  formula where that is a step function of the zoom or too costly (``zoom_factors``,
  ``ZOOM_CENTRED_BELOW``); from 1.11 to 1.3 it is ImageNet-C's formula (at its five
  severities, its very factors).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np
import torch

from vcrbench.corruptions.generators import torch_generator
from vcrbench.corruptions.kernels import motion_taps, shift_sum
from vcrbench.errors import VcrbenchError

#: Snow's motion-blur direction is drawn uniformly from this range (degrees), as ImageNet-C.
SNOW_ANGLE_RANGE = (-135.0, -45.0)
#: Standard deviation of snow's Gaussian layer (ImageNet-C: 0.3 at every severity).
SNOW_STD = 0.3
#: Radius of snow's motion blur (ImageNet-C: 12, and 10 at severity 1, whose sigma of 4 leaves
#: taps 21 to 24 under 1e-6 of the total: the same layer to 1e-5 grey levels).
SNOW_BLUR_RADIUS = 12.0
#: Zoom blur: ImageNet-C's spacing of zoom factors (0.01 up to a largest zoom of 1.15, 0.02 up to
#: 1.25, 0.03 beyond), linearly interpolated in between (see ``zoom_factors``).
ZOOM_STEP_KNOTS = ((1.15, 0.01), (1.20, 0.02), (1.24, 0.02), (1.30, 0.03))
#: Zoom blur: from this largest zoom on, the factors are a quadrature in 1 / z (``zoom_factors``).
ZOOM_QUADRATURE_FROM = 1.6
#: Zoom blur: ImageNet-C's pixel-quantised crops make the image a step function of the zoom
#: (at 224 px no change at all below 224 / 223, then a jump to dv 0.3): below the first of these
#: zooms the copies are enlarged exactly about the centre, from the second on as ImageNet-C does,
#: and in between the two images are mixed linearly (ImageNet-C's severity 1 is 1.11).
ZOOM_CENTRED_BELOW = (1.05, 1.11)
#: Zoom blur's setting ``cifar_factors`` (given points only): CIFAR-10-C's spacing of the factors
#: (``np.arange(1, stop, 0.01)`` at every severity, ``cifar_zoom_factors``).
CIFAR_ZOOM_STEP = 0.01
#: Zoom layers resampled at once (bounds the memory of a batch of layers).
_ZOOM_CHUNK = 16

#: Elastic: Gaussian kernels of at most this many taps are applied by scipy, longer ones as a
#: matrix product (``smooth_field``).
_SCIPY_TAPS = 31

Uniform = Callable[[tuple[int, ...]], np.ndarray]


# --------------------------------------------------------------------------- resampling helpers


def reflect_index(i: np.ndarray | torch.Tensor, n: int) -> np.ndarray | torch.Tensor:
    """scipy's ``mode="reflect"`` (half-sample symmetric, ``dcba|abcd|dcba``), periodically."""
    m = i % (2 * n)
    return torch.where(m >= n, 2 * n - 1 - m, m) if isinstance(m, torch.Tensor) else np.where(
        m >= n, 2 * n - 1 - m, m)


def reflect101_index(i: np.ndarray | torch.Tensor, n: int) -> np.ndarray | torch.Tensor:
    """OpenCV's ``BORDER_REFLECT_101`` (``dcb|abcd|cba``), periodically."""
    if n == 1:
        return i * 0
    period = 2 * n - 2
    m = i % period
    return torch.where(m >= n, period - m, m) if isinstance(m, torch.Tensor) else np.where(
        m >= n, period - m, m)


def bilinear_plan(ys: torch.Tensor, xs: torch.Tensor, h: int, w: int,
                  border: Callable) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Flat indices and weights of the four neighbours of float64 positions ``(ys, xs)``.

    Out-of-image neighbours are mapped back by ``border`` (index -> index in ``[0, n)``), per
    tap, as ``scipy.ndimage.map_coordinates(order=1)`` and OpenCV's remapping do.
    """
    y0, x0 = torch.floor(ys), torch.floor(xs)
    ty, tx = ys - y0, xs - x0
    y0, x0 = y0.to(torch.int64), x0.to(torch.int64)
    rows = [border(y0, h), border(y0 + 1, h)]
    cols = [border(x0, w), border(x0 + 1, w)]
    index, weight = [], []
    for r, wy in zip(rows, (1.0 - ty, ty), strict=True):
        for c, wx in zip(cols, (1.0 - tx, tx), strict=True):
            index.append((r * w + c).reshape(-1))
            weight.append((wy * wx).reshape(-1))
    return index, weight


def bilinear_apply(image: torch.Tensor, index: list[torch.Tensor],
                   weight: list[torch.Tensor]) -> torch.Tensor:
    """Resample a ``(C, H, W)`` image with a plan from :func:`bilinear_plan` (same grid)."""
    c, h, w = image.shape
    flat = image.reshape(c, h * w)
    out = torch.zeros_like(flat)
    for i, wt in zip(index, weight, strict=True):
        out.add_(flat.index_select(1, i.to(image.device))
                 * wt.to(image.device, image.dtype))
    return out.reshape(c, h, w)


def zoom_axis(n: int, zoom: float, centred: bool = False
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ImageNet-C's ``clipped_zoom`` along one axis of length ``n``: for each of the
    ``round(ceil(n / zoom) * zoom)`` output pixels, the two input pixels and the weight of the
    second (linear interpolation of the central ``ceil(n / zoom)`` input pixels).

    ``centred``: instead, the exact enlargement about the centre, ``n`` output pixels, output
    ``o`` reading input ``c + (o - c) / zoom`` with ``c = (n - 1) / 2`` (zoom blur below
    ImageNet-C's first severity, see ``ZOOM_CENTRED_BELOW``).
    """
    if centred:
        c = (n - 1) / 2.0
        pos = c + (np.arange(n, dtype=np.float64) - c) / zoom
        i0 = np.clip(np.floor(pos).astype(np.int64), 0, n - 1)
        return i0, np.minimum(i0 + 1, n - 1), pos - i0
    size = int(math.ceil(n / zoom))
    start = (n - size) // 2
    out = int(round(size * zoom))
    scale = (size - 1) / (out - 1) if out > 1 else 0.0
    pos = np.arange(out, dtype=np.float64) * scale
    i0 = np.minimum(np.floor(pos).astype(np.int64), size - 1)
    frac = pos - i0
    i1 = np.minimum(i0 + 1, size - 1)
    return start + i0, start + i1, frac


def clipped_zoom(image: torch.Tensor, zoom: float) -> torch.Tensor:
    """ImageNet-C ``clipped_zoom`` of a ``(C, H, W)`` image, uncropped: ``(C, H', W')`` with
    ``H' = round(ceil(H / zoom) * zoom) >= H`` (callers keep the top-left ``H x W``, as
    ``imagecorruptions``; snow's ``cifar_layer`` the centred one, as ``make_cifar_c.py``)."""
    _, h, w = image.shape
    r0, r1, fr = zoom_axis(h, zoom)
    c0, c1, fc = zoom_axis(w, zoom)
    dev, dt = image.device, image.dtype

    def idx(a: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(a).to(dev)

    def wt(a: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(a).to(dev, dt)

    rows = image.index_select(1, idx(r0)) * (1 - wt(fr))[:, None] + image.index_select(
        1, idx(r1)) * wt(fr)[:, None]
    return rows.index_select(2, idx(c0)) * (1 - wt(fc)) + rows.index_select(2, idx(c1)) * wt(fc)


# --------------------------------------------------------------------------- zoom blur


def zoom_step(zoom: float) -> float:
    """The spacing of the zoom factors for a largest zoom ``zoom <= 1.3`` (``ZOOM_STEP_KNOTS``)."""
    knots = ZOOM_STEP_KNOTS
    if zoom <= knots[0][0]:
        return knots[0][1]
    for (z0, s0), (z1, s1) in zip(knots, knots[1:], strict=False):
        if zoom <= z1:
            return s0 + (s1 - s0) * (zoom - z0) / (z1 - z0)
    return knots[-1][1]


def zoom_factors(zoom: float) -> tuple[np.ndarray, np.ndarray]:
    """The zoom factors averaged by zoom blur, from 1 to ``zoom``, and their weights.

    Up to ImageNet-C's strongest zoom (1.3): ImageNet-C's factors, all of weight 1: ``1 + i s``,
    ``i = 0 … n``, ``n = ceil((zoom - 1) / step)`` (``zoom_step``) and ``s = (zoom - 1) / n``
    rounded to 12 significant digits (then ``(1 + s) - 1``, as numpy's ``arange`` steps), so
    that ImageNet-C's severities (whose largest factor is a whole number of steps) give the very
    floats of its ``np.arange(1, ..., step)``: ``clipped_zoom`` rounds sizes, and one ulp can
    change a crop by a pixel.

    Beyond 1.3, evenly spaced factors (a mean over ``z`` uniform on ``[1, zoom]``) would need
    ever more copies (68 at 3) to keep the copies of the outer image as close as ImageNet-C's.
    The same mean is computed as a quadrature in ``u = 1 / z`` (evenly spaced copies along each
    radial streak): ``n = ceil((1 - 1 / zoom) / (1 - 1 / 1.3) * 10)`` nodes (10 at 1.3, 24 at
    3), weights ``∝ 1 / u^2`` (``dz = du / u^2``) scaled to sum to ``n + 1`` like ImageNet-C's.
    Nodes and weights move linearly from ImageNet-C's (at 1.3) to the quadrature's (from 1.6
    on), so that the image changes continuously across 1.3.
    """
    if zoom <= 1.0:
        return np.ones(1), np.ones(1)
    top = ZOOM_STEP_KNOTS[-1][0]
    if zoom <= top:
        n = max(1, math.ceil((zoom - 1.0) / zoom_step(zoom) - 1e-6))
        step = float(f"{(zoom - 1.0) / n:.12g}")
        delta = (1.0 + step) - 1.0  # numpy's arange fills start + i * (second - start)
        return 1.0 + np.arange(n + 1) * delta, np.ones(n + 1)
    n = math.ceil((1.0 - 1.0 / zoom) / (1.0 - 1.0 / top) * 10.0 - 1e-6)
    v = np.arange(n + 1) / n
    u = 1.0 - (1.0 - 1.0 / zoom) * v
    quad = 1.0 / u**2
    quad[[0, -1]] /= 2.0  # trapezoid rule
    quad *= (n + 1) / quad.sum()
    mix = min(1.0, (zoom - top) / (ZOOM_QUADRATURE_FROM - top))
    factors = (1.0 - mix) * (1.0 + (zoom - 1.0) * v) + mix / u
    return factors, (1.0 - mix) + mix * quad


def cifar_zoom_factors(zoom: float) -> np.ndarray:
    """CIFAR-10-C's zoom factors up to ``zoom``: ``1 + i s`` for ``s = CIFAR_ZOOM_STEP`` and every
    ``i >= 0`` with ``1 + i s <= zoom`` (1e-9 of slack), the floats of ``np.arange(1, stop,
    0.01)`` (numpy fills ``start + i ((start + step) - start)``); ``[1]`` at zoom 1."""
    n = max(0, math.floor((zoom - 1.0) / CIFAR_ZOOM_STEP + 1e-9))
    return 1.0 + np.arange(n + 1) * ((1.0 + CIFAR_ZOOM_STEP) - 1.0)


def zoom_blur_one(image: torch.Tensor, factors: Sequence[float],
                  weights: Sequence[float] | None = None, centred: bool = False,
                  centre_trim: bool = False) -> torch.Tensor:
    """``(x + sum_k w_k clipped_zoom(x, z_k)) / (len(factors) + 1)`` for one ``(3, H, W)`` image
    (``w_k = 1``: ImageNet-C's mean; ``clipped_zoom`` cropped to the top-left ``H x W``, to the
    central ``H x W`` (offset ``(H' - H) // 2``, as ``make_cifar_c.py``) if ``centre_trim``, or
    the exact enlargement about the centre if ``centred``)."""

    def kept(axis: tuple[np.ndarray, ...], n: int) -> tuple[np.ndarray, ...]:
        start = (len(axis[0]) - n) // 2 if centre_trim and not centred else 0
        return tuple(a[start : start + n] for a in axis)

    c, h, w = image.shape
    dev, dt = image.device, image.dtype
    wts = np.ones(len(factors)) if weights is None else np.asarray(weights, dtype=np.float64)
    total = image.clone()
    for start in range(0, len(factors), _ZOOM_CHUNK):
        chunk = factors[start : start + _ZOOM_CHUNK]
        axes_h = [kept(zoom_axis(h, float(z), centred), h) for z in chunk]
        axes_w = [kept(zoom_axis(w, float(z), centred), w) for z in chunk]
        n = len(chunk)
        r0 = torch.from_numpy(np.concatenate([a[0] for a in axes_h])).to(dev)
        r1 = torch.from_numpy(np.concatenate([a[1] for a in axes_h])).to(dev)
        fr = torch.from_numpy(np.concatenate([a[2] for a in axes_h])).to(dev, dt)
        rows = torch.lerp(image.index_select(1, r0), image.index_select(1, r1), fr[:, None])
        rows = rows.reshape(c, n, h, w)
        c0 = torch.from_numpy(np.stack([a[0] for a in axes_w])).to(dev)
        c1 = torch.from_numpy(np.stack([a[1] for a in axes_w])).to(dev)
        fc = torch.from_numpy(np.stack([a[2] for a in axes_w])).to(dev, dt)
        shape = (c, n, h, w)
        left = torch.gather(rows, 3, c0[None, :, None, :].expand(shape))
        right = torch.gather(rows, 3, c1[None, :, None, :].expand(shape))
        layers = torch.lerp(left, right, fc[None, :, None, :].expand(shape))
        wk = wts[start : start + n]
        if np.all(wk == 1.0):
            total += layers.sum(1)
        else:
            total += torch.einsum("cnhw,n->chw", layers, torch.from_numpy(wk).to(dev, dt))
    return total / (len(factors) + 1)


def zoom_blur(images: torch.Tensor, params: dict[str, np.ndarray],
              seeds: Sequence[int]) -> torch.Tensor:
    """ImageNet-C zoom blur with largest zoom factor ``zoom`` (1 is the clean image); the
    setting ``cifar_factors`` (given points only; 0 without it) at 1 averages CIFAR-10-C's
    factors (``cifar_zoom_factors``) with its centred trim instead."""
    low, high = ZOOM_CENTRED_BELOW
    cifar = params.get("cifar_factors", np.zeros(len(images)))
    if not np.isin(cifar, (0.0, 1.0)).all():
        raise VcrbenchError("zoom_blur: setting 'cifar_factors' is 0 (the registry's factors) or "
                            "1 (CIFAR-10-C's, every 0.01), nothing in between")
    out = []
    for img, zoom, flag in zip(images, params["zoom"], cifar, strict=True):
        z = float(zoom)
        if z <= 1.0:
            out.append(img)
            continue
        if flag == 1.0:
            out.append(zoom_blur_one(img, cifar_zoom_factors(z), centre_trim=True))
            continue
        factors, weights = zoom_factors(z)
        mix = min(1.0, max(0.0, (z - low) / (high - low)))
        blurred = zoom_blur_one(img, factors, weights) if mix > 0 else 0.0
        if mix < 1:
            centred = zoom_blur_one(img, factors, weights, centred=True)
            blurred = centred if mix == 0 else torch.lerp(centred, blurred, mix)
        out.append(blurred)
    return torch.stack(out).clamp(0.0, 1.0)


# --------------------------------------------------------------------------- snow


def snow_draws(seed: int, height: int, width: int) -> tuple[np.ndarray, float]:
    """A sample's standard-normal snow field ``(H, W)`` and motion-blur angle (degrees)."""
    gen = torch_generator(seed)
    field = torch.randn((height, width), generator=gen, dtype=torch.float64).numpy()
    low, high = SNOW_ANGLE_RANGE
    angle = low + (high - low) * float(torch.rand((1,), generator=gen, dtype=torch.float64))
    return field, angle


def snow_layer(field: np.ndarray, mean: float, threshold: float, flake_zoom: float,
               blur_sigma: float, height: int, width: int, angle: float,
               device: torch.device, dtype: torch.dtype,
               blur_radius: float = SNOW_BLUR_RADIUS, std: float = SNOW_STD,
               cifar_layer: bool = False) -> torch.Tensor:
    """ImageNet-C's snow layer ``(H, W)``: ``N(mean, std)`` enlarged by ``flake_zoom``, values
    under ``threshold`` set to 0, clipped to [0, 1], motion-blurred, rounded to 8 bits.

    ``cifar_layer``: CIFAR-10-C's order of steps (``make_cifar_c.py``): the enlarged layer is
    trimmed to ``H x W`` about its centre before the threshold, truncated to 8 bits (its PNG)
    and then blurred; otherwise the whole enlarged layer is blurred in float and its top-left
    ``H x W`` kept (``imagecorruptions``)."""
    layer = torch.from_numpy(mean + std * field).to(device, dtype)[None]
    layer = clipped_zoom(layer, flake_zoom)
    if cifar_layer:
        _, lh, lw = layer.shape
        top, left = (lh - height) // 2, (lw - width) // 2
        layer = layer[:, top:top + height, left:left + width]
    layer = torch.where(layer < threshold, torch.zeros_like(layer), layer).clamp(0.0, 1.0)
    if cifar_layer:
        layer = torch.floor(layer * 255.0) / 255.0
    _, lh, lw = layer.shape
    layer = shift_sum(layer, motion_taps(blur_radius, blur_sigma, angle, lh, lw))
    return (torch.round(layer * 255.0) / 255.0)[0, :height, :width]


def snow_one(image: torch.Tensor, point: dict[str, float], field: np.ndarray,
             angle: float) -> torch.Tensor:
    """Snow on one ``(3, H, W)`` image from its standard-normal field and angle.

    ``x' = blend x + (1 - blend) max(x, 1.5 grey(x) + 0.5)`` (grey: ITU-R 601 luma, as
    ``cv2.COLOR_RGB2GRAY``), then ``clip(x' + opacity (L + rot180(L)))`` with ``L`` the snow
    layer (``snow_layer``). ``point`` may also give the settings ``layer_std``, ``blur_radius``
    and ``cifar_layer`` (registry entry; their defaults otherwise).
    """
    _, h, w = image.shape
    layer = snow_layer(field, point["snow_mean"], point["threshold"], point["flake_zoom"],
                       point["blur_sigma"], h, w, angle, image.device, image.dtype,
                       point.get("blur_radius", SNOW_BLUR_RADIUS),
                       point.get("layer_std", SNOW_STD), bool(point.get("cifar_layer", 0.0)))
    blend = point["blend"]
    grey = 0.299 * image[0] + 0.587 * image[1] + 0.114 * image[2]
    base = blend * image + (1.0 - blend) * torch.maximum(image, grey * 1.5 + 0.5)
    snow = point["opacity"] * (layer + torch.flip(layer, (0, 1)))
    return (base + snow).clamp(0.0, 1.0)


SNOW_PARAMETERS = ("snow_mean", "threshold", "flake_zoom", "blur_sigma", "blend", "opacity")
#: Snow's settings (registry ``settings``; given points only): the registry's entry has exactly
#: these (tested).
SNOW_SETTINGS = ("layer_std", "blur_radius", "cifar_layer")


def snow(images: torch.Tensor, params: dict[str, np.ndarray],
         seeds: Sequence[int]) -> torch.Tensor:
    """ImageNet-C snow (module docstring); ``opacity`` 0 and ``blend`` 1 is the clean image."""
    _, _, h, w = images.shape
    names = SNOW_PARAMETERS + tuple(k for k in SNOW_SETTINGS if k in params)
    if "cifar_layer" in params and not np.isin(params["cifar_layer"], (0.0, 1.0)).all():
        raise VcrbenchError("snow: setting 'cifar_layer' is 0 (ImageNet-C's layer) or 1 "
                            "(CIFAR-10-C's order of steps), nothing in between")
    out = []
    for i, (img, seed) in enumerate(zip(images, seeds, strict=True)):
        point = {p: float(params[p][i]) for p in names}
        if point["opacity"] == 0.0 and point["blend"] == 1.0:
            out.append(img)
            continue
        field, angle = snow_draws(seed, h, w)
        out.append(snow_one(img, point, field, angle))
    return torch.stack(out)


# --------------------------------------------------------------------------- fog


def plasma_size(height: int, width: int) -> int:
    """Side of fog's plasma map: the next power of two ``>= max(H, W, 3)``."""
    return 1 << (max(height, width, 3) - 1).bit_length()


def plasma_fractal(size: int, decay: float, uniform: Uniform) -> np.ndarray:
    """Diamond-square heightmap on a periodic ``size x size`` grid, normalised to [0, 1].

    ``uniform(shape)`` gives draws in ``[0, 1)``; each octave draws the square centres, then the
    midpoints of the horizontal edges, then those of the vertical edges (``imagecorruptions``'
    order), each the mean of its four neighbours plus ``wibble * U(-wibble, wibble)``.
    """
    grid = np.zeros((size, size))
    step, wibble = size, 100.0
    while step >= 2:
        half = step // 2
        corners = grid[::step, ::step]
        k = corners.shape[0]

        def noise(wib: float = wibble, k: int = k) -> np.ndarray:
            return wib * (-wib + 2.0 * wib * uniform((k, k)))

        right = np.roll(corners, -1, axis=1)
        down = np.roll(corners, -1, axis=0)
        centres = (corners + down + right + np.roll(down, -1, axis=1)) / 4 + noise()
        grid[half::step, half::step] = centres
        # midpoints of horizontal edges: centres below and above, corners left and right
        grid[::step, half::step] = (centres + np.roll(centres, 1, axis=0) + corners + right
                                    ) / 4 + noise()
        # midpoints of vertical edges: centres right and left, corners above and below
        grid[half::step, ::step] = (centres + np.roll(centres, 1, axis=1) + corners + down
                                    ) / 4 + noise()
        step, wibble = half, wibble / decay
    grid -= grid.min()
    return grid / grid.max()


def fog_plasma(seed: int, height: int, width: int, decay: float) -> np.ndarray:
    """A sample's plasma fractal ``(H, W)`` from its seed."""
    gen = torch_generator(seed)

    def uniform(shape: tuple[int, ...]) -> np.ndarray:
        return torch.rand(shape, generator=gen, dtype=torch.float64).numpy()

    return plasma_fractal(plasma_size(height, width), decay, uniform)[:height, :width]


def fog_one(image: torch.Tensor, weight: float, plasma: np.ndarray) -> torch.Tensor:
    """``clip(((1 - w) x + w p) m / ((1 - w) m + w))``, ``m`` the image's largest value:
    ImageNet-C's ``clip((x + c p) m / (m + c))`` with ``c = w / (1 - w)``, ``m p`` (fog only) at
    w = 1."""
    fog_map = torch.from_numpy(plasma).to(image.device, image.dtype)
    top = image.max()
    mixed = (1.0 - weight) * image + weight * fog_map
    return (mixed * top / ((1.0 - weight) * top + weight)).clamp(0.0, 1.0)


def fog(images: torch.Tensor, params: dict[str, np.ndarray],
        seeds: Sequence[int]) -> torch.Tensor:
    """ImageNet-C fog: ``fog_weight`` (0 clean, 1 fog only) and plasma ``decay`` per octave."""
    _, _, h, w = images.shape
    out = []
    for img, weight, decay, seed in zip(images, params["fog_weight"], params["decay"], seeds,
                                        strict=True):
        if float(weight) == 0.0:
            out.append(img)
            continue
        out.append(fog_one(img, float(weight), fog_plasma(seed, h, w, float(decay))))
    return torch.stack(out)


# --------------------------------------------------------------------------- elastic transform


@lru_cache(maxsize=8)
def _smoothing_matrix(n: int, sigma: float, radius: int) -> np.ndarray:
    """``(n, n)`` matrix of a truncated Gaussian correlation with periodic ``mode="reflect"``."""
    x = np.arange(-radius, radius + 1)
    taps = np.exp(-0.5 / (sigma * sigma) * x.astype(np.float64) ** 2)
    taps /= taps.sum()
    # tap t of row i reads reflect(i + t): fold the taps over one period 2n, then reflect
    period = np.bincount((x % (2 * n)), taps, minlength=2 * n)
    shifts = (np.arange(2 * n)[None, :] + np.arange(n)[:, None]) % (2 * n)  # (i, t) -> i + t
    weights = period[np.arange(2 * n)][None, :].repeat(n, 0)
    cols = reflect_index(shifts, n)
    rows = np.repeat(np.arange(n), 2 * n)
    return np.bincount(rows * n + cols.ravel(), weights.ravel(), minlength=n * n).reshape(n, n)


def smooth_field(fields: np.ndarray, sigma: float, truncate: float = 3.0) -> np.ndarray:
    """skimage ``gaussian(field, sigma, mode="reflect", truncate=3)`` of float64 fields
    ``(..., H, W)`` (each 2-D field on its own).

    scipy's separable filter for short kernels; else the filter as an ``(n, n)`` matrix (a BLAS
    product, cheaper for long kernels such as ImageNet-C's sigma of 170 px), with the same
    periodic half-sample reflection.
    """
    from scipy.ndimage import gaussian_filter1d

    radius = int(truncate * sigma + 0.5) if sigma > 0 else 0
    if radius == 0:
        return fields
    out = fields
    for axis in (-2, -1):
        n = out.shape[axis]
        if 2 * radius + 1 <= min(n, _SCIPY_TAPS):
            out = gaussian_filter1d(out, sigma, axis=axis, mode="reflect", truncate=truncate)
        elif axis == -2:
            out = _smoothing_matrix(n, sigma, radius) @ out
        else:
            out = out @ _smoothing_matrix(n, sigma, radius).T
    return out


def elastic_draws(seed: int, height: int, width: int) -> tuple[np.ndarray, ...]:
    """A sample's affine jitter ``(3, 2)`` and two fields ``(H, W)``, all ``U(-1, 1)``."""
    gen = torch_generator(seed)

    def uniform(shape: tuple[int, ...]) -> np.ndarray:
        return (2.0 * torch.rand(shape, generator=gen, dtype=torch.float64) - 1.0).numpy()

    return uniform((3, 2)), uniform((height, width)), uniform((height, width))


def affine_matrix(height: int, width: int, jitter: np.ndarray) -> np.ndarray:
    """ImageNet-C's random affine (``cv2.getAffineTransform``): the 2 x 3 matrix mapping three
    points around the centre to the same points moved by ``jitter`` (pixels)."""
    centre = np.float32((height, width)) // 2
    side = min(height, width) // 3
    src = np.float32([centre + side, [centre[0] + side, centre[1] - side], centre - side])
    dst = (src + jitter.astype(np.float32)).astype(np.float64)
    a = np.concatenate([src.astype(np.float64), np.ones((3, 1))], axis=1)
    return np.linalg.solve(a, dst).T


def affine_positions(height: int, width: int, matrix: np.ndarray) -> tuple[torch.Tensor, ...]:
    """Source positions ``(y, x)`` of ``cv2.warpAffine(src, M)``: ``dst(p) = src(M^-1 p)``, in
    float64 (the installed OpenCV 5 interpolates at float positions too; OpenCV 4 before 4.11
    rounded them to 1/32 px, a difference of under 2 grey levels at the sharpest edges)."""
    inv = np.linalg.pinv(np.vstack([matrix, [0.0, 0.0, 1.0]]))[:2]
    ys, xs = np.meshgrid(np.arange(height, dtype=np.float64), np.arange(width, dtype=np.float64),
                         indexing="ij")
    sx = inv[0, 0] * xs + inv[0, 1] * ys + inv[0, 2]
    sy = inv[1, 0] * xs + inv[1, 1] * ys + inv[1, 2]
    # a (nearly) degenerate affine, possible on small images, reads far outside: keep it finite
    bound = 1e9
    return (torch.from_numpy(np.clip(sy, -bound, bound)),
            torch.from_numpy(np.clip(sx, -bound, bound)))


def elastic_one(image: torch.Tensor, alpha: float, sigma: float, affine: float,
                jitter: np.ndarray, field_x: np.ndarray, field_y: np.ndarray) -> torch.Tensor:
    """ImageNet-C's elastic transform of one ``(3, H, W)`` image from its ``U(-1, 1)`` draws.

    A random affine (``affine`` px times ``jitter`` on three points, ``BORDER_REFLECT_101``),
    then ``out(y, x) = warped(y + dy, x + dx)`` (``mode="reflect"``) with ``dx = alpha *
    G_sigma * field_x`` (Gaussian smoothing of standard deviation ``sigma`` px, truncated at 3
    standard deviations, reflected borders), ``dy`` likewise; bilinear interpolation.
    """
    _, h, w = image.shape
    out = image
    if affine > 0:
        ys, xs = affine_positions(h, w, affine_matrix(h, w, affine * jitter))
        out = bilinear_apply(out, *bilinear_plan(ys, xs, h, w, reflect101_index))
    if alpha > 0:
        smooth = alpha * smooth_field(np.stack([field_x, field_y]), sigma)
        dx, dy = smooth.astype(np.float32).astype(np.float64)
        ys, xs = np.meshgrid(np.arange(h, dtype=np.float64), np.arange(w, dtype=np.float64),
                             indexing="ij")
        plan = bilinear_plan(torch.from_numpy(ys + dy), torch.from_numpy(xs + dx), h, w,
                             reflect_index)
        out = bilinear_apply(out, *plan)
    return out.clamp(0.0, 1.0)


def elastic_transform(images: torch.Tensor, params: dict[str, np.ndarray],
                      seeds: Sequence[int]) -> torch.Tensor:
    """ImageNet-C elastic transform: ``alpha`` and ``sigma`` of the displacement field (px) and
    the ``affine`` jitter (px); ``alpha = affine = 0`` is the clean image."""
    _, _, h, w = images.shape
    out = []
    for img, alpha, sigma, affine, seed in zip(images, params["alpha"], params["sigma"],
                                               params["affine"], seeds, strict=True):
        if float(alpha) == 0.0 and float(affine) == 0.0:
            out.append(img)
            continue
        jitter, fx, fy = elastic_draws(seed, h, w)
        out.append(elastic_one(img, float(alpha), float(sigma), float(affine), jitter, fx, fy))
    return torch.stack(out)
