"""Crops, flips and gradient clipping of fine-tuning (finetune[].geometry, clip_grad_norm):
the pad crop against numpy, the resized crop against torchvision's RandomResizedCrop (box
distribution and resampling), keyed draws, the PGD counterpart's geometry, and an epoch that
crops before the views are made and clips its gradient."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from torchvision.transforms import RandomResizedCrop
from torchvision.transforms.v2 import functional as F2

from vcrbench.core.seeding import EPOCH_ADVERSARIAL_GEOMETRY, EPOCH_GEOMETRY
from vcrbench.data.datasets import build_index, load_images
from vcrbench.training.augmentation import (
    GeometryDraws,
    crop_flip,
    geometry_draws,
    resized_crop_box,
)
from vcrbench.training.losses import cross_entropy
from vcrbench.training.methods import method_parts
from vcrbench.training.spec import RevaSettings, TrainingSpec, epoch_order
from vcrbench.training.views import ADVERSARIAL, INPUT, Views

CPU = torch.device("cpu")
SPEC = TrainingSpec(
    name="geo", base="efficientnet-lite0", corruption=None, fraction=0.0, spacing="linear",
    epochs=2, batch_size=4, trainable="classifier", batchnorm="frozen", lr=0.01, momentum=0.0,
    weight_decay=0.0, nesterov=False, schedule="constant", step_size=2, gamma=0.1, seed=3,
    method="reva_minus", reva=RevaSettings(), crop="resized", flip=True,
    adversarial_geometry="independent",
)


def _images(n: int, size: int = 24, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (n, size, size, 3), dtype=np.uint8)


def test_pad_crop_and_flip_equal_numpy_padding_and_slicing():
    spec = dataclasses.replace(SPEC, crop="pad", crop_padding=4)
    images = _images(6, 16)
    draws = geometry_draws(spec, 1, range(10, 16), 16, 16)
    assert draws.flip.any() and not draws.flip.all()
    ours = crop_flip(images, draws, spec, CPU)
    for i, image in enumerate(images):
        padded = np.pad(image, ((4, 4), (4, 4), (0, 0)))
        top, left = int(draws.top[i]), int(draws.left[i])
        expected = padded[top:top + 16, left:left + 16]
        if draws.flip[i]:
            expected = expected[:, ::-1]
        assert 0 <= top <= 8 and 0 <= left <= 8
        assert np.array_equal(ours[i], expected), i


def test_resized_crop_equals_torchvisions_resized_crop_and_flip():
    images = _images(5, 32, seed=1)
    draws = GeometryDraws(top=np.array([0, 3, 10, 0, 5]), left=np.array([0, 7, 2, 16, 5]),
                          height=np.array([32, 20, 9, 16, 27]),
                          width=np.array([32, 13, 22, 16, 19]),
                          flip=np.array([False, True, False, True, True]))
    ours = crop_flip(images, draws, SPEC, CPU)
    for i, image in enumerate(images):
        tensor = torch.from_numpy(image).permute(2, 0, 1)
        theirs = F2.resized_crop(tensor, int(draws.top[i]), int(draws.left[i]),
                                 int(draws.height[i]), int(draws.width[i]), [32, 32],
                                 antialias=True)
        if draws.flip[i]:
            theirs = F2.horizontal_flip(theirs)
        difference = np.abs(ours[i].astype(int) - theirs.permute(1, 2, 0).numpy().astype(int))
        assert difference.max() <= 1, i  # rounding of the float resampling
    assert np.array_equal(ours[0], images[0])  # the whole image, not flipped


def test_resized_crop_boxes_follow_torchvisions_distribution():
    n, side = 3000, 224
    rng = np.random.default_rng(0)
    ours = np.array([resized_crop_box(rng, side, side, (0.08, 1.0)) for _ in range(n)])
    torch.manual_seed(0)
    image = torch.zeros(3, side, side)
    theirs = np.array([RandomResizedCrop.get_params(image, [0.08, 1.0], [3 / 4, 4 / 3])
                       for _ in range(n)])
    for boxes in (ours, theirs):
        top, left, h, w = boxes.T
        assert (top >= 0).all() and (left >= 0).all()
        assert (top + h <= side).all() and (left + w <= side).all()
    area = {k: v[:, 2] * v[:, 3] / side**2 for k, v in (("ours", ours), ("theirs", theirs))}
    aspect = {k: np.log(v[:, 3] / v[:, 2]) for k, v in (("ours", ours), ("theirs", theirs))}
    # same algorithm, independent generators: means and quartiles agree within sampling error
    assert area["ours"].mean() == pytest.approx(area["theirs"].mean(), abs=0.02)
    np.testing.assert_allclose(np.percentile(area["ours"], [25, 50, 75]),
                               np.percentile(area["theirs"], [25, 50, 75]), atol=0.04)
    assert np.abs(aspect["ours"]).max() <= np.log(4 / 3) + 0.05
    assert aspect["ours"].std() == pytest.approx(aspect["theirs"].std(), rel=0.1)
    # no box of the scale and ratio fits: torchvision's fallback, the central crop of the
    # largest box of an allowed ratio
    for shape, ratio in (((224, 224), (2.0, 3.0)), ((100, 60), (3 / 4, 4 / 3)),
                         ((60, 100), (3 / 4, 4 / 3))):
        fallback = RandomResizedCrop.get_params(torch.zeros(3, *shape), [1.0, 1.0], list(ratio))
        assert resized_crop_box(rng, *shape, (1.0, 1.0), ratio=ratio) == tuple(fallback), shape


def test_draws_are_keyed_by_epoch_and_position_not_by_the_batch():
    whole = geometry_draws(SPEC, 2, range(4, 12), 32, 32)
    parts = [geometry_draws(SPEC, 2, r, 32, 32) for r in (range(4, 7), range(7, 12))]
    for field in ("top", "left", "height", "width", "flip"):
        assert np.array_equal(getattr(whole, field),
                              np.concatenate([getattr(p, field) for p in parts]))
    other = geometry_draws(SPEC, 3, range(4, 12), 32, 32)
    assert not np.array_equal(whole.top, other.top)
    apart = geometry_draws(SPEC, 2, range(4, 12), 32, 32, EPOCH_ADVERSARIAL_GEOMETRY)
    assert not np.array_equal(whole.top, apart.top)
    flips = geometry_draws(SPEC, 1, range(2000), 32, 32).flip
    assert flips.mean() == pytest.approx(0.5, abs=0.04)
    none = geometry_draws(dataclasses.replace(SPEC, crop="none", flip=False), 2, range(4), 32, 32)
    assert (none.height == 32).all() and (none.top == 0).all() and not none.flip.any()


@pytest.mark.parametrize("geometry", ["none", "same", "independent"])
def test_the_counterpart_is_cropped_as_geometry_adversarial_says(geometry):
    spec = dataclasses.replace(SPEC, adversarial_geometry=geometry)
    adversarial = _images(10, 24, seed=5)
    images = _images(4, 24, seed=6)
    augmentation, _ = method_parts(spec, adversarial)
    views = augmentation(images.copy(), 2, range(3, 7), CPU)
    counterparts = adversarial[epoch_order(10, spec, 2)[3:7]]
    stream = {"same": EPOCH_GEOMETRY, "independent": EPOCH_ADVERSARIAL_GEOMETRY}.get(geometry)
    expected = counterparts if stream is None else crop_flip(
        counterparts, geometry_draws(spec, 2, range(3, 7), 24, 24, stream), spec, CPU)
    assert np.array_equal(views.images[ADVERSARIAL], expected)
    assert np.array_equal(views.images[INPUT], images)  # the loop crops before the views


@pytest.mark.shared
def test_an_epoch_crops_before_the_views_and_clips_the_gradient(imagenet_sample):
    """EfficientNet-Lite0's classifier, 8 real images in one batch: the augmentation gets the
    cropped and flipped images; a clipped step moves the weights by lr · clip."""
    torch.set_num_threads(1)
    from vcrbench.training.loop import train_epoch

    index, _ = build_index("imagefolder", str(imagenet_sample), exclude_categories16=True,
                           limit=8)
    spec = dataclasses.replace(SPEC, method="standard", batch_size=8, adversarial_geometry="none",
                               clip_grad_norm=1e-4)
    seen = []

    def augmentation(images, epoch, positions, device):
        seen.append((images.copy(), positions))
        return Views({INPUT: images}, np.zeros(len(images), bool))

    checkpoint, _ = train_epoch(spec, index, 1, None, CPU, augmentation=augmentation,
                                loss=cross_entropy)
    (images, positions), = seen
    order = epoch_order(8, spec, 1)
    clean = load_images([index.column("path").to_pylist()[i] for i in order])
    expected = crop_flip(clean, geometry_draws(spec, 1, positions, 224, 224), spec, CPU)
    assert np.array_equal(images, expected) and not np.array_equal(images, clean)
    from vcrbench.models import load_model

    base = load_model("efficientnet-lite0").module.state_dict()
    moved = torch.sqrt(sum(((checkpoint["state_dict"][k].double() - base[k].double()) ** 2).sum()
                           for k in ("_fc.weight", "_fc.bias")))
    # (float32 weights: the difference is rounded per element, hence 2 %)
    assert float(moved) == pytest.approx(spec.lr * 1e-4, rel=0.02)
    assert checkpoint["spec"]["clip_grad_norm"] == 1e-4
    assert checkpoint["spec"]["crop"] == "resized"
