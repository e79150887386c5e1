"""Tests of ``vcrbench.corruptions``: agreement with the peers, keyed randomness, input checks,
and that every domain runs from the clean image to a destroyed one.

Peers. ``imagecorruptions`` 1.1.2 (the ImageNet-C code) does not import on current setuptools
(``pkg_resources`` is gone), so ``ic`` imports it with a stand-in ``pkg_resources``; its
``gaussian_blur`` and ``glass_blur`` call skimage's removed ``multichannel`` argument, so its
``gaussian`` is wrapped to translate that (``fog`` also fails, on ``np.float_``, but is not one of
ours). Tolerances are in grey levels (0-255). Our outputs round to nearest where the package
truncates with ``np.uint8``, so ImageNet-C comparisons use the package's float output rounded the
same way. Albumentations is optional (tests skip without it).
"""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest
import torch
from helpers.paths import IMAGENET_SAMPLE, REPO
from helpers.peers import diff, imagecorruptions_module, seeded_numpy
from PIL import Image

from vcrbench.core.seeding import noise_seed
from vcrbench.corruptions import (
    CORRUPTIONS,
    DOMAIN_TABLE,
    apply_corruption,
    get_corruption,
    imagenet_c_samples,
    sample_parameters,
    uniform_samples,
    validate_parameters,
)
from vcrbench.corruptions import blur as blur_mod
from vcrbench.corruptions import colour as colour_mod
from vcrbench.corruptions import weather as weather_mod
from vcrbench.errors import VcrbenchError

SAMPLE = IMAGENET_SAMPLE
PAPER_ORDER = ["shot_noise", "impulse_noise", "gaussian_noise", "glass_blur", "gaussian_blur",
               "defocus_blur", "motion_blur", "brightness", "frost", "blur", "median_blur",
               "hue_saturation_value", "color_jitter", "uniform_noise"]


def _prepare(image: Image.Image, size: int = 224) -> np.ndarray:
    """Short side to 256 (bilinear), centre crop ``size``: (size, size, 3) uint8."""
    image = image.convert("RGB")
    w, h = image.size
    scale = 256 / min(w, h)
    image = image.resize((round(w * scale), round(h * scale)), Image.BILINEAR)
    w, h = image.size
    left, top = (w - size) // 2, (h - size) // 2
    return np.asarray(image.crop((left, top, left + size, top + size)))


@pytest.fixture(scope="module")
def images() -> np.ndarray:
    """Three real 224 px images: ImageNet samples, else skimage's astronaut, chelsea, coffee."""
    files = sorted(SAMPLE.glob("*.JPEG"))[::331][:3] if SAMPLE.is_dir() else []
    if len(files) == 3:
        return np.stack([_prepare(Image.open(f)) for f in files])
    from skimage import data

    return np.stack([_prepare(Image.fromarray(f())) for f in (data.astronaut, data.chelsea,
                                                             data.coffee)])


@pytest.fixture(scope="module")
def ic():
    """``imagecorruptions.corruptions``, importable and with a working ``gaussian``."""
    return imagecorruptions_module()


def needs_frost_photographs(name: str) -> None:
    """Frost reads its photographs from the installed imagecorruptions package."""
    if name == "frost" and importlib.util.find_spec("imagecorruptions") is None:
        pytest.skip("frost needs the imagecorruptions package (its frost photographs)")


def to_tensor(images: np.ndarray, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.from_numpy(images).permute(0, 3, 1, 2).to(dtype) / 255.0


def corrupt(name: str, images: np.ndarray, point: dict[str, float], seeds=None,
            dtype: torch.dtype = torch.float32) -> np.ndarray:
    """Apply one parameter point to every image: (N, H, W, 3) uint8."""
    n = len(images)
    seeds = list(range(1, n + 1)) if seeds is None else seeds
    out = apply_corruption(name, to_tensor(images, dtype), {k: [v] * n for k, v in point.items()},
                           seeds)
    return out.permute(0, 2, 3, 1).numpy()


# --------------------------------------------------------------------------- registry


def test_the_documented_domain_table_is_the_registry():
    docs = (REPO / "docs" / "corruptions.md").read_text()
    assert DOMAIN_TABLE in docs, "docs/corruptions.md: paste vcrbench.corruptions.DOMAIN_TABLE"


def test_registry_lists_the_paper_corruptions_in_order():
    assert list(CORRUPTIONS)[: len(PAPER_ORDER)] == PAPER_ORDER  # then the later groups
    for name, spec in CORRUPTIONS.items():
        assert spec.name == name and spec.docs and name in DOMAIN_TABLE
        assert (spec.imagenet_c_severities is not None) == (spec.source == "imagenet-c")
        for low, high in spec.parameters.values():
            assert low < high
        for point in (spec.identity, spec.strongest, *(spec.imagenet_c_severities or ())):
            validate_parameters(name, {k: [v] for k, v in point.items()})
    assert get_corruption("frost").stochastic and not get_corruption("gaussian_blur").stochastic


def test_sampling_is_keyed_uniform_and_covers_the_domain():
    for name, spec in CORRUPTIONS.items():
        a = uniform_samples(name, 7, range(10))
        assert uniform_samples(name, 7, [5, 9]) == [a[5], a[9]]
        assert uniform_samples(name, 8, [0]) != a[:1]
        validate_parameters(name, {k: [p[k] for p in a] for k in spec.parameters})
    draws = uniform_samples("gaussian_blur", 0, range(400), spacing="linear")
    sigmas = np.array([d["sigma"] for d in draws])
    low, high = get_corruption("gaussian_blur").parameters["sigma"]
    assert abs(sigmas.mean() - (low + high) / 2) < 0.1 * (high - low)
    assert sigmas.min() < low + 0.05 * (high - low) and sigmas.max() > high - 0.05 * (high - low)
    rng = np.random.default_rng(3)
    point = sample_parameters("glass_blur", rng)
    assert list(point) == ["sigma", "max_delta", "iterations"]


def test_imagenet_c_samples():
    levels = imagenet_c_samples("shot_noise")
    assert len(levels) == 5
    assert [round(1 / p["noise_scale"] ** 2) for p in levels] == [60, 25, 12, 5, 3]
    assert imagenet_c_samples("glass_blur")[4] == {"sigma": 1.5, "max_delta": 4,
                                                    "iterations": 2}
    with pytest.raises(VcrbenchError, match="no ImageNet-C severities"):
        imagenet_c_samples("median_blur")


# --------------------------------------------------------------------------- peers: ImageNet-C


@pytest.mark.parametrize("name", ["gaussian_blur", "defocus_blur", "brightness"])
def test_deterministic_imagenet_c_corruptions_match_the_package(name, images, ic):
    """Float outputs within 1e-4 grey levels; the uint8 outputs within 1 level (ours round to
    nearest, the package truncates: +0.5 level on average)."""
    x = images[:2]
    spec = get_corruption(name)
    for severity, point in enumerate(imagenet_c_samples(name), 1):
        ref = np.stack([getattr(ic, name)(Image.fromarray(img), severity) for img in x])
        arrays = {k: np.full(len(x), v) for k, v in point.items()}
        ours_float = spec.function(to_tensor(x, torch.float64), arrays, [0] * len(x))
        d = diff(ours_float.permute(0, 2, 3, 1).numpy() * 255, np.clip(ref, 0, 255))
        assert d.max() < 1e-4, (severity, d.max())
        signed = corrupt(name, x, point).astype(np.float64) - np.uint8(ref)
        assert signed.min() >= 0 and signed.max() <= 1 and 0.2 < signed.mean() < 0.7


def test_motion_blur_kernel_matches_the_package(images, ic):
    """The streak itself (fixed angles, one batch) equals ImageNet-C's ``_motion_blur`` to 1e-3
    levels; the drawn directions cover ``[-45, 45]`` degrees."""
    x = images[0]
    angles = torch.tensor([-45.0, -17.3, 0.0, 31.9, 45.0], dtype=torch.float64)
    xt = to_tensor(np.stack([x] * len(angles)), torch.float64)
    top = blur_mod.domain_high("motion_blur", "radius")
    for point in imagenet_c_samples("motion_blur"):
        radius = np.full(len(angles), point["radius"])
        sigma = np.full(len(angles), point["sigma"])
        ours = blur_mod.motion_blur_at(xt, radius, sigma, angles, top)
        for k, angle in enumerate(angles.tolist()):
            ref = np.clip(ic._motion_blur(x, radius=int(point["radius"]),
                                          sigma=point["sigma"], angle=angle), 0, 255)
            assert diff(ours[k].permute(1, 2, 0).numpy() * 255, ref).max() < 1e-3
    angles = blur_mod.motion_angles([noise_seed(0, "motion_blur", i) for i in range(200)])
    assert angles.dtype == torch.float64 and angles.shape == (200,)
    assert -45 <= float(angles.min()) < -40 and 40 < float(angles.max()) <= 45
    assert abs(float(angles.mean())) < 4 and abs(float(angles.std()) - 90 / 12**0.5) < 3


def test_motion_streaks_leaving_small_images_stop_as_imagenet_cs(ic):
    """On a 33 x 47 image the largest streaks leave the image: ImageNet-C stops at the first tap
    outside, unnormalised (the kernel table is cut to the image)."""
    rng = np.random.default_rng(4)
    x = rng.integers(0, 256, (33, 47, 3), dtype=np.uint8)
    radius = np.array([100.0, 40.0, 30.0, 100.0, 17.0, 8.0, 3.0])
    sigma = np.array([60.0, 10.0, 30.0, 5.0, 60.0, 4.0, 2.0])
    angles = torch.tensor([-45.0, -3.0, 0.0, 20.0, 44.0, -30.0, 12.0], dtype=torch.float64)
    xt = to_tensor(np.stack([x] * len(angles)), torch.float64)
    ours = blur_mod.motion_blur_at(xt, radius, sigma, angles, 100.0)
    for k in range(len(angles)):
        ref = ic._motion_blur(x, radius=int(radius[k]), sigma=float(sigma[k]),
                              angle=float(angles[k]))
        assert diff(ours[k].permute(1, 2, 0).numpy() * 255, ref).max() < 1e-3, k


def _imagenet_c_shuffle(x: np.ndarray, delta: int, offsets: list[np.ndarray]) -> np.ndarray:
    """ImageNet-C's pixel loop verbatim (numpy row views: a copy, not a swap), given offsets."""
    x = x.copy()
    h_size, w_size = x.shape[:2]
    for off in offsets:
        for i, h in enumerate(range(h_size - delta, delta, -1)):
            for j, w in enumerate(range(w_size - delta, delta, -1)):
                dx, dy = off[i, j]
                h_prime, w_prime = h + dy, w + dx
                x[h, w], x[h_prime, w_prime] = x[h_prime, w_prime], x[h, w]
    return x


def _longest_chains(height: int, width: int, delta: int) -> np.ndarray:
    """Offsets (visiting order) whose chains are as long as possible: every pixel copies its
    right neighbour, the last column the pixel ``delta`` left of it one row down."""
    off = np.zeros((height - 2 * delta, width - 2 * delta, 2), dtype=np.int64)
    off[..., 0] = 1
    off[:, 0] = (-delta, 1)  # visiting order: column 0 is the rightmost
    return off


def test_glass_shuffle_reproduces_the_sequential_loop_exactly():
    """All cases in one batch (different deltas and pass counts), random and worst-case
    offsets, against ImageNet-C's loop."""
    rng = np.random.default_rng(0)
    h, w = 37, 45
    x = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    cases = [(1, 1), (1, 2), (2, 3), (4, 2), (7, 1), (0, 2), (3, 0)]
    offsets = [[rng.integers(-d, d, (h - 2 * d, w - 2 * d, 2)) for _ in range(n)]
               if d else [] for d, n in cases]
    for d in (2, 3, 7):  # chains up to the bound of shuffle_jump_rounds
        cases.append((d, 2))
        offsets.append([_longest_chains(h, w, d), rng.integers(-d, d, (h - 2 * d, w - 2 * d, 2))])
    grids = [blur_mod.glass_offset_grid(off, h, w, d) for (d, _), off in zip(cases, offsets,
                                                                           strict=True)]
    passes = max(g.shape[1] for g in grids)
    grid = torch.cat([torch.cat([g, torch.zeros((1, passes - g.shape[1], h, w, 2),
                                                dtype=torch.int64)], 1) for g in grids])
    deltas = np.array([d for d, _ in cases])
    counts = np.array([n for _, n in cases])
    maps = blur_mod.glass_shuffle_maps(h, w, deltas, counts, grid, max_delta=7,
                                       max_passes=passes)
    assert blur_mod.shuffle_jump_rounds(h, w, 7) == math.ceil(math.log2(w - 15 + 8 * (h - 15)))
    for k, ((d, _), off) in enumerate(zip(cases, offsets, strict=True)):
        ref = _imagenet_c_shuffle(x, d, off) if d else x
        ours = x.reshape(-1, 3)[maps[k].numpy()].reshape(x.shape)
        np.testing.assert_array_equal(ours, ref, err_msg=str(cases[k]))


def test_glass_offsets_are_uniform_and_keyed():
    """``randint(-delta, delta)``'s law per delta; other seeds and passes give other offsets."""
    deltas = torch.tensor([1, 3, 12, 0])
    off = blur_mod.glass_offsets([5, 6, 7, 8], 64, 64, deltas, 2)
    assert off.shape == (4, 2, 64, 64, 2) and off.dtype == torch.int64
    assert bool((off[3] == 0).all())
    for b, d in enumerate(deltas.tolist()[:3]):
        values = off[b].reshape(-1, 2)
        assert int(values.min()) == -d and int(values.max()) == d - 1
        for axis in (0, 1):
            counts = torch.bincount(values[:, axis] + d, minlength=2 * d).double()
            expected = values.shape[0] / (2 * d)
            chi2 = float(((counts - expected) ** 2 / expected).sum())
            assert chi2 < 2 * d + 6 * (4 * d) ** 0.5, (d, axis, chi2)
        joint = torch.bincount((values[:, 0] + d) * 2 * d + values[:, 1] + d,
                               minlength=4 * d * d).double()
        expected = values.shape[0] / (4 * d * d)
        chi2 = float(((joint - expected) ** 2 / expected).sum())
        assert chi2 < 4 * d * d + 6 * (8 * d * d) ** 0.5, (d, chi2)
        assert not torch.equal(off[b, 0], off[b, 1])
    again = blur_mod.glass_offsets([5, 9], 64, 64, deltas[:2] * 0 + 3, 2)
    assert torch.equal(again[0], blur_mod.glass_offsets([5], 64, 64, deltas[1:2], 2)[0])
    assert torch.equal(again[:, 1:], blur_mod.glass_offsets([5, 9], 64, 64, deltas[1:2], 1, 1))
    assert not torch.equal(again[0], again[1])


def test_glass_blur_matches_the_package(images, ic, monkeypatch):
    """Whole glass blur on 64 px crops, ImageNet-C's code fed our offsets: float diff < 0.01
    mean, < 1 level max (our uint8 truncation keeps 1e-4 of slack)."""
    crop = images[:2, 80:144, 60:124]
    seeds = [noise_seed(4, "glass_blur", k) for k in range(len(crop))]
    for severity, point in enumerate(imagenet_c_samples("glass_blur"), 1):
        delta, iterations = int(point["max_delta"]), int(point["iterations"])
        arrays = {k: np.full(len(crop), v) for k, v in point.items()}
        ours = blur_mod.glass_blur(to_tensor(crop, torch.float64), arrays, seeds)
        grid = blur_mod.glass_offsets(seeds, 64, 64, torch.full((2,), delta), iterations)
        for k, img in enumerate(crop):
            draws = iter([grid[k, i, h, w].numpy() for i in range(iterations)
                          for h in range(64 - delta, delta, -1)
                          for w in range(64 - delta, delta, -1)])

            def randint(low, high, size, draws=draws, delta=delta):
                assert (low, high, size) == (-delta, delta, (2,))
                return next(draws)

            monkeypatch.setattr(ic.np.random, "randint", randint)
            ref = ic.glass_blur(Image.fromarray(img), severity)
            monkeypatch.undo()
            assert next(draws, None) is None
            d = diff(ours[k].permute(1, 2, 0).numpy() * 255, ref)
            assert d.mean() < 0.01 and d.max() < 1.0, (severity, d.mean(), d.max())


def test_frost_matches_the_package(images, ic, monkeypatch):
    """The batched frost against imagecorruptions' frost fed our draws: its ``np.random.randint``
    returns our photograph index and crop offsets (and its bounds must be ours)."""
    x = images[:2]
    xt = to_tensor(x, torch.float64)
    for severity, point in enumerate(imagenet_c_samples("frost"), 1):
        seeds = [noise_seed(severity, "frost", k) for k in range(len(x))]
        index, top, left = (t.tolist() for t in weather_mod.frost_draws(seeds, 224, 224))
        ours = weather_mod.frost(xt, {k: np.full(len(x), v) for k, v in point.items()}, seeds)
        for k, img in enumerate(x):
            layer = weather_mod.frost_layer(index[k], 224, 224)
            expected_calls = [((5,), index[k]), ((0, layer.shape[0] - 224), top[k]),
                              ((0, layer.shape[1] - 224), left[k])]

            def randint(*bounds, calls=expected_calls):
                wanted, value = calls.pop(0)
                assert bounds == wanted and 0 <= value < bounds[-1]
                return value

            monkeypatch.setattr(np.random, "randint", randint)
            ref = ic.frost(Image.fromarray(img), severity)
            monkeypatch.undo()
            assert not expected_calls
            assert diff(ours[k].permute(1, 2, 0).numpy() * 255, ref).max() < 1e-6


@pytest.mark.parametrize("name", ["gaussian_noise", "shot_noise", "impulse_noise"])
def test_noise_matches_the_package_in_distribution(name, images, ic):
    """Mean and standard deviation of the change within 3 % (+0.3 level) of ImageNet-C's."""
    x = images[:2]
    levels = imagenet_c_samples(name)
    for severity in (1, 3, 5):
        with seeded_numpy(severity):
            ref = np.stack([np.round(np.clip(getattr(ic, name)(Image.fromarray(img), severity),
                                             0, 255)) for img in x])
        seeds = [noise_seed(severity, name, i) for i in range(len(x))]
        ours = corrupt(name, x, levels[severity - 1], seeds)
        d_ref, d_ours = ref - x, ours.astype(np.float64) - x
        assert abs(d_ours.mean() - d_ref.mean()) < 0.03 * d_ref.std() + 0.3
        assert abs(d_ours.std() / d_ref.std() - 1) < 0.03
        assert abs((d_ours != 0).mean() - (d_ref != 0).mean()) < 0.02


def test_uniform_noise_is_uniform():
    grey = np.full((1, 64, 64, 3), 128, np.uint8)
    out = corrupt("uniform_noise", grey, {"width": 0.3}, [noise_seed(0, "uniform_noise", 0)])
    change = (out.astype(np.float64) - 128) / 255
    assert abs(change.mean()) < 0.01 and abs(change.var() - 0.3**2 / 3) < 0.003
    assert -0.3 - 1 / 255 <= change.min() < -0.29 and 0.29 < change.max() <= 0.3 + 1 / 255


# --------------------------------------------------------------------------- peers: Albumentations


@pytest.fixture(scope="module")
def album():
    return pytest.importorskip("albumentations")


@pytest.mark.parametrize("ksize", [3, 7, 15, 51])
def test_blur_and_median_blur_match_albumentations(ksize, images, album):
    x = images[:2]
    for name, transform in (("blur", album.Blur), ("median_blur", album.MedianBlur)):
        ref = np.stack([transform(blur_limit=(ksize, ksize), p=1.0)(image=img)["image"]
                        for img in x])
        d = diff(corrupt(name, x, {"ksize": ksize}), ref)
        assert d.max() <= 1 and d.mean() < 0.01, (name, d.max(), d.mean())


def test_hue_saturation_value_matches_albumentations(images, album):
    """Albumentations works in 8-bit HSV (hue in 2 degree steps): mean < 0.5, max <= 6 levels."""
    from albumentations.augmentations.pixel import functional as fpixel

    x = images[:2]
    for shifts in [(20, 30, 20), (-20, -30, -20), (45, 0, 0), (-90, 0, 0), (0, 60, 0),
                   (0, -100, 0), (0, 0, 80), (0, 0, -80), (17, -45, 33)]:
        ref = np.stack([fpixel.shift_hsv(img, *shifts) for img in x])
        point = dict(zip(("hue_shift", "sat_shift", "val_shift"), shifts, strict=True))
        d = diff(corrupt("hue_saturation_value", x, point), ref)
        assert d.mean() < 0.5 and d.max() <= 6, (shifts, d.mean(), d.max())


def test_color_jitter_matches_albumentations(images, album):
    """Fixed factors and order: 1e-3 levels from Albumentations' float path; its 8-bit path
    truncates after every step, which adds up to 2 levels on average at strong factors."""
    from albumentations.augmentations.pixel import functional as fpixel

    steps = [fpixel.adjust_brightness_torchvision, fpixel.adjust_contrast_torchvision,
             fpixel.adjust_saturation_torchvision, fpixel.adjust_hue_torchvision]
    x = images[:2]
    xt = to_tensor(x, torch.float64)
    for factors in [(1.2, 1, 1, 0), (1, 0.6, 1.5, -0.3), (1.2, 0.8, 1.3, 0.05),
                    (1.7, 0.3, 1.9, 0.45)]:
        named = dict(zip(colour_mod.JITTER_PARAMETERS, factors, strict=True))
        for order in ([0, 1, 2, 3], [3, 1, 2, 0]):
            refs = {}
            for kind, data in (("float", x.astype(np.float32) / 255), ("uint8", x)):
                out = []
                for img in data:
                    for k in order:
                        img = steps[k](img, factors[k])
                    out.append(img)
                refs[kind] = np.stack(out)
            ours = torch.stack([colour_mod.color_jitter_one(img, named, order) for img in xt])
            ours = ours.permute(0, 2, 3, 1).numpy()
            assert diff(ours * 255, refs["float"] * 255).max() < 1e-3
            d = diff(np.round(ours * 255), refs["uint8"])
            assert d.mean() < 2.5 and d.max() <= 10, (factors, order, d.mean(), d.max())


def test_color_jitter_orders_are_uniform_permutations_from_philox():
    """Each sample's order: a permutation of the 4 steps, the 24 equally likely (chi-square over
    24,000 seeds), a function of its seed alone (Philox: the same in any batch)."""
    from scipy import stats

    seeds = [noise_seed(5, "color_jitter", i) for i in range(24000)]
    orders = colour_mod.jitter_orders(seeds)
    assert orders.shape == (24000, 4) and orders.dtype == torch.int64
    assert torch.equal(orders.sort(dim=1).values, torch.arange(4).expand(24000, 4))
    codes = (orders * torch.tensor([64, 16, 4, 1])).sum(dim=1)
    counts = torch.unique(codes, return_counts=True)[1].numpy()
    assert len(counts) == 24 and stats.chisquare(counts).pvalue > 1e-4
    assert torch.equal(colour_mod.jitter_orders(seeds[7:9]), orders[7:9])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_batched_colour_steps_are_the_per_sample_functions(images, dtype):
    """HueSaturationValue and ColorJitter (every one of the 24 orders, fixed factors) on a batch
    give the bytes of the per-sample functions (``shift_hsv_one``, ``color_jitter_one``) fed the
    same factors."""
    import itertools

    x = to_tensor(np.concatenate([images, images[:1, ::-1]])[:, 30:70, 20:68], dtype)
    n = len(x)
    orders = torch.tensor(list(itertools.permutations(range(4))))
    for factors in [(1.2, 1, 1, 0), (1, 0.6, 1.5, -0.3), (1.7, 0.3, 1.9, 0.45), (0, 2, 0, 0.5)]:
        f = torch.tensor([factors], dtype=dtype)
        named = dict(zip(colour_mod.JITTER_PARAMETERS, f[0].tolist(), strict=True))
        for start in range(0, 24, n):
            order = orders[start:start + n]
            got = colour_mod.color_jitter_batch(x[:len(order)], f.expand(len(order), 4), order)
            for i, o in enumerate(order.tolist()):
                assert torch.equal(got[i], colour_mod.color_jitter_one(x[i], named, o)), o
    shifts = np.array([(20, 30, 20), (-90, -100, 0), (0, 0, 0), (17, -45, 33)], dtype=float)
    params = dict(zip(("hue_shift", "sat_shift", "val_shift"), shifts.T, strict=True))
    got = colour_mod.hue_saturation_value(x, params, [0] * n)
    for i, (h, s, v) in enumerate(shifts):
        assert torch.equal(got[i], colour_mod.shift_hsv_one(x[i], h, s, v).clamp(0, 1))
    assert torch.equal(got[2], x[2])


def test_box_blur_is_opencv_with_every_sample_its_own_kernel(images):
    """A batch mixing ksize 1 .. 51 equals ``cv2.blur`` (``BORDER_REFLECT_101``) per sample to
    float64 round-off, on images smaller than the kernel too."""
    import cv2

    ksize = np.array([1.0, 3.0, 6.9, 15.0, 29.2, 51.0])
    for h, w in [(48, 64), (33, 47), (5, 7), (1, 9)]:
        x = to_tensor(np.concatenate([images, images])[:, 60:60 + h, 50:50 + w], torch.float64)
        got = blur_mod.box_blur(x, {"ksize": ksize}, [0] * 6)
        for i, k in enumerate((1, 3, 7, 15, 29, 51)):
            ref = cv2.blur(x[i].permute(1, 2, 0).numpy(), (k, k),
                           borderType=cv2.BORDER_REFLECT_101).reshape(h, w, 3)
            assert np.abs(got[i].permute(1, 2, 0).numpy() - ref).max() < 1e-12, (h, w, k)
        assert torch.equal(got[0], x[0])
    with pytest.raises(VcrbenchError, match="above the domain's 51"):
        blur_mod.box_blur(x, {"ksize": np.array([53.0] * 6)}, [0] * 6)


def test_median_filter_is_opencv_byte_for_byte(images):
    """The torch median (CUDA's path) equals ``cv2.medianBlur`` (the CPU's path) byte for byte,
    each sample with its own ksize: on random images (with many ties, tiny ones) for every odd
    ksize from 3 to past the image side (the border's every case) and 101, 201, and on real
    images; a sample alone gives the bytes it has in a batch."""
    import cv2

    def opencv(pixels, k):
        hwc = np.ascontiguousarray(pixels.permute(1, 2, 0).numpy())
        return torch.from_numpy(cv2.medianBlur(hwc, k)).permute(2, 0, 1)

    generator = torch.Generator().manual_seed(4)
    for h, w in [(19, 26), (7, 5), (1, 1)]:
        sizes = [*range(3, 2 * max(h, w) + 6, 2), 101, 201] * 2
        x = torch.randint(0, 256, (len(sizes), 3, h, w), generator=generator, dtype=torch.uint8)
        x[::2] = torch.randint(100, 104, x[::2].shape, generator=generator, dtype=torch.uint8)
        got = blur_mod.median_filter(x, torch.tensor(sizes))
        for i, k in enumerate(sizes):
            assert torch.equal(got[i], opencv(x[i], k)), (h, w, k)
    real = torch.from_numpy(np.concatenate([images, images])[:5, 40:104, 30:110]).permute(
        0, 3, 1, 2).contiguous()
    sizes = torch.tensor([3, 15, 51, 101, 201])
    got = blur_mod.median_filter(real, sizes)
    for i, k in enumerate(sizes.tolist()):
        assert torch.equal(got[i], opencv(real[i], k)), k
    assert torch.equal(blur_mod.median_filter(real[2:3], sizes[2:3]), got[2:3])
    x = real.to(torch.float32) / 255.0
    out = blur_mod.median_blur(x, {"ksize": np.array([1.0, 15.0, 51.0, 101.0, 201.0])}, [0] * 5)
    assert torch.equal(out[0], x[0]) and torch.equal(torch.round(out[1:] * 255).byte(), got[1:])


@pytest.mark.parametrize("name", ["blur", "median_blur", "hue_saturation_value", "color_jitter"])
def test_batched_albumentations_corruptions_give_a_sample_the_same_bytes_alone(name, images):
    """Batch 16 (drawn parameters, mixed kernel sizes) against each sample alone: same bytes."""
    x = to_tensor(np.concatenate([images] * 6)[:16, 50:98, 40:104])
    points = uniform_samples(name, 3, range(16))
    params = {k: np.array([p[k] for p in points]) for k in points[0]}
    seeds = [noise_seed(3, name, i) for i in range(16)]
    whole = apply_corruption(name, x, params, seeds)
    for i in range(16):
        alone = apply_corruption(name, x[i:i + 1], {k: v[i:i + 1] for k, v in params.items()},
                                 seeds[i:i + 1])
        assert torch.equal(alone, whole[i:i + 1]), (name, i)


# --------------------------------------------------------------------------- keyed randomness


@pytest.mark.parametrize("name", PAPER_ORDER)
def test_outputs_depend_only_on_image_parameters_and_seed(name, images):
    """Same seed: same bytes; a batch split 5 = 2 + 3 or the memory layout (``to_tensor`` gives a
    permuted, channels-last batch) changes nothing; float64 input is close."""
    needs_frost_photographs(name)
    x = np.concatenate([images, images[:2, ::-1]])[:, 20:68, 10:74]  # 5 images, 48 x 64
    params = uniform_samples(name, 11, range(5))
    batch = {k: [p[k] for p in params] for k in params[0]}
    seeds = [noise_seed(11, name, i) for i in range(5)]
    whole = apply_corruption(name, to_tensor(x), batch, seeds)
    assert whole.dtype == torch.uint8 and whole.shape == (5, 3, 48, 64)
    again = apply_corruption(name, to_tensor(x), batch, seeds)
    parts = [apply_corruption(name, to_tensor(x[s]), {k: v[s] for k, v in batch.items()},
                              seeds[s]) for s in (slice(0, 2), slice(2, 5))]
    assert torch.equal(whole, again) and torch.equal(whole, torch.cat(parts))
    single = apply_corruption(name, to_tensor(x[3:4]), {k: v[3:4] for k, v in batch.items()},
                              seeds[3:4])
    assert torch.equal(whole[3:4], single)
    assert torch.equal(whole, apply_corruption(name, to_tensor(x).contiguous(), batch, seeds))
    wide = apply_corruption(name, to_tensor(x, torch.float64), batch, seeds)
    d = (whole.int() - wide.int()).abs()
    assert d.float().mean() < 0.02 and (d > 1).float().mean() < 0.002
    if get_corruption(name).stochastic:
        other = apply_corruption(name, to_tensor(x), batch, [s + 1 for s in seeds])
        assert not torch.equal(whole, other)


@pytest.mark.parametrize("name", ["gaussian_blur", "defocus_blur", "motion_blur", "glass_blur"])
def test_batched_blurs_give_each_sample_the_bytes_it_has_alone(name, images):
    """The batched blurs' float output of a sample (parameters drawn over the domain, 64 px)
    is the same bit for bit alone, in a batch of 16 and at another position, on 1 or 2
    threads."""
    x = to_tensor(np.concatenate([images] * 6)[:16, 40:104, 50:114])
    params = uniform_samples(name, 13, range(16))
    batch = {k: np.array([p[k] for p in params]) for k in params[0]}
    seeds = [noise_seed(13, name, i) for i in range(16)]
    function = get_corruption(name).function
    saved = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        whole = function(x, batch, seeds)
        torch.set_num_threads(1)
        order = list(range(15, -1, -1))
        reverse = function(x[order], {k: v[order] for k, v in batch.items()},
                           [seeds[i] for i in order])
    finally:
        torch.set_num_threads(saved)
    assert torch.equal(whole, reverse.flip(0))
    for i in range(16):
        alone = function(x[i:i + 1], {k: v[i:i + 1] for k, v in batch.items()}, seeds[i:i + 1])
        assert torch.equal(whole[i:i + 1], alone), i


@pytest.mark.parametrize("name", ["gaussian_noise", "shot_noise", "impulse_noise",
                                  "uniform_noise"])
def test_noise_bytes_do_not_depend_on_the_thread_count(name, images):
    """The draws are batched torch operations (``core.philox``): one thread, two and five give
    the same bytes as a plain loop over the samples (112 px crops: large enough for torch to
    split its loops over threads)."""
    x = np.concatenate([images, images[:2, ::-1]])[:, 40:152, 50:162]
    params = uniform_samples(name, 5, range(5))
    batch = {k: [p[k] for p in params] for k in params[0]}
    seeds = [noise_seed(5, name, i) for i in range(5)]
    saved = torch.get_num_threads()
    try:
        outputs = []
        for threads in (1, 2, 5):
            torch.set_num_threads(threads)
            outputs.append(apply_corruption(name, to_tensor(x), batch, seeds))
    finally:
        torch.set_num_threads(saved)
    one_by_one = torch.cat([apply_corruption(name, to_tensor(x[i:i + 1]),
                                             {k: v[i:i + 1] for k, v in batch.items()},
                                             seeds[i:i + 1]) for i in range(5)])
    assert all(torch.equal(outputs[0], out) for out in [*outputs[1:], one_by_one])


@pytest.mark.parametrize("name", ["gaussian_noise", "shot_noise", "impulse_noise",
                                  "uniform_noise", "frost"])
def test_a_sample_alone_is_the_sample_in_a_batch_of_16(name, images):
    """Batched draws (``core.philox``): a sample corrupted alone gives the bytes it gets at any
    place of a batch of 16."""
    needs_frost_photographs(name)
    x = np.concatenate([images] * 6)[:16, 40:104, 30:110]
    params = uniform_samples(name, 3, range(16))
    batch = {k: [p[k] for p in params] for k in params[0]}
    seeds = [noise_seed(3, name, i) for i in range(16)]
    whole = apply_corruption(name, to_tensor(x), batch, seeds)
    for i in (0, 7, 15):
        alone = apply_corruption(name, to_tensor(x[i:i + 1]), {k: v[i:i + 1] for k, v in
                                                                batch.items()}, seeds[i:i + 1])
        assert torch.equal(whole[i:i + 1], alone), i


def test_map_per_sample_keeps_the_order_of_the_samples():
    from vcrbench.corruptions.generators import map_per_sample, numpy_generator

    seeds = list(range(100, 137))
    saved = torch.get_num_threads()
    try:
        torch.set_num_threads(4)
        got = map_per_sample(lambda i, seed: (i, numpy_generator(seed).random()), seeds)
    finally:
        torch.set_num_threads(saved)
    assert got == [(i, numpy_generator(s).random()) for i, s in enumerate(seeds)]


def test_cpu_and_cuda_agree(images):
    # every corruption of the registry (the new groups too)
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    x = images[:2]
    for name in CORRUPTIONS:
        params = uniform_samples(name, 5, range(2))
        batch = {k: [p[k] for p in params] for k in params[0]}
        seeds = [noise_seed(5, name, i) for i in range(2)]
        cpu = apply_corruption(name, to_tensor(x), batch, seeds)
        gpu = apply_corruption(name, to_tensor(x).cuda(), batch, seeds)
        assert gpu.device.type == "cuda"
        d = (cpu.int() - gpu.cpu().int()).abs()
        assert d.max() <= 1 and (d > 0).float().mean() < 0.01, name


# --------------------------------------------------------------------------- bad input


def test_bad_input_raises_vcrbench_errors(images):
    x = to_tensor(images[:1])
    ok = {"sigma": [2.0]}
    with pytest.raises(VcrbenchError, match="unknown corruption 'gausian_blur'; known: shot"):
        apply_corruption("gausian_blur", x, ok, [0])
    with pytest.raises(VcrbenchError, match=r"'sigma' = 41.0 is outside its domain \[0, 40\]"):
        apply_corruption("gaussian_blur", x, {"sigma": [41.0]}, [0])
    with pytest.raises(VcrbenchError, match="'sigma'.*outside"):
        apply_corruption("gaussian_blur", x, {"sigma": [float("nan")]}, [0])
    with pytest.raises(VcrbenchError, match="missing parameter.*'alias_blur'"):
        apply_corruption("defocus_blur", x, {"radius": [2.0]}, [0])
    with pytest.raises(VcrbenchError, match="unknown parameter.*'radius'"):
        apply_corruption("gaussian_blur", x, {"sigma": [1.0], "radius": [1.0]}, [0])
    with pytest.raises(VcrbenchError, match="2 values for 1 images"):
        apply_corruption("gaussian_blur", x, {"sigma": [1.0, 2.0]}, [0])
    with pytest.raises(VcrbenchError, match="float32 or float64"):
        apply_corruption("gaussian_blur", torch.from_numpy(images[:1]).permute(0, 3, 1, 2), ok,
                         [0])
    with pytest.raises(VcrbenchError, match="torch.Tensor"):
        apply_corruption("gaussian_blur", images[:1] / 255.0, ok, [0])
    with pytest.raises(VcrbenchError, match=r"shape \(B, 3, H, W\)"):
        apply_corruption("gaussian_blur", x[0], ok, [0])
    with pytest.raises(VcrbenchError, match=r"shape \(B, 3, H, W\)"):
        apply_corruption("gaussian_blur", torch.zeros(1, 4, 64, 64), ok, [0])
    with pytest.raises(VcrbenchError, match="at least 32 x 32"):
        apply_corruption("gaussian_blur", x[:, :, :31, :], ok, [0])
    with pytest.raises(VcrbenchError, match=r"in \[0, 1\]"):
        apply_corruption("gaussian_blur", x * 255, ok, [0])
    with pytest.raises(VcrbenchError, match="2 noise seeds for 1 images"):
        apply_corruption("gaussian_blur", x, ok, [0, 1])
    with pytest.raises(VcrbenchError, match=r"\[0, 2\*\*63\)"):
        apply_corruption("gaussian_noise", x, {"sigma": [0.1]}, [-1])
    with pytest.raises(VcrbenchError, match="unknown corruption"):
        get_corruption("no_such_corruption")
    with pytest.raises(VcrbenchError, match=r"'amount' = 1.5 .* \[0, 1\]"):
        validate_parameters("impulse_noise", {"amount": 1.5})


# --------------------------------------------------------------------------- whole range


def _luma(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64) @ np.array([0.299, 0.587, 0.114])


def _correlation(a: np.ndarray, b: np.ndarray) -> float:
    la, lb = _luma(a).ravel(), _luma(b).ravel()
    return 0.0 if lb.std() == 0 else float(np.corrcoef(la, lb)[0, 1])


def _detail(a: np.ndarray) -> float:
    """Standard deviation of the luma minus its 9 x 9 box average (fine structure)."""
    from scipy.ndimage import uniform_filter

    luma = _luma(a)
    return float((luma - uniform_filter(luma, 9, mode="nearest")).std())


@pytest.mark.parametrize("name", PAPER_ORDER)
def test_domain_runs_from_clean_to_destroyed(name, images):
    """Identity point: the image itself. Strongest point: noise leaves pixel correlation < 0.3,
    blur < 25 % of the fine detail, colour and frost a flat, saturated or pure-frost image."""
    needs_frost_photographs(name)
    spec = get_corruption(name)
    x = images[:2]
    assert diff(corrupt(name, x, dict(spec.identity)), x).max() == 0
    out = corrupt(name, x, dict(spec.strongest))
    if spec.visual_class == "noise":
        assert np.mean([_correlation(a, b) for a, b in zip(x, out, strict=True)]) < 0.3
    elif spec.visual_class == "blur":
        ratio = [_detail(b) / _detail(a) for a, b in zip(x, out, strict=True)]
        assert max(ratio) < 0.25, ratio
    elif name == "brightness":
        assert (out.max(axis=-1) == 255).all()
    elif name == "frost":
        assert np.mean([_correlation(a, b) for a, b in zip(x, out, strict=True)]) < 0.5
        index, top, left = weather_mod.frost_crops([1], 224, 224)[0]
        layer = weather_mod.frost_layer(index, 224, 224)[top : top + 224, left : left + 224]
        assert diff(out[0], layer).max() == 0
    else:
        assert (out.reshape(len(x), -1).std(axis=1) < 1).all()


def test_small_and_non_square_images_with_the_largest_kernels(images):
    x = images[:1, :33, :47]
    for name, spec in CORRUPTIONS.items():
        if name == "frost" and importlib.util.find_spec("imagecorruptions") is None:
            continue
        out = corrupt(name, x, dict(spec.strongest))
        assert out.shape == x.shape, name


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_parameters_next_to_the_clean_value_give_the_clean_image(name):
    """A step of 1e-12 from the clean value (visual spacing draws such values) must not fail."""
    spec = CORRUPTIONS[name]
    generator = torch.Generator().manual_seed(3)
    images = torch.rand(2, 3, 40, 48, generator=generator, dtype=torch.float64)
    clean = apply_corruption(name, images, {k: [v, v] for k, v in spec.identity.items()}, [1, 2])
    tiny = {}
    for param, (_, high) in spec.parameters.items():
        c = spec.identity[param]
        tiny[param] = [min(high, c + 1e-12) if c < high else c - 1e-12, c]
    out = apply_corruption(name, images, tiny, [1, 2])
    assert torch.equal(out[1], clean[1])
    assert (out[0].int() - clean[0].int()).abs().max() <= 1
