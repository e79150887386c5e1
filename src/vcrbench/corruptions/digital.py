"""ImageNet-C's digital corruptions and extras: contrast, pixelate, JPEG compression, saturate,
speckle noise and spatter (Hendrycks & Dietterich 2019, ``imagecorruptions`` 1.1.2).

Each function takes ``(B, 3, H, W)`` float images in ``[0, 1]`` and returns the same, one sample
at a time or with per-sample parameters, so a sample's output never depends on its batch.

- ``contrast``, ``pixelate``, ``saturate`` and ``speckle_noise`` run in torch on the images'
  device. Pixelate's box and nearest resamplings are written as small per-sample matrices built
  on the CPU from Pillow's rules.
- ``jpeg_compression`` is a real JPEG round trip with Pillow (libjpeg) on the CPU, one image at
  a time: JPEG is a CPU codec, Pillow is what ImageNet-C uses, and its default integer DCT
  makes the bytes deterministic (torchvision's ``encode_jpeg`` wraps the same library but
  decodes on a GPU with nvJPEG, whose output differs, so the round trip is kept on the CPU).
- ``spatter``'s liquid and mud layers come from the sample's own noise on the CPU (scipy and
  OpenCV 8-bit operations: Canny edges, a distance transform, histogram equalisation, as
  ImageNet-C, which have no torch equivalent that gives the same layer); they do not depend on
  the image, and the image is mixed with them in torch on its device.

Noise is drawn on the CPU from the per-sample seed with ``generators.numpy_generator`` (see
``noise``'s docstring on why numpy's generators): speckle noise one float32
``standard_normal((3, H, W))``, spatter one float64 ``standard_normal((H, W))``.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence

import numpy as np
import torch

from vcrbench.corruptions.generators import numpy_generator

# --------------------------------------------------------------------------- helpers


def _per_sample(values: np.ndarray, like: torch.Tensor) -> torch.Tensor:
    """``(B,)`` float64 parameters as a ``(B, 1, 1, 1)`` tensor on the images' device/dtype."""
    return torch.as_tensor(np.asarray(values, dtype=np.float64), dtype=like.dtype).to(
        like.device).view(-1, 1, 1, 1)


# --------------------------------------------------------------------------- contrast


def contrast(images: torch.Tensor, params: dict[str, np.ndarray],
             seeds: Sequence[int]) -> torch.Tensor:
    """ImageNet-C contrast: ``clip((x - mean) * c + mean)``, ``mean`` per image and channel.

    ``c = 1`` is the clean image, ``c = 0`` the flat image of the channel means.
    """
    c = _per_sample(params["contrast"], images)
    means = images.mean(dim=(2, 3), keepdim=True)
    out = torch.where(c == 1.0, images, (images - means) * c + means)
    return out.clamp(0.0, 1.0)


# --------------------------------------------------------------------------- pixelate

#: Added before flooring ``N / block`` so that sizes that are integers up to round-off (e.g.
#: ImageNet-C's ``224 * 0.5``) are not floored one pixel down.
_SIZE_SLACK = 1e-9


#: Added to the block means: means of an even number of 8-bit pixels often sit exactly on a
#: half grey level, which float32 and float64 round-off would send either way; 1/4000 of a
#: level sends them up, as Pillow's fixed-point rounding (half up) does.
_HALF_LEVEL_NUDGE = 1e-6


def pixelate_size(n: int, block: float) -> int:
    """Side of the downsampled axis: ``max(1, floor(n / block))`` (ImageNet-C's ``int(n * c)``
    with ``c = 1 / block``)."""
    return max(1, math.floor(n / block + _SIZE_SLACK))


def box_matrix(n_in: int, n_out: int) -> np.ndarray:
    """Pillow's ``BOX`` reduction of an axis as an ``(n_out, n_in)`` float64 matrix.

    Output pixel ``j`` is the mean of the input pixels whose centres ``x + 0.5`` lie in
    ``(c - s / 2, c + s / 2]`` with ``c = (j + 0.5) s``, ``s = n_in / n_out`` (Pillow's
    ``precompute_coeffs`` with the box filter: support ``s / 2``, bounds rounded by
    ``int(. + 0.5)``, weights 1 where ``-0.5 < (x + 0.5 - c) / s <= 0.5``, normalised).
    """
    scale = n_in / n_out
    out = np.zeros((n_out, n_in))
    for j in range(n_out):
        centre = (j + 0.5) * scale
        lo = max(0, int(centre - scale * 0.5 + 0.5))
        hi = min(n_in, int(centre + scale * 0.5 + 0.5))
        x = np.arange(lo, hi)
        t = (x + 0.5 - centre) / scale
        w = ((t > -0.5) & (t <= 0.5)).astype(np.float64)
        if w.sum() > 0:
            out[j, lo:hi] = w / w.sum()
    return out


def nearest_index(n_small: int, n_out: int) -> np.ndarray:
    """Pillow's ``NEAREST`` enlargement: output ``j`` takes input ``floor(x_j)``, ``x_j`` the
    pixel centre ``(j + 0.5) s`` (``s = n_small / n_out``) accumulated as Pillow does
    (``ImagingScaleAffine``: ``x_0 = s / 2``, then ``+ s`` per pixel, in float64), which can
    differ from the product by one ulp and so by one pixel where ``(j + 0.5) s`` is an integer."""
    scale = n_small / n_out
    steps = np.full(n_out, scale)
    steps[0] = scale * 0.5
    centres = np.add.accumulate(steps)  # sequential float64 sums, as Pillow's loop
    return np.minimum(np.floor(centres).astype(np.int64), n_small - 1)


def pixelate_one(image: torch.Tensor, block: float) -> torch.Tensor:
    """ImageNet-C pixelate of one ``(3, H, W)`` image: box down to ``floor(H / block) x
    floor(W / block)``, nearest back up."""
    _, h, w = image.shape
    sh, sw = pixelate_size(h, block), pixelate_size(w, block)
    if sh == h and sw == w:
        return image
    # the nearest enlargement is a row selection of the box matrix: up @ down in one matrix
    mh = box_matrix(h, sh)[nearest_index(sh, h)]
    mw = box_matrix(w, sw)[nearest_index(sw, w)]
    mh_t = torch.from_numpy(mh).to(image.device, image.dtype)
    mw_t = torch.from_numpy(mw.T.copy()).to(image.device, image.dtype)
    return torch.matmul(torch.matmul(mh_t, image), mw_t) + _HALF_LEVEL_NUDGE


def pixelate(images: torch.Tensor, params: dict[str, np.ndarray],
             seeds: Sequence[int]) -> torch.Tensor:
    """ImageNet-C pixelate with block size ``block`` (its ``c = 1 / block``)."""
    out = [pixelate_one(img, float(b)) for img, b in zip(images, params["block"], strict=True)]
    return torch.stack(out).clamp(0.0, 1.0)


# --------------------------------------------------------------------------- JPEG

#: ``quality`` at or above this (after rounding) is the clean image: no encoding.
JPEG_NO_ENCODING = 101


def jpeg_quality(quality: float) -> int:
    """The encoder's integer quality: ``quality`` rounded half up (``JPEG_NO_ENCODING``: none)."""
    return int(math.floor(quality + 0.5))


def jpeg_round_trip(image_uint8: np.ndarray, quality: int) -> np.ndarray:
    """Encode an ``(H, W, 3)`` uint8 RGB image as JPEG with Pillow at ``quality`` (its defaults
    otherwise: 4:2:0 chroma subsampling, libjpeg's standard tables, integer DCT), decode it."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(image_uint8, mode="RGB").save(buffer, format="JPEG", quality=quality)
    buffer.seek(0)
    with Image.open(buffer) as decoded:
        return np.array(decoded.convert("RGB"))


def jpeg_compression(images: torch.Tensor, params: dict[str, np.ndarray],
                     seeds: Sequence[int]) -> torch.Tensor:
    """ImageNet-C JPEG compression at ``quality`` (rounded half up; 101 is no encoding).

    Each image is rounded to 8 bits (JPEG encodes 8-bit pixels), round-tripped through Pillow
    on the CPU, and moved back to the images' device.
    """
    out = []
    for img, q in zip(images, params["quality"], strict=True):
        quality = jpeg_quality(float(q))
        if quality >= JPEG_NO_ENCODING:
            out.append(img)
            continue
        pixels = (img.detach().permute(1, 2, 0) * 255.0).round().clamp(0, 255)
        pixels = pixels.to("cpu", torch.uint8).numpy()
        decoded = torch.from_numpy(jpeg_round_trip(np.ascontiguousarray(pixels), quality))
        out.append(decoded.permute(2, 0, 1).to(img.device, img.dtype) / 255.0)
    return torch.stack(out)


# --------------------------------------------------------------------------- saturate

#: Knots of the offset ``b`` on the saturating side: ``(saturation, b)``, linear in between;
#: ImageNet-C's (gain, offset) = (2, 0), (5, 0.1), (20, 0.2) sit at saturation 0.5, 0.8, 0.95.
SATURATE_OFFSET_KNOTS = ((0.0, 0.0), (0.5, 0.0), (0.8, 0.1), (0.95, 0.2), (1.0, 1.0))


def saturate_gain_offset(saturation: float) -> tuple[float, float]:
    """ImageNet-C's ``(a, b)`` in ``S' = clip(S a + b)`` for ``saturation`` in ``[-1, 1]``.

    Below 0: ``a = 1 + saturation``, ``b = 0`` (at -1 grey). Above 0: ``a = 1 / (1 -
    saturation)`` (infinite at 1) and ``b`` piecewise linear through ``SATURATE_OFFSET_KNOTS``
    (at 1, ``b = 1``: every pixel fully saturated).
    """
    if saturation <= 0:
        return 1.0 + saturation, 0.0
    gain = math.inf if saturation >= 1 else 1.0 / (1.0 - saturation)
    xs, ys = zip(*SATURATE_OFFSET_KNOTS, strict=True)
    return gain, float(np.interp(saturation, xs, ys))


def saturate_one(image: torch.Tensor, gain: float, offset: float) -> torch.Tensor:
    """``S <- clip(S * gain + offset)`` in skimage's HSV, hue and value kept, one image.

    With hue and V fixed every channel is ``V (1 - S k)`` with ``k`` set by the hue, so the new
    channel is ``V - (S' / S)(V - x)``; grey pixels (S = 0) have hue 0 in skimage (red):
    ``(V, V (1 - S'), V (1 - S'))``. This equals skimage's ``hsv2rgb(rgb2hsv(x))`` round trip up
    to float round-off.
    """
    if gain == 1.0 and offset == 0.0:
        return image
    v = image.amax(dim=0, keepdim=True)
    delta = v - image.amin(dim=0, keepdim=True)
    grey = delta == 0
    s = torch.where(grey, torch.zeros_like(v), delta / torch.where(v == 0, torch.ones_like(v), v))
    if math.isinf(gain):
        s_new = torch.where(s > 0, torch.ones_like(s), torch.full_like(s, min(1.0, offset)))
    else:
        s_new = (s * gain + offset).clamp(0.0, 1.0)
    ratio = s_new / torch.where(grey, torch.ones_like(s), s)
    coloured = v - ratio * (v - image)
    red = torch.cat([v, v * (1.0 - s_new), v * (1.0 - s_new)])
    return torch.where(grey, red, coloured)


def saturate(images: torch.Tensor, params: dict[str, np.ndarray],
             seeds: Sequence[int]) -> torch.Tensor:
    """ImageNet-C saturate along ``saturation`` in ``[-1, 1]`` (``saturate_gain_offset``); the
    setting ``offset_shift`` (given points only; 0 without it) is added to the offset ``b``."""
    shifts = params.get("offset_shift", np.zeros(len(images)))
    out = []
    for img, s, shift in zip(images, params["saturation"], shifts, strict=True):
        gain, offset = saturate_gain_offset(float(s))
        out.append(saturate_one(img, gain, offset + float(shift)))
    return torch.stack(out).clamp(0.0, 1.0)


# --------------------------------------------------------------------------- speckle noise


def speckle_noise_one(image: torch.Tensor, sigma: float, noise: torch.Tensor) -> torch.Tensor:
    """``clip(x + x * sigma * n)`` with a given standard normal ``n`` of the image's shape."""
    return (image + image * (noise * sigma)).clamp(0.0, 1.0)


def speckle_noise(images: torch.Tensor, params: dict[str, np.ndarray],
                  seeds: Sequence[int]) -> torch.Tensor:
    """ImageNet-C speckle noise ``clip(x + x N(0, sigma^2))`` per pixel and channel.

    Noise: one float32 ``standard_normal((3, H, W))`` per sample.
    """
    shape = tuple(images.shape[1:])
    out = []
    for img, sigma, seed in zip(images, params["sigma"], seeds, strict=True):
        if float(sigma) == 0.0:
            out.append(img)
            continue
        n = numpy_generator(seed).standard_normal(shape, dtype=np.float32)
        noise = torch.from_numpy(n).to(img.device, img.dtype)
        out.append(speckle_noise_one(img, float(sigma), noise))
    return torch.stack(out)


# --------------------------------------------------------------------------- spatter

#: ImageNet-C's spatter severities: (loc, scale, sigma, threshold, intensity or mud blur, mud).
SPATTER_SEVERITIES = (
    (0.65, 0.3, 4.0, 0.69, 0.6, False),
    (0.65, 0.3, 3.0, 0.68, 0.6, False),
    (0.65, 0.3, 2.0, 0.68, 0.5, False),
    (0.65, 0.3, 1.0, 0.65, 1.5, True),
    (0.67, 0.4, 1.0, 0.65, 1.5, True),
)
#: CIFAR-10-C's spatter severities (``make_cifar_c.py``; the same fields): the settings of its
#: 32 x 32 images, whose liquid blobs are blurred 0.5 to 1 px where ImageNet-C's are 1 to 4 px.
SPATTER_SEVERITIES_32 = (
    (0.62, 0.1, 0.7, 0.7, 0.5, False),
    (0.65, 0.1, 0.8, 0.7, 0.5, False),
    (0.65, 0.3, 1.0, 0.69, 0.5, False),
    (0.65, 0.1, 0.7, 0.69, 0.6, True),
    (0.65, 0.1, 0.5, 0.68, 0.6, True),
)
#: The image sides (px) the two tables were made for (``spatter_severities``).
SPATTER_TABLE_SIDES = (32, 224)
#: Where ImageNet-C's five severities sit on the strength axis. Severities 1 and 2 are two
#: units apart because the blobs spread fastest between them (dv 0.30 to 0.71): spacing them
#: like the others would leave that stretch of dv thinly sampled.
SPATTER_KNOTS = (1.0, 3.0, 4.0, 5.0, 6.0)
#: The strongest strength: severity 5's mud with the threshold lowered until mud covers all.
SPATTER_MAX = 9.0
#: The mud threshold at ``SPATTER_MAX`` (0.10: no pixel of the layer stays below it, in
#: practice).
SPATTER_FULL_THRESHOLD = 0.10
#: Water is pale turquoise, mud brown (RGB, 0-255), as ImageNet-C.
WATER_RGB = (175.0, 238.0, 238.0)
MUD_RGB = (63.0, 42.0, 20.0)


def spatter_severities(side: int) -> tuple[tuple, ...]:
    """The five settings (as ``SPATTER_SEVERITIES``) that the strength path of an image of
    ``side`` px runs through: the published table made for the nearer image size in log(side),
    CIFAR-10-C's (``SPATTER_SEVERITIES_32``) up to 84 px, ImageNet-C's from 85 px (the two
    sizes' geometric mean is 84.7). Settings are not interpolated between the tables: mixing
    their numbers one by one makes a weaker spatter than either table in between."""
    small, large = SPATTER_TABLE_SIDES
    if math.log(side / small) <= math.log(large / side):
        return SPATTER_SEVERITIES_32
    return SPATTER_SEVERITIES


def spatter_setting(strength: float, side: int = SPATTER_TABLE_SIDES[1]
                    ) -> list[tuple[float, tuple]]:
    """The layers of one strength on an image of ``side`` px: ``[(weight, setting)]``, settings
    as ``SPATTER_SEVERITIES``, along ``spatter_severities(side)`` (ImageNet-C's at 224 px,
    CIFAR-10-C's at 32 px; its severities at the knots).

    0 is clean; up to 1 (severity 1) the water of severity 1 with its intensity times
    ``strength ** 2`` (dv grows about evenly in log strength); between the knots of two water
    severities (1 to 3 to 4) or two mud ones (5 to 6) every number of the setting is linear;
    from the water of severity 3 (4) to the mud of severity 4 (5) the two are cross-faded
    (weight on mud: the fraction of the way); beyond severity 5 (6) its mud with the threshold
    lowered linearly per unit, to ``SPATTER_FULL_THRESHOLD`` at 9.
    """
    sev, knots = spatter_severities(side), SPATTER_KNOTS
    if strength <= knots[0]:
        loc, scale, sigma, thr, intensity, mud = sev[0]
        ramp = (strength / knots[0]) ** 2
        return [(1.0, (loc, scale, sigma, thr, intensity * ramp, mud))]
    if strength >= knots[4]:
        loc, scale, sigma, thr, blur, mud = sev[4]
        step = (thr - SPATTER_FULL_THRESHOLD) / (SPATTER_MAX - knots[4])  # to full mud at 9
        return [(1.0, (loc, scale, sigma, thr - step * (strength - knots[4]), blur, mud))]
    k = max(i for i in range(4) if knots[i] <= strength)  # between severity k + 1 and k + 2
    lo, hi = sev[k], sev[k + 1]
    frac = (strength - knots[k]) / (knots[k + 1] - knots[k])
    if frac == 0.0:
        return [(1.0, lo)]
    if lo[5] != hi[5]:  # water to mud
        return [(1.0 - frac, lo), (frac, hi)]
    mixed = tuple(a + frac * (b - a) for a, b in zip(lo[:5], hi[:5], strict=True))
    return [(1.0, (*mixed, lo[5]))]


def liquid_layer(noise: np.ndarray, loc: float, scale: float, sigma: float,
                 threshold: float) -> np.ndarray:
    """ImageNet-C's liquid layer: ``N(loc, scale)`` per pixel (``loc + scale * noise``),
    Gaussian-blurred (scipy, ``mode="nearest"``, truncate 4), zero below ``threshold``."""
    from scipy.ndimage import gaussian_filter

    layer = gaussian_filter(loc + scale * noise, sigma, mode="nearest", truncate=4.0)
    layer[layer < threshold] = 0
    return layer


def water_mask(layer: np.ndarray, intensity: float) -> np.ndarray:
    """ImageNet-C's water: ``(H, W)`` float32 strength, 0 to ``intensity``.

    The layer at 8 bits, weighted by a texture made from its edges (OpenCV: Canny 50/150,
    distance to the edges capped at 20 px, 3 x 3 box, 8 bits, histogram equalisation, an
    emboss kernel, 3 x 3 box), normalised to a maximum of 1 (0 where the layer is empty),
    times ``intensity``.
    """
    import cv2

    layer8 = np.clip(layer * 255, 0, 255).astype(np.uint8)
    not_edge = 255 - cv2.Canny(layer8, 50, 150)
    dist = cv2.distanceTransform(not_edge, cv2.DIST_L2, 5)
    dist = np.minimum(dist, np.float32(20.0))
    dist = cv2.equalizeHist(cv2.blur(dist, (3, 3)).astype(np.uint8))
    emboss = np.array([[-2, -1, 0], [-1, 1, 1], [0, 1, 2]])
    dist = cv2.blur(cv2.filter2D(dist, cv2.CV_8U, emboss), (3, 3)).astype(np.float32)
    mask = layer8 * dist
    peak = mask.max()
    if peak <= 0:
        return np.zeros_like(mask)
    return mask / peak * np.float32(intensity)


def mud_mask(layer: np.ndarray, threshold: float, blur: float) -> np.ndarray:
    """ImageNet-C's mud: ``(H, W)`` float32 coverage, ``layer > threshold`` blurred (scipy
    Gaussian of ``blur`` px on float32, ``mode="nearest"``), values under 0.8 set to 0."""
    from scipy.ndimage import gaussian_filter

    mask = gaussian_filter((layer > threshold).astype(np.float32), blur, mode="nearest",
                           truncate=4.0)
    mask[mask < 0.8] = 0
    return mask


def spatter_one(image: torch.Tensor, strength: float, noise: np.ndarray) -> torch.Tensor:
    """Spatter of one ``(3, H, W)`` image from its ``(H, W)`` float64 standard normal noise; the
    layers follow the image's side (the smaller of H and W: ``spatter_severities``)."""
    if strength <= 0.0:
        return image
    out = torch.zeros_like(image)
    side = min(image.shape[-2:])
    for weight, (loc, scale, sigma, thr, extra, mud) in spatter_setting(strength, side):
        layer = liquid_layer(noise, loc, scale, sigma, thr)
        if mud:
            m = torch.from_numpy(mud_mask(layer, thr, extra)).to(image.device, image.dtype)
            colour = torch.tensor(MUD_RGB, dtype=image.dtype).to(image.device).view(3, 1, 1)
            part = image * (1.0 - m) + (colour / 255.0) * m
        else:
            m = torch.from_numpy(water_mask(layer, extra)).to(image.device, image.dtype)
            colour = torch.tensor(WATER_RGB, dtype=image.dtype).to(image.device).view(3, 1, 1)
            part = image + m * (colour / 255.0)
        out = out + part.clamp(0.0, 1.0) * weight
    return out


def spatter(images: torch.Tensor, params: dict[str, np.ndarray],
            seeds: Sequence[int]) -> torch.Tensor:
    """ImageNet-C spatter along ``strength`` in ``[0, SPATTER_MAX]`` (``spatter_setting``, with
    the layers of the image's side: CIFAR-10-C's at 32 px); noise from the seed."""
    _, _, h, w = images.shape
    out = []
    for img, strength, seed in zip(images, params["strength"], seeds, strict=True):
        if float(strength) <= 0.0:
            out.append(img)
            continue
        noise = numpy_generator(seed).standard_normal((h, w))
        out.append(spatter_one(img, float(strength), noise))
    return torch.stack(out).clamp(0.0, 1.0)
