"""Sampling at the image's own size: pixel parameters' draws scale with the image side.

Every expectation is computed here by hand from the registry (``identity``, ``parameters``) and
from the unscaled draw of ``sample_parameters`` with ``parameter_rng``, not through the code
under test.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch

from vcrbench.core.seeding import parameter_rng
from vcrbench.corruptions import CORRUPTIONS, apply_corruption, get_corruption
from vcrbench.corruptions.cifar_c import cifar_c_severities
from vcrbench.corruptions.registry import validate_point
from vcrbench.corruptions.sampling import (
    REFERENCE_SIDE,
    imagenet_c_samples,
    pixel_scale,
    sample_parameters,
    sampling_definition,
    scale_point,
    uniform_samples,
)
from vcrbench.errors import VcrbenchError
from vcrbench.evaluation.samples import make_samples

PIXEL = {
    "glass_blur": {"sigma", "max_delta"},
    "gaussian_blur": {"sigma"},
    "defocus_blur": {"radius"},
    "motion_blur": {"radius", "sigma"},
    "blur": {"ksize"},
    "median_blur": {"ksize"},
}
#: Distances below which the discretised operation leaves the image unchanged (by the kernels'
#: definitions: radius int(4 sigma + 0.5), round(max_delta), round(radius), odd_size(ksize)).
THRESHOLDS = {
    "glass_blur": {"sigma": 0.125, "max_delta": 0.5},
    "gaussian_blur": {"sigma": 0.125},
    "motion_blur": {"radius": 0.5},
    "blur": {"ksize": 1.0},
    "median_blur": {"ksize": 1.0},
}
SEED = 11
IDS = list(range(0, 400, 7))


def _old_draws(name: str, spacing: str = "visual") -> list[dict[str, float]]:
    return [sample_parameters(name, parameter_rng(SEED, name, i), spacing) for i in IDS]


def test_pixel_parameters_are_declared_for_exactly_the_blurs():
    for name, spec in CORRUPTIONS.items():
        assert dict(spec.pixel_thresholds) == THRESHOLDS.get(name, {})
        assert spec.pixel_parameters == frozenset(PIXEL.get(name, ())), name
        assert isinstance(spec.pixel_parameters, frozenset)
        if spec.source == "noc":
            assert not spec.pixel_parameters
    spec = get_corruption("gaussian_blur")
    with pytest.raises(ValueError, match="pixel_parameters"):
        dataclasses.replace(spec, pixel_parameters=frozenset({"radius"}))
    for name in PIXEL:
        assert "pixels of the image at hand" in get_corruption(name).docs


def test_pixel_scale():
    assert REFERENCE_SIDE == 224
    assert pixel_scale(224) == 1.0 and pixel_scale(32) == 32 / 224 and pixel_scale(448) == 2.0
    for bad in (0, -32, 32.0, "32", True):
        with pytest.raises(VcrbenchError, match="side"):
            pixel_scale(bad)


@pytest.mark.parametrize("spacing", ["visual", "linear"])
def test_side_224_is_the_old_draw_exactly(spacing):
    for name in CORRUPTIONS:
        old = _old_draws(name, spacing)
        assert uniform_samples(name, SEED, IDS, spacing) == old
        assert uniform_samples(name, SEED, IDS, spacing, side=224) == old
        for point in old:
            assert scale_point(name, point, 224) == point
            assert scale_point(name, point, 224) is not point


@pytest.mark.parametrize("spacing", ["visual", "linear"])
def test_side_32_scales_pixel_parameters_towards_clean(spacing):
    for name, spec in CORRUPTIONS.items():
        old = _old_draws(name, spacing)
        new = uniform_samples(name, SEED, IDS, spacing, side=32)
        assert len(new) == len(old)
        for before, after in zip(old, new, strict=True):
            assert list(after) == list(before)
            for param, value in before.items():
                if param in PIXEL.get(name, ()):
                    clean = spec.identity[param]
                    expected = clean + _by_hand(value - clean, spec.parameters[param][1] - clean,
                                                THRESHOLDS.get(name, {}).get(param))
                    assert after[param] == pytest.approx(expected, rel=1e-12, abs=1e-12)
                    assert abs(after[param] - clean) <= abs(value - clean)
                else:
                    assert after[param] == value, (name, param)
            validate_point(spec, after)


def _by_hand(d: float, length: float, threshold: float | None) -> float:
    """The distance at 32 px, computed in the 224 px draw's log position above the threshold."""
    if threshold is None:
        return d * 32 / 224
    if d <= threshold:
        return d
    t = (np.log(d) - np.log(threshold)) / (np.log(length) - np.log(threshold))
    return float(np.exp(np.log(threshold) + t * (np.log(length * 32 / 224) - np.log(threshold))))


def test_thresholds_keep_clean_draws_clean_and_stretch_the_rest():
    # ksize 51 (the top of blur's domain) at 32 px: 1 + 50 * 32 / 224; ksize 1.5 (a 1 x 1
    # kernel, the clean image) stays; the geometric middle of [2, 51] (distance sqrt(50)) goes
    # to the geometric middle of [2, 1 + 50 / 7]
    assert scale_point("blur", {"ksize": 51.0}, 32) == {"ksize": pytest.approx(1 + 50 / 7)}
    assert scale_point("blur", {"ksize": 1.5}, 32) == {"ksize": 1.5}
    middle = scale_point("blur", {"ksize": 1 + 50 ** 0.5}, 32)["ksize"]
    assert middle == pytest.approx(1 + (50 / 7) ** 0.5)
    assert scale_point("median_blur", {"ksize": 1.0}, 32) == {"ksize": 1.0}
    # the share of draws that leave the image unchanged is the 224 px run's
    for name, param, threshold in (("glass_blur", "max_delta", 0.5), ("blur", "ksize", 1.0),
                                   ("motion_blur", "radius", 0.5)):
        clean = get_corruption(name).identity[param]
        old = [abs(p[param] - clean) < threshold for p in _old_draws(name, "visual")]
        new = [abs(p[param] - clean) < threshold
               for p in uniform_samples(name, SEED, IDS, "visual", side=32)]
        assert old == new
    point = {"radius": 30.0, "alias_blur": 0.5}
    assert scale_point("defocus_blur", point, 32) == {"radius": pytest.approx(30 / 7),
                                                      "alias_blur": 0.5}


def test_sides_above_224_are_clipped_to_the_domain():
    for name in PIXEL:
        spec = get_corruption(name)
        for before, after in zip(_old_draws(name), uniform_samples(name, SEED, IDS, side=448),
                                 strict=True):
            validate_point(spec, after)
            for param, value in before.items():
                if param in PIXEL[name]:
                    low, high = spec.parameters[param]
                    clean = spec.identity[param]
                    expected = min(high, max(low, clean + (value - clean) * 2))
                    assert after[param] == pytest.approx(expected, rel=1e-12, abs=1e-12)
                else:
                    assert after[param] == value
    assert scale_point("gaussian_blur", {"sigma": 30.0}, 448) == {"sigma": 40.0}
    assert scale_point("blur", {"ksize": 51.0}, 1000) == {"ksize": 51.0}


def _old_definition(name: str, mode: str = "uniform", spacing: str = "visual") -> dict:
    """The definition before image sizes existed, plus the code's version past 1."""
    spec = get_corruption(name)
    version = {"implementation": spec.implementation} if spec.implementation > 1 else {}
    if mode == "imagenet-c":
        return {"parameters": list(spec.parameters), "imagenet_c": None if (
            spec.imagenet_c_severities is None) else [dict(lv) for lv in
                                                      spec.imagenet_c_severities]} | version
    domains = {p: [low, high] for p, (low, high) in spec.parameters.items()}
    if spacing == "linear":
        return {"parameters": domains} | version
    return {"parameters": domains, "clean": dict(spec.identity), "log_floors": dict(spec.spacing),
            "powers": dict(spec.spacing_power), "coupling": spec.coupling} | version


def test_sampling_definition_at_224_is_unchanged():
    for name in ("gaussian_blur", "median_blur", "gaussian_noise", "noc_rain", "motion_blur"):
        for mode, spacing in (("uniform", "visual"), ("uniform", "linear"),
                              ("imagenet-c", "visual")):
            old = _old_definition(name, mode, spacing)
            for new in (sampling_definition(name, mode, spacing),
                        sampling_definition(name, mode, spacing, side=224)):
                # the code's version (registry implementation, past 1) is the only addition,
                # which _old_definition expects
                assert new.get("implementation", 1) == CORRUPTIONS[name].implementation
                assert new == old
                assert json.dumps(new, sort_keys=False) == json.dumps(old, sort_keys=False)


def test_sampling_definition_at_32_carries_the_side():
    uniform = sampling_definition("motion_blur", "uniform", "visual", side=32)
    assert uniform["side"] == 32 and uniform["pixel_parameters"] == ["radius", "sigma"]
    assert uniform["pixel_thresholds"] == {"radius": 0.5}
    assert {k: v for k, v in uniform.items()
            if k not in ("side", "pixel_parameters", "pixel_thresholds")} == (
        _old_definition("motion_blur"))
    linear = sampling_definition("blur", "uniform", "linear", side=32)
    assert linear["side"] == 32 and linear["pixel_parameters"] == ["ksize"]
    assert linear["clean"] == {"ksize": 1.0}
    assert sampling_definition("gaussian_noise", side=32)["pixel_parameters"] == []
    assert sampling_definition("gaussian_blur", side=32) != sampling_definition("gaussian_blur")
    assert sampling_definition("gaussian_blur", side=32) != sampling_definition(
        "gaussian_blur", side=64)
    c32 = sampling_definition("gaussian_blur", "imagenet-c", side=32)
    assert c32["side"] == 32
    assert c32["severities"] == [dict(level) for level in cifar_c_severities("gaussian_blur")]
    json.dumps(c32)
    json.dumps(uniform)


def test_imagenet_c_samples_at_32_are_cifar_10_c():
    for name in ("gaussian_blur", "gaussian_noise"):
        assert imagenet_c_samples(name, 32) == [dict(lv) for lv in cifar_c_severities(name)]
        assert imagenet_c_samples(name, 32) != imagenet_c_samples(name)
        imagenet_c = [{k: float(v) for k, v in lv.items()}
                      for lv in get_corruption(name).imagenet_c_severities]
        assert imagenet_c_samples(name) == imagenet_c
        assert imagenet_c_samples(name, 224) == imagenet_c
        assert imagenet_c_samples(name, 64) == imagenet_c
    assert imagenet_c_samples("gaussian_blur", 32)[0] == {"sigma": 0.4}
    for side in (32, 224):
        with pytest.raises(VcrbenchError, match="no ImageNet-C severities"):
            imagenet_c_samples("median_blur", side)


def test_make_samples_passes_the_side_through():
    images = ["a", "b", "c"]
    kw = dict(seed=SEED, n=12, shard_size=12, shard=0)
    default = make_samples(images, "motion_blur", mode="uniform", **kw)
    assert default.equals(make_samples(images, "motion_blur", mode="uniform", side=224, **kw))
    small = make_samples(images, "motion_blur", mode="uniform", side=32, **kw)
    np.testing.assert_allclose(small.column("sigma").to_numpy(),
                               default.column("sigma").to_numpy() * 32 / 224, rtol=1e-12)
    radius = [_by_hand(r, 100.0, 0.5) for r in default.column("radius").to_pylist()]
    np.testing.assert_allclose(small.column("radius").to_numpy(), radius, rtol=1e-12)
    for column in ("sample_id", "image_id", "seed", "severity"):
        assert small.column(column).equals(default.column(column))
    cifar = make_samples(images, "gaussian_blur", mode="imagenet-c", side=32, **kw)
    assert cifar.column("sigma").to_pylist()[:5] == [0.4, 0.6, 0.7, 0.8, 1.0]


@pytest.mark.parametrize("name,ksize", [("blur", 15.0), ("median_blur", 29.0)])
def test_scaled_ksize_blurs_a_32px_image_less(name, ksize):
    top = get_corruption(name).parameters["ksize"][1]
    scaled = scale_point(name, {"ksize": ksize}, 32)["ksize"]
    assert scaled == pytest.approx(1 + _by_hand(ksize - 1, top - 1, 1.0))
    assert 2 <= scaled < ksize  # rounds to an odd kernel above 1 (3 and 5 here)
    gen = torch.Generator().manual_seed(0)
    clean = torch.rand((2, 3, 32, 32), generator=gen, dtype=torch.float32)
    reference = torch.round(clean * 255)
    diffs = []
    for value in (scaled, ksize):
        out = apply_corruption(name, clean, {"ksize": [value, value]}, [0, 1])
        assert out.shape == (2, 3, 32, 32) and out.dtype == torch.uint8
        diffs.append(float((out.float() - reference).abs().mean()))
    assert 0 < diffs[0] < diffs[1]


@pytest.mark.parametrize("name", sorted(THRESHOLDS))
def test_below_each_threshold_the_image_is_unchanged(name):
    spec = get_corruption(name)
    gen = torch.Generator().manual_seed(1)
    clean = torch.round(torch.rand((2, 3, 32, 32), generator=gen, dtype=torch.float64) * 255)
    for param, threshold in THRESHOLDS[name].items():
        point = {p: [v, v] for p, v in spec.identity.items()}
        if name == "glass_blur":  # the shuffle acts with max_delta alone, the blur with sigma
            point["iterations"] = [2.0, 2.0]
        if name == "motion_blur":  # taps beyond the first weigh nothing at sigma 0
            point["sigma"] = [2.0, 2.0]
        below = spec.identity[param] + 0.99 * threshold
        out = apply_corruption(name, clean / 255, {**point, param: [below, below]}, [0, 1])
        assert torch.equal(out.to(torch.float64), clean), (name, param)
        # the kernels depart from the identity at the threshold, visibly a little above it
        above = spec.identity[param] + 4 * threshold
        out = apply_corruption(name, clean / 255, {**point, param: [above, above]}, [0, 1])
        assert not torch.equal(out.to(torch.float64), clean), (name, param)


class _Images:
    """The reading interface of a prepared store over fixed 32 px arrays."""

    def __init__(self, arrays: dict[str, np.ndarray]):
        self.arrays = arrays
        self.image_shape = (32, 32, 3)

    def __contains__(self, image_id: str) -> bool:
        return image_id in self.arrays

    def images(self, image_ids) -> np.ndarray:
        return np.stack([self.arrays[i] for i in image_ids])


def test_cifar_c_snow_samples_carry_its_settings_to_the_images():
    """At 32 px snow's severity samples get columns for the settings CIFAR-10-C's table gives, and
    the regenerated images are those of the whole point; at 224 px (and in uniform mode) the
    shard has the parameters only."""
    from vcrbench.corruptions import corrupt_uint8
    from vcrbench.evaluation.scoring import corrupted_batches

    kw = dict(seed=SEED, n=10, shard_size=10, shard=0)
    spec = get_corruption("snow")
    for table in (make_samples(["a", "b"], "snow", mode="imagenet-c", side=224, **kw),
                  make_samples(["a", "b"], "snow", mode="uniform", side=32, **kw)):
        assert not set(spec.settings) & set(table.column_names)
    small = make_samples(["a", "b"], "snow", mode="imagenet-c", side=32, **kw)
    assert small.column("layer_std").to_pylist()[:5] == [0.2, 0.2, 0.3, 0.3, 0.3]
    assert small.column("blur_radius").to_pylist()[:5] == [8.0, 10.0, 10.0, 12.0, 14.0]
    assert small.column("flake_zoom").to_pylist()[:5] == [1.0, 1.0, 1.75, 2.25, 1.25]
    rng = np.random.default_rng(3)
    clean = _Images({i: rng.integers(0, 256, (32, 32, 3), dtype=np.uint8) for i in "ab"})
    (rows, _, corrupted), = corrupted_batches(small, clean, batch_size=10)
    ids, seeds = small.column("image_id").to_pylist(), small.column("seed").to_pylist()
    for row in range(rows.stop):
        point = cifar_c_severities("snow")[row % 5]
        one = corrupt_uint8("snow", clean.images([ids[row]]), {k: [v] for k, v in point.items()},
                            [seeds[row]], torch.device("cpu"))
        np.testing.assert_array_equal(corrupted[row], one[0])


@pytest.mark.parametrize(("name", "setting", "values"), [
    ("zoom_blur", "cifar_factors", [1.0, 0.0, 0.0, 1.0, 1.0]),
    ("saturate", "offset_shift", [0.0, 0.0, 0.0, 0.1, 0.2 - 1 / 30]),
])
def test_cifar_c_samples_carry_settings_given_at_some_severities(name, setting, values):
    """A setting the severity table gives at some severities (issue 52: zoom blur's CIFAR-10-C
    factors at 1, 4, 5, saturate's offset at 4, 5) is a column at 32 px with its default at the
    others, and the regenerated images are those of the table's points; at 224 px and in uniform
    mode the shard has the parameters only."""
    from vcrbench.corruptions import corrupt_uint8
    from vcrbench.evaluation.scoring import corrupted_batches

    kw = dict(seed=SEED, n=10, shard_size=10, shard=0)
    for table in (make_samples(["a", "b"], name, mode="imagenet-c", side=224, **kw),
                  make_samples(["a", "b"], name, mode="uniform", side=32, **kw)):
        assert setting not in table.column_names
    small = make_samples(["a", "b"], name, mode="imagenet-c", side=32, **kw)
    np.testing.assert_allclose(small.column(setting).to_pylist()[:5], values, atol=1e-12)
    rng = np.random.default_rng(5)
    clean = _Images({i: rng.integers(0, 256, (32, 32, 3), dtype=np.uint8) for i in "ab"})
    (rows, _, corrupted), = corrupted_batches(small, clean, batch_size=10)
    ids = small.column("image_id").to_pylist()
    for row in range(rows.stop):
        point = cifar_c_severities(name)[row % 5]
        one = corrupt_uint8(name, clean.images([ids[row]]), {k: [v] for k, v in point.items()},
                            [0], torch.device("cpu"))
        np.testing.assert_array_equal(corrupted[row], one[0])
