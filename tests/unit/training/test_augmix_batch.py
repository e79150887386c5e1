"""Batched AugMix views against the image-by-image reference (vcrbench.training.augmix, itself
checked against torchvision in test_methods.py): every operation, at every level and sign,
on noisy, flat and low-contrast images of square and non-square sizes; whole views with a
corruption in the pool; independence from the batch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from vcrbench.training.augmix import (
    AUGMIX_OPS,
    CorruptionOp,
    Step,
    apply_augmix_op,
    augmix_view,
    draw_augmix,
)
from vcrbench.training.augmix_batch import apply_steps, augmix_views, equalize
from vcrbench.training.spec import AugMixSettings


def _images(n: int, height: int, width: int, seed: int = 0) -> torch.Tensor:
    """Noise, flat images (one grey level), two-level and narrow-range images."""
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, (n, 3, height, width), dtype=np.uint8)
    images[1] = 77
    images[2] = rng.choice([10, 200], (3, height, width))
    images[3] = rng.integers(100, 104, (3, height, width))
    images[4, 0] = 255  # one flat channel next to noisy ones
    return torch.from_numpy(images)


@pytest.mark.parametrize(("height", "width"), [(32, 32), (24, 40)])
@pytest.mark.parametrize("op", AUGMIX_OPS)
def test_every_operation_equals_the_reference_image_by_image(op: str, height: int,
                                                             width: int) -> None:
    images = _images(40, height, width)
    rng = np.random.default_rng(1)
    levels, signs = rng.uniform(0.1, 10, 40), rng.choice([-1, 1], 40)
    steps = [Step(op, float(level), int(sign), 0)
             for level, sign in zip(levels, signs, strict=True)]
    steps[5] = Step(op, 10.0, 1, 0)  # the strongest level
    for fill in (0, 128):
        batched = apply_steps(images, steps, {}, fill)
        reference = torch.stack([apply_augmix_op(images[i], steps[i], fill)
                                 for i in range(len(images))])
        assert torch.equal(batched, reference), (op, fill)


def test_equalize_equals_torchvision_on_every_kind_of_channel() -> None:
    from torchvision.transforms import functional as TF

    images = _images(30, 32, 32, seed=4)
    assert torch.equal(equalize(images), TF.equalize(images))


def test_mixed_steps_in_one_batch_equal_the_reference() -> None:
    images = _images(60, 32, 32)
    rng = np.random.default_rng(2)
    steps = [Step(AUGMIX_OPS[int(rng.integers(len(AUGMIX_OPS)))], float(rng.uniform(0.1, 3)),
                  int(rng.choice([-1, 1])), 0) for _ in range(60)]
    reference = torch.stack([apply_augmix_op(images[i], steps[i]) for i in range(60)])
    assert torch.equal(apply_steps(images, steps, {}), reference)


def _draws(n: int, pool: tuple[str, ...], settings: AugMixSettings) -> list:
    return [draw_augmix(np.random.default_rng([7, i]), pool, settings) for i in range(n)]


@pytest.mark.parametrize("settings", [AugMixSettings(), AugMixSettings(width=2, depth=3,
                                                                       severity=10)])
def test_views_equal_the_reference_with_a_corruption_in_the_pool(settings) -> None:
    images = _images(24, 32, 32)
    corruptions = {"gaussian_noise": CorruptionOp.at("gaussian_noise", 3),
                   "defocus_blur": CorruptionOp.at("defocus_blur", 2)}
    pool = AUGMIX_OPS + tuple(corruptions)
    draws = _draws(len(images), pool, settings)
    used = {step.op for draw in draws for chain in draw.chains for step in chain}
    assert set(corruptions) <= used  # the corruptions are exercised
    batched = augmix_views(images, draws, corruptions)
    reference = torch.stack([augmix_view(images[i], draws[i], corruptions)
                             for i in range(len(images))])
    assert torch.equal(batched, reference)


def test_a_view_does_not_depend_on_the_rest_of_the_batch() -> None:
    images = _images(30, 32, 32)
    draws = _draws(30, AUGMIX_OPS, AugMixSettings())
    whole = augmix_views(images, draws)
    part = augmix_views(images[10:17], draws[10:17])
    assert torch.equal(whole[10:17], part)
    assert augmix_views(images[:0], []).shape == (0, 3, 32, 32)
    with pytest.raises(ValueError, match="30 images but 29 draws"):
        augmix_views(images, draws[:29])
