"""From-scratch training: schedule, augmentation against a slow reference, resumption."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from vcrbench.errors import VcrbenchError
from vcrbench.training.scratch import (
    ScratchRecipe,
    accuracy,
    augment,
    epoch_draws,
    learning_rate,
    load_state,
    new_state,
    save_state,
    train_epoch,
)


def _recipe(**changes) -> ScratchRecipe:
    values = dict(architecture="fastnet", classes=3, epochs=3, batch_size=16, lr=0.05)
    return ScratchRecipe(**{**values, **changes})


def test_cosine_schedule_is_augmix_formula() -> None:
    recipe = ScratchRecipe(architecture="wrn-40-2", classes=10)
    total = 391 * 100
    # AugMix: lr * (lr_min + (lr_max - lr_min) * 0.5 * (1 + cos(step / total * pi))),
    # lr_max = 1, lr_min = 1e-6 / lr.
    for step in (0, 1, 19_550, total - 1, total):
        lr_min = 1e-6 / 0.1
        expected = 0.1 * (lr_min + (1 - lr_min) * 0.5 * (1 + math.cos(step / total * math.pi)))
        assert learning_rate(recipe, step, total) == pytest.approx(expected, rel=1e-12)
    assert (recipe.momentum, recipe.nesterov, recipe.weight_decay, recipe.batch_size,
            recipe.crop_padding, recipe.flip) == (0.9, True, 5e-4, 128, 4, True)


def test_onecycle_schedule() -> None:
    recipe = _recipe(schedule="onecycle", epochs=4, warmup_epochs=1)
    lrs = [learning_rate(recipe, s, 40) for s in range(40)]
    assert lrs[9] == pytest.approx(0.05) and lrs[0] == pytest.approx(0.005)
    assert lrs[39] == pytest.approx(0.05 / 30) and all(np.diff(lrs[10:]) < 0)


def test_augment_matches_slow_reference() -> None:
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (6, 32, 32, 3), dtype=np.uint8)
    dx, dy = rng.integers(0, 9, 6), rng.integers(0, 9, 6)
    flip = np.array([True, False, True, False, False, True])
    out = augment(torch.as_tensor(images), torch.as_tensor(dx), torch.as_tensor(dy),
                  torch.as_tensor(flip), padding=4).numpy()
    for i in range(6):
        padded = np.zeros((40, 40, 3), np.uint8)
        padded[4:36, 4:36] = images[i]
        crop = padded[dy[i]:dy[i] + 32, dx[i]:dx[i] + 32]
        np.testing.assert_array_equal(out[i], crop[:, ::-1] if flip[i] else crop)


def test_epoch_draws_are_keyed() -> None:
    recipe = _recipe()
    a, b = epoch_draws(recipe, 50, 2), epoch_draws(recipe, 50, 2)
    assert np.array_equal(a.order, b.order) and np.array_equal(a.dx, b.dx)
    assert not np.array_equal(a.order, epoch_draws(recipe, 50, 3).order)
    assert sorted(a.order) == list(range(50)) and a.dx.max() <= 8 and a.dy.min() >= 0


def _toy_data(n: int = 96) -> tuple[torch.Tensor, torch.Tensor]:
    """Three classes of images that differ in their mean colour, plus noise."""
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 3, n)
    images = rng.normal(128, 30, (n, 32, 32, 3))
    images[np.arange(n), :, :, labels] += 60
    return (torch.as_tensor(np.clip(images, 0, 255).astype(np.uint8)),
            torch.as_tensor(labels, dtype=torch.int64))


def test_training_learns_the_toy_task() -> None:
    images, labels = _toy_data()
    state = new_state(_recipe(epochs=8))  # 48 steps: BN's running statistics settle
    rows = [train_epoch(state, images, labels) for _ in range(8)]
    assert rows[-1]["loss"] < rows[0]["loss"]
    assert accuracy(state.model, images, labels, state.recipe) > 0.9
    with pytest.raises(VcrbenchError, match="all 8 epochs are already trained"):
        train_epoch(state, images, labels)


def test_resumed_training_equals_uninterrupted(tmp_path) -> None:
    torch.set_num_threads(1)
    images, labels = _toy_data()
    recipe = _recipe(epochs=2)
    straight = new_state(recipe)
    for _ in range(2):
        train_epoch(straight, images, labels)
    first = new_state(recipe)
    train_epoch(first, images, labels)
    save_state(first, tmp_path / "state.pt")
    resumed = load_state(tmp_path / "state.pt", recipe)
    assert resumed.epoch == 1 and resumed.log == first.log
    train_epoch(resumed, images, labels)
    expected = straight.model.state_dict()
    for key, value in resumed.model.state_dict().items():
        assert torch.equal(value, expected[key]), key
    assert resumed.log == straight.log


def test_checkpoint_of_other_settings_is_refused(tmp_path) -> None:
    state = new_state(_recipe())
    save_state(state, tmp_path / "state.pt")
    with pytest.raises(VcrbenchError, match="trained with other settings"):
        load_state(tmp_path / "state.pt", _recipe(lr=0.1))
    load_state(tmp_path / "state.pt", _recipe(precision="bf16"))
    (tmp_path / "bad.pt").write_bytes(b"truncated")
    with pytest.raises(VcrbenchError, match="cannot read training checkpoint"):
        load_state(tmp_path / "bad.pt")


def test_bad_recipe_names_every_problem() -> None:
    with pytest.raises(VcrbenchError, match="schedule 'step'.*method 'augmix'"):
        _recipe(schedule="step", method="augmix")
    with pytest.raises(VcrbenchError, match=r"unknown keys \['learning_rate'\]"):
        ScratchRecipe.from_dict({"architecture": "fastnet", "classes": 10,
                                 "learning_rate": 0.1})
