"""Tests of ``vcrbench.corruptions.digital``: contrast, pixelate, JPEG compression, saturate,
speckle noise and spatter against ImageNet-C (``imagecorruptions`` 1.1.2), keyed randomness,
batch independence and both ends of every domain.

Peers and tolerances (grey levels, 0-255). The package returns floats that ``np.uint8`` truncates;
ours round to nearest, so float outputs are compared before quantisation. Contrast, saturate:
float within 1e-3 levels. Pixelate: uint8 within 1 level (Pillow rounds to 8 bits after each
axis of the box reduction, we round once). JPEG: identical bytes (the same Pillow codec).
Speckle noise and spatter: the package's own noise (its global numpy stream, replayed) fed to our
per-sample functions; speckle within 1e-3 levels, spatter within 1e-3 levels on all but a
handful of pixels (float round-off can move an 8-bit truncation of the liquid layer by one
step, which moves its edges). Our keyed draws are also compared with the package's in
distribution (speckle: mean and standard deviation of the change within 3 %).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers.peers import diff, imagecorruptions_module, seeded_numpy
from PIL import Image

from vcrbench.core.seeding import noise_seed
from vcrbench.corruptions import apply_corruption, get_corruption, imagenet_c_samples
from vcrbench.corruptions import digital as dig
from vcrbench.corruptions.sampling import uniform_samples

NAMES = ["contrast", "pixelate", "jpeg_compression", "speckle_noise", "spatter", "saturate"]


@pytest.fixture(scope="module")
def images() -> np.ndarray:
    """Three small real-looking images: skimage's astronaut, chelsea and coffee, 96 x 112."""
    from skimage import data

    out = []
    for f in (data.astronaut, data.chelsea, data.coffee):
        image = Image.fromarray(f()).convert("RGB").resize((112, 96), Image.BILINEAR)
        out.append(np.asarray(image))
    return np.stack(out)


@pytest.fixture(scope="module")
def ic():
    """``imagecorruptions.corruptions`` imported with a stand-in ``pkg_resources``."""
    return imagecorruptions_module()


def to_tensor(images: np.ndarray, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(images)).permute(0, 3, 1, 2).to(dtype) / 255.0


def to_hwc(t: torch.Tensor) -> np.ndarray:
    return t.permute(0, 2, 3, 1).numpy()


def corrupt(name: str, images: np.ndarray, point: dict[str, float], seeds=None) -> np.ndarray:
    n = len(images)
    seeds = list(range(1, n + 1)) if seeds is None else seeds
    out = apply_corruption(name, to_tensor(images), {k: [v] * n for k, v in point.items()}, seeds)
    return to_hwc(out)


# --------------------------------------------------------------------------- the registry


def test_entries_and_severities():
    for name in NAMES:
        spec = get_corruption(name)
        assert spec.source == "imagenet-c" and len(imagenet_c_samples(name)) == 5
    assert get_corruption("speckle_noise").visual_class == "noise"
    assert get_corruption("spatter").visual_class == "weather"
    assert {get_corruption(n).visual_class for n in ("contrast", "pixelate", "jpeg_compression",
                                                     "saturate")} == {"digital"}
    gains = [dig.saturate_gain_offset(p["saturation"]) for p in imagenet_c_samples("saturate")]
    np.testing.assert_allclose(gains, [(0.3, 0), (0.1, 0), (2, 0), (5, 0.1), (20, 0.2)],
                               rtol=1e-12, atol=1e-15)
    for k, point in enumerate(imagenet_c_samples("spatter")):
        assert dig.spatter_setting(point["strength"]) == [(1.0, dig.SPATTER_SEVERITIES[k])]
    assert [dig.jpeg_quality(q) for q in (1.0, 1.49, 1.5, 7.0, 100.49, 100.5, 101.0)] == [
        1, 1, 2, 7, 100, 101, 101]


# --------------------------------------------------------------------------- peers


@pytest.mark.parametrize("name", ["contrast", "saturate"])
def test_deterministic_colour_changes_match_the_package(name, images, ic):
    """Float outputs within 1e-3 grey levels of the package's."""
    spec = get_corruption(name)
    for severity, point in enumerate(imagenet_c_samples(name), 1):
        ref = np.stack([np.clip(getattr(ic, name)(Image.fromarray(x), severity), 0, 255)
                        for x in images])
        arrays = {k: np.full(len(images), v) for k, v in point.items()}
        ours = spec.function(to_tensor(images, torch.float64), arrays, [0] * len(images))
        d = diff(to_hwc(ours) * 255, ref)
        assert d.max() < 1e-3, (severity, d.max())
        signed = corrupt(name, images, point).astype(np.float64) - np.uint8(ref)
        assert signed.min() >= 0 and signed.max() <= 1


def test_saturate_extremes_are_skimage_hsv(images):
    """The shortcut against skimage's HSV round trip, at the ends and in between."""
    from skimage.color import hsv2rgb, rgb2hsv

    x = images[:1, :40, :48]
    for saturation in (-1.0, -0.3, 0.3, 0.97, 1.0):
        gain, offset = dig.saturate_gain_offset(saturation)
        hsv = rgb2hsv(x[0] / 255.0)
        s = hsv[..., 1]
        hsv[..., 1] = (np.where(s > 0, 1.0, offset) if np.isinf(gain) else
                       np.clip(s * gain + offset, 0, 1))
        ref = hsv2rgb(hsv)
        ours = dig.saturate_one(to_tensor(x, torch.float64)[0], gain, offset)
        assert diff(ours.permute(1, 2, 0).numpy(), ref).max() < 1e-9
    out = corrupt("saturate", x, {"saturation": -1.0})
    assert (out.max(axis=-1) == out.min(axis=-1)).all()  # greyscale


def test_pixelate_matches_the_package(images, ic):
    """Pillow rounds after each axis: within 1 grey level, on square and non-square images."""
    for x in (images[:2], images[:2, :61, :47]):
        for severity, point in enumerate(imagenet_c_samples("pixelate"), 1):
            ref = np.stack([np.asarray(ic.pixelate(Image.fromarray(np.ascontiguousarray(img)),
                                                   severity)) for img in x])
            d = diff(corrupt("pixelate", x, point), ref)
            assert d.max() <= 1 and d.mean() < 0.5, (severity, d.max(), d.mean())


def test_pixelate_resampling_rules_are_pillows():
    """Box matrices and nearest indices against Pillow on 16-bit-free float images ('F' mode:
    no rounding), for sizes that do and do not divide."""
    rng = np.random.default_rng(0)
    row = rng.random((1, 37)).astype(np.float32)
    for n_out in (1, 2, 5, 12, 18, 36):
        ref = np.asarray(Image.fromarray(row, mode="F").resize((n_out, 1), Image.BOX))[0]
        np.testing.assert_allclose(dig.box_matrix(37, n_out) @ row[0], ref, rtol=1e-5)
        small = rng.random((1, n_out)).astype(np.float32)
        ref = np.asarray(Image.fromarray(small, mode="F").resize((37, 1), Image.NEAREST))[0]
        np.testing.assert_array_equal(small[0][dig.nearest_index(n_out, 37)], ref)


def test_jpeg_matches_the_package_exactly(images, ic):
    for severity, point in enumerate(imagenet_c_samples("jpeg_compression"), 1):
        ref = np.stack([np.asarray(ic.jpeg_compression(Image.fromarray(x), severity))
                        for x in images])
        np.testing.assert_array_equal(corrupt("jpeg_compression", images, point), ref)


def test_speckle_noise_matches_the_package(images, ic):
    """With the package's noise fed in: 1e-3 levels; our keyed noise: the same distribution."""
    x = images[:2]
    levels = imagenet_c_samples("speckle_noise")
    for severity, point in enumerate(levels, 1):
        for k, img in enumerate(x):
            with seeded_numpy(10 * severity + k):
                ref = np.clip(ic.speckle_noise(Image.fromarray(img), severity), 0, 255)
            n = np.random.RandomState(10 * severity + k).standard_normal(img.shape)
            noise = torch.from_numpy(n).permute(2, 0, 1)
            ours = dig.speckle_noise_one(to_tensor(img[None], torch.float64)[0], point["sigma"],
                                         noise)
            assert diff(ours.permute(1, 2, 0).numpy() * 255, ref).max() < 1e-3
    for severity in (1, 3, 5):
        with seeded_numpy(severity):
            ref = np.stack([np.round(np.clip(ic.speckle_noise(Image.fromarray(img), severity),
                                             0, 255)) for img in x])
        seeds = [noise_seed(severity, "speckle_noise", i) for i in range(len(x))]
        ours = corrupt("speckle_noise", x, levels[severity - 1], seeds)
        d_ref, d_ours = ref - x, ours.astype(np.float64) - x
        assert abs(d_ours.mean() - d_ref.mean()) < 0.03 * d_ref.std() + 0.3
        assert abs(d_ours.std() / d_ref.std() - 1) < 0.03


def test_spatter_matches_the_package(images, ic):
    """The package's liquid layer noise fed in: water (1-3) and mud (4, 5) within 1e-3 levels
    except on at most 0.1 % of the pixels, at 224 px (ImageNet-C's settings; smaller images
    get smaller blobs: ``test_spatter_layers_follow_the_image_side``)."""
    x = np.stack([np.asarray(Image.fromarray(img).resize((224, 224), Image.BILINEAR))
                  for img in images[:2]])
    for severity, point in enumerate(imagenet_c_samples("spatter"), 1):
        loc, scale = dig.SPATTER_SEVERITIES[severity - 1][:2]
        for k, img in enumerate(x):
            with seeded_numpy(7 * severity + k):
                ref = np.clip(ic.spatter(Image.fromarray(img), severity), 0, 255)
            n = np.random.RandomState(7 * severity + k).standard_normal(img.shape[:2])
            ours = dig.spatter_one(to_tensor(img[None], torch.float64)[0], point["strength"], n)
            d = diff(ours.clamp(0, 1).permute(1, 2, 0).numpy() * 255, ref).max(axis=-1)
            assert (d > 1e-3).mean() <= 1e-3, (severity, (d > 1e-3).mean())
            assert ref.std() > 0 and diff(ref, img).max() > 20  # spatter is visible
    # and the layer really is the package's N(loc, scale): loc + scale * n, bit for bit
    with seeded_numpy(3):
        drawn = np.random.normal(size=(5, 4), loc=loc, scale=scale)
    np.testing.assert_array_equal(drawn, loc + scale * np.random.RandomState(3).standard_normal(
        (5, 4)))


def test_spatter_strength_is_continuous(images):
    x = to_tensor(images[:1], torch.float64)[0]
    n = np.random.default_rng(0).standard_normal(x.shape[1:])
    for s in (0.0, 0.5, 1.0, 2.7, 3.0, 4.0, 4.5, 5.0, 6.0, 7.3):
        a = dig.spatter_one(x, s, n)
        b = dig.spatter_one(x, s + 1e-7, n)
        assert (a - b).abs().mean() < 1e-3, s
    full = dig.spatter_one(x, dig.SPATTER_MAX, n)
    brown = torch.tensor(dig.MUD_RGB, dtype=full.dtype).view(3, 1, 1) / 255
    assert torch.allclose(full, brown.expand_as(full))


def test_spatter_layers_follow_the_image_side():
    """The table made for the nearer size in log(side): CIFAR-10-C's up to 84 px, ImageNet-C's
    from 85 px (the geometric mean of 32 and 224 is 84.7); the strength path runs through the
    side's table, with full mud at the strongest strength on any side; the sampling definition
    holds the side's table (a change remakes a run's samples), and none at 224 px."""
    from vcrbench.corruptions.sampling import sampling_definition

    for side, table in ((16, dig.SPATTER_SEVERITIES_32), (32, dig.SPATTER_SEVERITIES_32),
                        (84, dig.SPATTER_SEVERITIES_32), (85, dig.SPATTER_SEVERITIES),
                        (224, dig.SPATTER_SEVERITIES), (512, dig.SPATTER_SEVERITIES)):
        assert dig.spatter_severities(side) is table, side
    for side in (32, 96, 224):
        table = dig.spatter_severities(side)
        for knot, setting in zip(dig.SPATTER_KNOTS, table, strict=True):
            assert dig.spatter_setting(knot, side) == [(1.0, setting)]
        (_, (*_, threshold, _, mud)), = dig.spatter_setting(dig.SPATTER_MAX, side)
        assert mud and threshold == pytest.approx(dig.SPATTER_FULL_THRESHOLD)
    x = torch.full((3, 32, 32), 0.5, dtype=torch.float64)
    full = dig.spatter_one(x, dig.SPATTER_MAX, np.random.default_rng(1).standard_normal((32, 32)))
    brown = torch.tensor(dig.MUD_RGB, dtype=full.dtype).view(3, 1, 1) / 255
    assert torch.allclose(full, brown.expand_as(full))
    for mode in ("uniform", "imagenet-c"):
        assert "layers" not in sampling_definition("spatter", mode)
        small = sampling_definition("spatter", mode, side=32)["layers"]
        assert small == [list(s) for s in dig.SPATTER_SEVERITIES_32]
        assert sampling_definition("frost", mode, side=32)["layers"] == pytest.approx(0.2)
        assert "layers" not in sampling_definition("fog", mode, side=32)


# --------------------------------------------------------------------------- contract


@pytest.mark.parametrize("name", NAMES)
def test_keyed_batch_split_and_layout(name, images):
    """Same seed: same bytes; splits 5 = 2 + 3 and a single image change nothing; float64 input
    is within float round-off; another seed changes stochastic corruptions."""
    x = np.concatenate([images, images[:2, ::-1]])[:, 10:58, 5:69]  # 5 images, 48 x 64
    params = uniform_samples(name, 11, range(5))
    batch = {k: [p[k] for p in params] for k in params[0]}
    seeds = [noise_seed(11, name, i) for i in range(5)]
    whole = apply_corruption(name, to_tensor(x), batch, seeds)
    assert whole.dtype == torch.uint8 and whole.shape == (5, 3, 48, 64)
    assert torch.equal(whole, apply_corruption(name, to_tensor(x), batch, seeds))
    parts = [apply_corruption(name, to_tensor(x[s]), {k: v[s] for k, v in batch.items()},
                              seeds[s]) for s in (slice(0, 2), slice(2, 5))]
    assert torch.equal(whole, torch.cat(parts))
    single = apply_corruption(name, to_tensor(x[3:4]), {k: v[3:4] for k, v in batch.items()},
                              seeds[3:4])
    assert torch.equal(whole[3:4], single)
    wide = apply_corruption(name, to_tensor(x, torch.float64), batch, seeds)
    d = (whole.int() - wide.int()).abs()
    assert d.float().mean() < 0.02 and (d > 1).float().mean() < 0.002
    if get_corruption(name).stochastic:
        other = apply_corruption(name, to_tensor(x), batch, [s + 1 for s in seeds])
        assert not torch.equal(whole, other)


@pytest.mark.parametrize("name", NAMES)
def test_clean_end_and_strongest_end(name, images):
    spec = get_corruption(name)
    x = images[:2]
    assert diff(corrupt(name, x, dict(spec.identity)), x).max() == 0
    out = corrupt(name, x, dict(spec.strongest))
    small = corrupt(name, images[:1, :33, :47], dict(spec.strongest))
    assert small.shape == (1, 33, 47, 3)
    luma = np.array([0.299, 0.587, 0.114])
    if name == "contrast":  # flat: the mean colour
        assert (out.reshape(2, -1, 3).std(axis=1) < 0.5).all()
    elif name == "pixelate":  # 3 x 3 blocks of a 96 x 112 image: 1 x 1
        assert all(len(np.unique(o.reshape(-1, 3), axis=0)) == 1 for o in out)
        assert len(np.unique(small.reshape(-1, 3), axis=0)) == 1
    elif name == "jpeg_compression":  # as far as the codec goes: 8 x 8 blocks of few colours
        assert diff(out, x).mean() > 10
    elif name == "speckle_noise":
        corr = [np.corrcoef(a.reshape(-1, 3) @ luma, b.reshape(-1, 3) @ luma)[0, 1]
                for a, b in zip(x, out, strict=True)]
        assert np.mean(corr) < 0.3
    elif name == "spatter":  # mud everywhere
        assert (out == np.array(dig.MUD_RGB, dtype=np.uint8)).all()
    elif name == "saturate":  # fully saturated: the smallest channel is 0 wherever V > 0
        assert (out.min(axis=-1) == 0).mean() > 0.99


def test_speckle_noise_is_proportional_to_the_value():
    grey = np.full((1, 64, 64, 3), 100, np.uint8)
    grey[0, :, :32] = 0
    out = corrupt("speckle_noise", grey, {"sigma": 0.2},
                  [noise_seed(0, "speckle_noise", 0)]).astype(np.float64)
    assert (out[0, :, :32] == 0).all()
    change = (out[0, :, 32:] - 100) / 100
    assert abs(change.mean()) < 0.01 and abs(change.std() - 0.2) < 0.01
