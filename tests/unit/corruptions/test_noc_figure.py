"""Tests of NOC's appendix-figure candidates (``vcrbench.corruptions.noc_figure``) and of our
three variants kept beside them (radial backlight, smooth elastic, channel gains).

No peer implements these as NOC did (the paper's code is not a package, and its Figure 6, which
described them, was an image), so each is checked against (a) a slow, obviously correct
per-pixel reference of the documented definition on small images (inverse mapping + bilinear
interpolation with black outside for the warps; the crop and stretch as a loop over output
pixels; the frame, the split and the channel shift pixel by pixel, in exact bytes where the
values allow; the formula pixel by pixel, with Python's ``colorsys`` for the hue), (b)
``torchvision.transforms.v2.functional`` and torch where they compute the same thing
(``rotate``, ``affine`` with a translation or a shear, ``elastic`` given our displacement,
``interpolate`` after a whole-pixel crop, ``adjust_hue``, ``adjust_contrast`` on grey images,
``adjust_saturation``, ``rgb_to_grayscale``), (c) Albumentations' 8-bit additive brightness and
ToGray (one grey level), and (d) hand-made images (a frame of exactly w px, a 90 degree rotation
that is ``rot90``...). ``imagecorruptions`` is not a peer here: its brightness (HSV V),
contrast (per-channel means) and elastic transform (affine + elastic) are different operations
by design (registry docs).
Tolerances: 1e-9 in [0, 1] against the float64 references and torchvision's geometry (float
round-off); 1e-6 for torchvision's hue (its own HSV arithmetic); 1e-3 where
torchvision uses luma weight 0.2989 instead of BT.601's 0.299.
"""

from __future__ import annotations

import colorsys
import math

import numpy as np
import pytest
import torch
import torchvision.transforms.v2.functional as TF

from vcrbench.core.seeding import noise_seed
from vcrbench.corruptions import CORRUPTIONS, apply_corruption, get_corruption, uniform_samples
from vcrbench.corruptions import noc_figure as noc
from vcrbench.corruptions.sets import CORRUPTION_SETS

NOC = ["noc_border", "noc_translation", "noc_shear", "noc_elastic", "noc_rotation",
       "noc_backlight", "noc_brightness", "noc_contrast", "noc_colour_distortion",
       "noc_greyscale", "noc_hue"]
#: Ours, not NOC's: the operations that stood under NOC's names before (issue 33).
VARIANTS = ["noc_smooth_elastic", "noc_radial_backlight", "noc_channel_gains"]
NAMES = NOC + VARIANTS
BILINEAR = TF.InterpolationMode.BILINEAR


def rand_image(h: int, w: int, seed: int = 0) -> torch.Tensor:
    return torch.rand(3, h, w, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def params(**values: float) -> dict[str, np.ndarray]:
    return {k: np.array([v]) for k, v in values.items()}


def run(fn, image: torch.Tensor, seed: int = 0, **values: float) -> torch.Tensor:
    return fn(image[None], params(**values), [seed])[0]


# --------------------------------------------------------------------------- slow references


def bilinear_at(image: np.ndarray, xs: float, ys: float) -> np.ndarray:
    """Bilinear value of ``(3, H, W)`` at pixel-index coordinates, black outside the image."""
    _, h, w = image.shape
    x0, y0 = math.floor(xs), math.floor(ys)
    out = np.zeros(3)
    for yy, wy in ((y0, 1 - (ys - y0)), (y0 + 1, ys - y0)):
        for xx, wx in ((x0, 1 - (xs - x0)), (x0 + 1, xs - x0)):
            if 0 <= yy < h and 0 <= xx < w:
                out += wy * wx * image[:, yy, xx]
    return out


def reference_warp(image: torch.Tensor, source) -> np.ndarray:
    """Output pixel ``(i, j)`` = the input, bilinear, at ``source(X, Y)``; ``X, Y`` in px from the
    image centre (x right, y down), so pixel ``j`` is at ``X = j + 0.5 - W / 2``."""
    x = image.numpy()
    _, h, w = x.shape
    out = np.zeros_like(x)
    for i in range(h):
        for j in range(w):
            sx, sy = source(j + 0.5 - w / 2, i + 0.5 - h / 2, i, j)
            out[:, i, j] = bilinear_at(x, sx + w / 2 - 0.5, sy + h / 2 - 0.5)
    return out


def close(ours: torch.Tensor, ref, tol: float = 1e-9) -> None:
    ref = torch.as_tensor(np.asarray(ref), dtype=torch.float64)
    assert (ours - ref).abs().max().item() < tol


# --------------------------------------------------------------------------- registry


def test_registry_entries():
    for name in NAMES:
        spec = get_corruption(name)
        assert spec.source == "noc" and not spec.source_range and spec.imagenet_c_severities is None
        assert "not in the text" in spec.docs
    for name in NOC:
        assert "NOC-like" in CORRUPTIONS[name].docs
    for name in VARIANTS:
        assert "not noc's" in CORRUPTIONS[name].docs.lower()
        assert name not in CORRUPTION_SETS["noc-candidates"]
        assert name not in CORRUPTION_SETS["imagenet-noc"]
    classes = {n: CORRUPTIONS[n].visual_class for n in NOC}
    assert classes["noc_border"] == "occlusion"
    assert {classes[n] for n in NOC[1:5]} == {"geometric"}
    assert {classes[n] for n in NOC[5:]} == {"colour"}
    assert [n for n in NAMES if not CORRUPTIONS[n].stochastic] == [
        "noc_border", "noc_translation", "noc_brightness", "noc_contrast", "noc_greyscale"]
    assert list(CORRUPTIONS["noc_translation"].parameters) == ["dx", "dy"]


# --------------------------------------------------------------------------- geometry


@pytest.mark.parametrize("shape", [(9, 13), (12, 7)])
def test_warps_match_the_per_pixel_reference(shape):
    h, w = shape
    x = rand_image(h, w, 1)
    seed = 123
    # translation: content moved by (dx * W, dy * H) / 224, each axis on its own
    for dx, dy in ((17.3, -6.1), (0.0, 11.0), (-29.0, 0.0)):
        tx, ty = dx * w / 224, dy * h / 224
        close(run(noc.translation, x, seed, dx=dx, dy=dy),
              reference_warp(x, lambda X, Y, i, j, tx=tx, ty=ty: (X - tx, Y - ty)))
    # shear: row Y moves by k * Y
    k = noc.keyed_sign(seed) * math.tan(math.radians(21.0))
    close(run(noc.shear, x, seed, angle=21.0),
          reference_warp(x, lambda X, Y, i, j: (X - k * Y, Y)))
    # rotation: counter-clockwise on screen (y down) for a positive angle
    a = math.radians(noc.keyed_sign(seed) * 38.0)
    c, s = math.cos(a), math.sin(a)
    close(run(noc.rotation, x, seed, angle=38.0),
          reference_warp(x, lambda X, Y, i, j: (c * X - s * Y, s * X + c * Y)))
    # smooth elastic (ours): p + amplitude * (W, H) / 224 * field(p)
    f = noc.unit_displacement_field(seed, h, w, 5.0)
    amp = 9.0
    close(run(noc.smooth_elastic, x, seed, amplitude=amp, smoothness=5.0),
          reference_warp(x, lambda X, Y, i, j: (X + amp * w / 224 * f[0, i, j],
                                                 Y + amp * h / 224 * f[1, i, j])))


def test_displacement_field_is_smooth_unit_rms_and_keyed():
    f = noc.unit_displacement_field(7, 40, 56, 16.0)  # sigma 4 px along x
    assert f.shape == (2, 40, 56) and abs(np.sqrt((f**2).mean()) - 1) < 1e-12
    assert np.array_equal(f, noc.unit_displacement_field(7, 40, 56, 16.0))
    assert not np.array_equal(f, noc.unit_displacement_field(8, 40, 56, 16.0))
    step = np.abs(np.diff(f, axis=2)).mean()
    rough = noc.unit_displacement_field(7, 40, 56, 0.1)  # no smoothing: white noise
    assert step < 0.3 * np.abs(np.diff(rough, axis=2)).mean()


@pytest.mark.parametrize("shape", [(40, 40), (36, 52)])
def test_warps_match_torchvision(shape):
    h, w = shape
    x = rand_image(h, w, 2)
    for seed in (1, 2, 5):
        sign = noc.keyed_sign(seed)
        ref = TF.rotate(x, sign * 33.0, interpolation=BILINEAR)
        close(run(noc.rotation, x, seed, angle=33.0), ref)
        # torchvision's shear angle s moves row Y by -tan(s) * Y: ours is its shear = [-angle, 0]
        ref = TF.affine(x, angle=0.0, translate=[0.0, 0.0], scale=1.0,
                        shear=[-sign * 12.0, 0.0], interpolation=BILINEAR)
        close(run(noc.shear, x, seed, angle=12.0), ref)
        dx, dy = 6.5 * seed, -3.25 * seed
        ref = TF.affine(x, angle=0.0, translate=[dx * w / 224, dy * h / 224], scale=1.0,
                        shear=[0.0, 0.0], interpolation=BILINEAR)
        close(run(noc.translation, x, seed, dx=dx, dy=dy), ref)
        ref = TF.elastic(x, noc.elastic_displacement(seed, h, w, 4.0, 3.0))
        close(run(noc.smooth_elastic, x, seed, amplitude=4.0, smoothness=3.0), ref)


def test_hand_made_geometry():
    x = rand_image(40, 40, 3)
    # a quarter turn of a square image is rot90 (counter-clockwise), half a turn a double flip
    close(noc.affine_warp(x, noc.rotation_theta(90.0, 40, 40)), torch.rot90(x, 1, dims=(1, 2)))
    y = rand_image(33, 47, 4)
    close(noc.affine_warp(y, noc.rotation_theta(180.0, 33, 47)), y.flip(1, 2))
    # a whole-pixel shift to the right: the columns move, a black band appears on the left
    shifted = noc.affine_warp(x, noc.translation_theta(224 * 3 / 40, 0.0))  # 3 px of 40
    close(shifted[:, :, 3:], x[:, :, :-3])
    assert shifted[:, :, :3].abs().max() < 1e-12
    # a shear of factor 1 on 41 rows: row i (Y = i - 20 px) moves right by i - 20 px
    z = rand_image(41, 40, 5)
    sheared = noc.affine_warp(z, noc.shear_theta(1.0, 41, 40))
    close(sheared[:, 20], z[:, 20])
    close(sheared[:, 30, 10:], z[:, 30, :-10])
    close(sheared[:, 5, :25], z[:, 5, 15:])
    assert sheared[:, 30, :10].abs().max() < 1e-12 and sheared[:, 5, 25:].abs().max() < 1e-12


# --------------------------------------------------------------------------- border


def test_border_is_a_mid_grey_frame_of_exactly_w_pixels():
    """NOC's frame is mid-grey (0.5): on an 8-bit image, whole-pixel widths give the clean bytes
    inside and 128 (127.5 rounded half to even) in the frame, exactly."""
    rng = np.random.default_rng(0)
    x8 = rng.integers(0, 256, (1, 3, 224, 224))
    x = torch.from_numpy(x8 / 255.0).float()
    for width in (1, 5, 37, 111):
        out = apply_corruption("noc_border", x, {"width": [float(width)]}, [0]).numpy()
        ref = np.full_like(x8, 128)
        for i in range(width, 224 - width):
            for j in range(width, 224 - width):
                ref[:, :, i, j] = x8[:, :, i, j]
        np.testing.assert_array_equal(out, ref)
    whole = apply_corruption("noc_border", x, {"width": [112.0]}, [0])
    assert (whole == 128).all()
    # non-square: bands of width * W / 224 px left and right, width * H / 224 top and bottom
    y = rand_image(32, 64, 6)
    out = run(noc.border, y, width=28.0)  # 8 px left and right, 4 px top and bottom
    keep = torch.zeros(32, 64, dtype=torch.float64)
    keep[4:28, 8:56] = 1
    close(out, y * keep + 0.5 * (1 - keep))


def test_border_covers_partial_pixels_by_area():
    y = rand_image(40, 56, 7)
    out = run(noc.border, y, width=224 * 2.25 / 56)  # 2.25 px left/right, 1.6071 px top/bottom
    bx, by = 2.25, 224 * 2.25 / 56 * 40 / 224
    ref = np.zeros((3, 40, 56))
    for i in range(40):
        for j in range(56):
            cx = min(1, max(0, min(j + 1, bx) - j) + max(0, j + 1 - max(j, 56 - bx)))
            cy = min(1, max(0, min(i + 1, by) - i) + max(0, i + 1 - max(i, 40 - by)))
            keep = (1 - cx) * (1 - cy)
            ref[:, i, j] = y[:, i, j].numpy() * keep + 0.5 * (1 - keep)
    close(out, ref)


# --------------------------------------------------------------------------- elastic (crop)


def reference_crop_stretch(image: np.ndarray, crop_224: float, side: str) -> np.ndarray:
    """Crop ``crop_224`` px (of 224) off ``side`` and stretch the rest back, output pixel by
    output pixel: the kept interval of the axis mapped linearly onto the whole axis, the input
    read at that pixel position by linear interpolation between the two nearest kept pixels."""
    _, h, w = image.shape
    horizontal = side in ("left", "right")
    n = w if horizontal else h
    c = crop_224 * n / 224
    kept_from, kept_to = (c, n) if side in ("left", "top") else (0.0, n - c)
    out = np.zeros_like(image)
    for k in range(n):
        centre = kept_from + (k + 0.5) * (kept_to - kept_from) / n  # continuous position
        t = centre - 0.5  # as a pixel index (pixel k's centre is at k + 0.5)
        t = min(max(t, kept_from), kept_to - 1)  # kept pixel centres: [from, to - 1]
        lo = math.floor(t)
        f = t - lo
        hi = min(lo + 1, n - 1)
        if horizontal:
            out[:, :, k] = (1 - f) * image[:, :, lo] + f * image[:, :, hi]
        else:
            out[:, k, :] = (1 - f) * image[:, lo, :] + f * image[:, hi, :]
    return out


@pytest.mark.parametrize("shape", [(9, 13), (40, 32)])
def test_elastic_crops_one_side_and_stretches_the_rest_back(shape):
    h, w = shape
    x = rand_image(h, w, 21)
    for side in noc.SIDES:
        for crop in (0.3, 17.0, 100.5, 223.0):
            close(noc.crop_stretch(x, crop, side), reference_crop_stretch(x.numpy(), crop, side))
    # the seed picks the side
    for seed in (1, 2, 3, 4, 5):
        side = noc.keyed_side(seed)
        close(run(noc.elastic, x, seed, crop=50.0),
              reference_crop_stretch(x.numpy(), 50.0, side))


def test_elastic_with_whole_pixels_is_a_crop_and_a_bilinear_resize():
    """A whole-pixel crop is cutting those pixels off and torch's bilinear resize
    (``align_corners=False``) back to the image's size."""
    x = rand_image(48, 64, 22)
    resize = torch.nn.functional.interpolate
    for side, crop_px in (("left", 8), ("right", 13), ("top", 5), ("bottom", 30)):
        if side in ("left", "right"):
            crop_224 = crop_px * 224 / 64
            kept = x[:, :, crop_px:] if side == "left" else x[:, :, :64 - crop_px]
        else:
            crop_224 = crop_px * 224 / 48
            kept = x[:, crop_px:] if side == "top" else x[:, :48 - crop_px]
        ref = resize(kept[None], size=(48, 64), mode="bilinear", align_corners=False)[0]
        close(noc.crop_stretch(x, crop_224, side), ref)
    # a crop of nothing is the identity; the strongest leaves one pixel stretched over the axis
    close(noc.crop_stretch(x, 0.0, "left"), x)
    y = rand_image(224, 224, 23)
    close(noc.crop_stretch(y, 223.0, "right"), y[:, :, :1].expand(3, 224, 224))
    close(noc.crop_stretch(y, 223.0, "top"), y[:, 223:].expand(3, 224, 224))


# --------------------------------------------------------------------------- colour


def test_backlight_brightens_one_part_and_darkens_the_other():
    """8-bit images, strength 0.2 (51 grey levels, no rounding ties): every pixel on the bright
    side of the split is clip(x + 51), every pixel on the dark side clip(x - 51), and a pixel
    the line crosses is shifted by 51 (2 a - 1), a its bright fraction; exact bytes."""
    rng = np.random.default_rng(1)
    h, w = 36, 50
    x8 = rng.integers(0, 256, (6, 3, h, w))
    x = torch.from_numpy(x8 / 255.0)
    seeds = [noise_seed(3, "noc_backlight", i) for i in range(6)]
    out = apply_corruption("noc_backlight", x, {"strength": [0.2] * 6}, seeds).numpy()
    splits = set()
    for k, seed in enumerate(seeds):
        vertical, position, bright_first = noc.keyed_split(seed)
        splits.add((vertical, bright_first))
        n = w if vertical else h
        line = position * n
        ref = np.zeros((3, h, w))
        for i in range(h):
            for j in range(w):
                p = j if vertical else i
                before = min(max(line - p, 0.0), 1.0)  # the area of pixel p before the line
                bright = before if bright_first else 1 - before
                ref[:, i, j] = np.clip(x8[k, :, i, j] + 51.0 * (2 * bright - 1), 0, 255)
        np.testing.assert_array_equal(out[k], np.round(ref))
        assert 0.25 <= position <= 0.75
    assert len(splits) >= 3  # both axes and both senses occur among six seeds


def test_colour_distortion_adds_a_constant_to_one_channel():
    """8-bit images, shift +-0.2 (51 levels): the seed's channel is clip(x +- 51), the other two
    are the clean bytes; exact bytes."""
    rng = np.random.default_rng(2)
    x8 = rng.integers(0, 256, (6, 3, 32, 40))
    x = torch.from_numpy(x8 / 255.0).float()
    seeds = [noise_seed(4, "noc_colour_distortion", i) for i in range(6)]
    for shift in (0.2, -0.2):
        out = apply_corruption("noc_colour_distortion", x, {"shift": [shift] * 6}, seeds).numpy()
        for k, seed in enumerate(seeds):
            c = noc.keyed_channel(seed)
            ref = x8[k].copy()
            ref[c] = np.clip(ref[c] + round(shift * 255), 0, 255)
            np.testing.assert_array_equal(out[k], ref)
    channels = [noc.keyed_channel(noise_seed(0, "noc_colour_distortion", i)) for i in range(300)]
    assert np.bincount(channels, minlength=3).min() > 80




def test_colour_corruptions_match_the_per_pixel_formula():
    x = rand_image(6, 5, 8)
    xn = x.numpy()
    seed = 77
    y601 = 0.299 * xn[0] + 0.587 * xn[1] + 0.114 * xn[2]
    close(run(noc.brightness, x, shift=0.3), np.clip(xn + 0.3, 0, 1))
    close(run(noc.brightness, x, shift=-0.45), np.clip(xn - 0.45, 0, 1))
    m = xn.mean()  # NOC's: the plain mean of all values
    close(run(noc.contrast, x, factor=0.35), m + 0.35 * (xn - m))
    close(run(noc.greyscale, x, factor=0.6), 0.4 * xn + 0.6 * y601)
    z = noc.keyed_gain_exponents(seed)
    gains = [2.0 ** (1.7 * zc) for zc in z]
    close(run(noc.channel_gains, x, seed, strength=1.7),
          np.clip(np.stack([xn[c] * gains[c] for c in range(3)]), 0, 1))
    u, v = noc.keyed_light_centre(seed)
    ref = np.zeros_like(xn)
    for i in range(6):
        for j in range(5):
            dx = (j + 0.5 - u * 5) * 224 / 5
            dy = (i + 0.5 - v * 6) * 224 / 6
            light = 1.3 / (1 + (dx * dx + dy * dy) / 56**2)
            ref[:, i, j] = np.clip(xn[:, i, j] + light, 0, 1)
    close(run(noc.radial_backlight, x, seed, strength=1.3), ref)
    turn = noc.keyed_sign(seed) * 75.0 / 360
    ref = np.zeros_like(xn)
    for i in range(6):
        for j in range(5):
            h, s, val = colorsys.rgb_to_hsv(*xn[:, i, j])
            ref[:, i, j] = colorsys.hsv_to_rgb((h + turn) % 1.0, s, val)
    close(run(noc.hue, x, seed, angle=75.0), ref)


def test_colour_corruptions_match_torchvision():
    x = rand_image(24, 30, 9)
    for seed in (1, 4):
        sign = noc.keyed_sign(seed)
        for angle in (10.0, 95.0, 180.0):
            close(run(noc.hue, x, seed, angle=angle), TF.adjust_hue(x, sign * angle / 360), 1e-6)
    # torchvision's adjust_contrast blends towards the mean luma, NOC's towards the mean of all
    # values: the same for a grey image only
    g = x.mean(0, keepdim=True).expand(3, -1, -1)
    for f in (0.9, 0.4, 0.0):
        close(run(noc.contrast, g, factor=f), TF.adjust_contrast(g, f), 1e-3)
    for f in (0.3, 1.0):
        close(run(noc.greyscale, x, factor=f), TF.adjust_saturation(x, 1 - f), 1e-3)
    grey = run(noc.greyscale, x, factor=1.0)
    close(grey, TF.rgb_to_grayscale(x, num_output_channels=3), 1e-3)
    assert torch.equal(grey[0], grey[1]) and torch.equal(grey[1], grey[2])


def test_greyscale_keeps_the_luma_that_vif_sees():
    """VIF compares the images' OpenCV grey levels, which the blend keeps up to 8-bit rounding:
    dv stays near 0 whatever the factor (the registry docs: coverage cannot reach the target)."""
    from vcrbench.vif import rgb_to_gray

    x = torch.rand(2, 3, 48, 40, generator=torch.Generator().manual_seed(10))
    clean = apply_corruption("noc_greyscale", x, {"factor": [0.0, 0.0]}, [0, 1])
    for f in (0.5, 1.0):
        grey = apply_corruption("noc_greyscale", x, {"factor": [f, f]}, [0, 1])
        assert not torch.equal(clean, grey)
        assert (rgb_to_gray(clean) - rgb_to_gray(grey)).abs().max() <= 1


# --------------------------------------------------------------------------- keyed, batched, ends


def test_keyed_draws():
    seeds = [noise_seed(0, "noc_rotation", i) for i in range(400)]
    signs = np.array([noc.keyed_sign(s) for s in seeds])
    assert set(signs) == {-1.0, 1.0} and abs(signs.mean()) < 0.2
    sides = [noc.keyed_side(s) for s in seeds]
    assert all(sides.count(side) > 70 for side in noc.SIDES)
    splits = np.array([noc.keyed_split(s) for s in seeds])
    assert 150 < splits[:, 0].sum() < 250 and 150 < splits[:, 2].sum() < 250
    assert splits[:, 1].min() >= 0.25 and splits[:, 1].max() <= 0.75
    centres = np.array([noc.keyed_light_centre(s) for s in seeds])
    assert centres.min() >= 0.25 and centres.max() <= 0.75
    z = np.array([noc.keyed_gain_exponents(s) for s in seeds])
    assert z.min() >= -1 and z.max() <= 1 and z.min() < -0.95 and z.max() > 0.95


@pytest.mark.parametrize("name", NAMES)
def test_outputs_depend_only_on_image_parameters_and_seed(name):
    x = torch.rand(5, 3, 40, 56, generator=torch.Generator().manual_seed(11))
    points = uniform_samples(name, 11, range(5))
    batch = {k: [p[k] for p in points] for k in points[0]}
    seeds = [noise_seed(11, name, i) for i in range(5)]
    whole = apply_corruption(name, x, batch, seeds)
    parts = [apply_corruption(name, x[s], {k: v[s] for k, v in batch.items()}, seeds[s])
             for s in (slice(0, 2), slice(2, 5))]
    assert torch.equal(whole, apply_corruption(name, x, batch, seeds))
    assert torch.equal(whole, torch.cat(parts))
    d = (whole.int() - apply_corruption(name, x.double(), batch, seeds).int()).abs()
    assert d.max() <= 1 and (d > 0).float().mean() < 0.01
    if get_corruption(name).stochastic:
        assert not torch.equal(whole, apply_corruption(name, x, batch, [s + 1 for s in seeds]))


@pytest.mark.parametrize("name", NAMES)
def test_domain_ends(name):
    spec = get_corruption(name)
    x = torch.rand(3, 3, 36, 50, generator=torch.Generator().manual_seed(12))
    x = torch.nn.functional.avg_pool2d(x, 3, 1, 1)
    clean = (x * 255).round().to(torch.uint8)
    seeds = [3, 4, 5]
    identity = {k: [v] * 3 for k, v in spec.identity.items()}
    assert torch.equal(apply_corruption(name, x, identity, seeds), clean)
    out = apply_corruption(name, x, {k: [v] * 3 for k, v in spec.strongest.items()}, seeds)
    assert out.shape == clean.shape
    flat = out.flatten(1).float().std(1)
    if name in ("noc_border", "noc_translation", "noc_radial_backlight", "noc_brightness",
                "noc_contrast"):
        assert (flat == 0).all()  # black, white or flat grey
    elif name == "noc_backlight":  # one part white, the other black, one line of pixels between
        for image, seed in zip(out, seeds, strict=True):
            vertical = noc.keyed_split(seed)[0]
            lines = image.float().std(1 if vertical else 2).amax(0)  # along the split line
            assert (lines > 0).sum() <= 1  # only the line of pixels that the split crosses
            assert ((image == 0) | (image == 255)).float().mean() > 1 - 1.5 / min(36, 50)
    elif name == "noc_elastic":  # one pixel of the kept side stretched along the axis
        for image, seed in zip(out, seeds, strict=True):
            axis = 2 if noc.keyed_side(seed) in ("left", "right") else 1
            assert (image.float().std(axis) == 0).all()
    elif name == "noc_shear":  # only the rows next to the centre row keep anything
        assert ((out > 0).any(1).float().mean((1, 2)) < 0.06).all()
    elif name == "noc_rotation":  # 180 degrees: upside down
        assert (out.int() - clean.flip(2, 3).int()).abs().max() <= 1
    elif name == "noc_smooth_elastic":  # scrambled: little correlation with the clean image
        for a, b in zip(out.float(), clean.float(), strict=True):
            r = np.corrcoef(a.flatten().numpy(), b.flatten().numpy())[0, 1]
            assert r < 0.4
    elif name == "noc_greyscale":
        assert torch.equal(out[:, 0], out[:, 1]) and torch.equal(out[:, 1], out[:, 2])
    elif name == "noc_colour_distortion":  # one channel white, the others clean
        for image, ref, seed in zip(out, clean, seeds, strict=True):
            c = noc.keyed_channel(seed)
            assert (image[c] == 255).all()
            others = [k for k in range(3) if k != c]
            assert torch.equal(image[others], ref[others])
    elif name == "noc_channel_gains":  # gains 2 ** (8 z): thresholded or black channels
        z = torch.from_numpy(np.stack([noc.keyed_gain_exponents(s) for s in seeds]))
        gains = (2.0 ** (8 * z)).float()[:, :, None, None]
        ref = (x * gains).clamp(0, 1).mul(255).round()
        assert (out.float() - ref).abs().max() <= 1
        assert (out.float().amax((2, 3))[z < -0.5] <= 255 / 16 + 1).all()
    elif name == "noc_hue":  # half a turn: the complementary hue, same value
        assert torch.equal(out.amax(1), clean.amax(1)) or (
            (out.int().amax(1) - clean.int().amax(1)).abs().max() <= 1)


def test_translation_at_the_far_end_of_either_axis_clears_the_image():
    x = torch.ones(1, 3, 32, 48)
    for dx, dy in ((224.0, 0.0), (-224.0, 0.0), (0.0, 224.0), (0.0, -224.0), (224.0, 224.0)):
        out = apply_corruption("noc_translation", x, {"dx": [dx], "dy": [dy]}, [0])
        assert out.max() == 0
    # a shift along x leaves the rows where they were
    x = rand_image(32, 48, 24)[None]
    out = apply_corruption("noc_translation", x, {"dx": [224 * 5 / 48], "dy": [0.0]}, [0])
    assert torch.equal(out[..., 5:], (x[..., :-5] * 255).round().to(torch.uint8))


def test_brightness_and_greyscale_match_albumentations():
    """Albumentations (8-bit): RandomBrightnessContrast's ``multiply_add(img, 1, beta)`` is the
    additive brightness, ToGray's weighted average (OpenCV RGB2GRAY) the greyscale end; within
    one grey level (8-bit rounding)."""
    pytest.importorskip("albumentations")
    import albucore
    from albumentations.augmentations.pixel import functional as fpixel

    rng = np.random.default_rng(13)
    img = rng.integers(0, 256, (2, 36, 40, 3), dtype=np.uint8)
    x = torch.from_numpy(img).permute(0, 3, 1, 2).float() / 255
    for shift in (0.2, -0.35, 0.8):
        ours = apply_corruption("noc_brightness", x, {"shift": [shift] * 2}, [0, 1])
        ref = np.stack([albucore.multiply_add(a, 1.0, shift * 255, inplace=False) for a in img])
        assert np.abs(ours.permute(0, 2, 3, 1).int().numpy() - ref.astype(int)).max() <= 1
    ours = apply_corruption("noc_greyscale", x, {"factor": [1.0] * 2}, [0, 1])
    ref = np.stack([fpixel.to_gray_weighted_average(a) for a in img])
    assert np.abs(ours[:, 0].int().numpy() - ref.astype(int)).max() <= 1
