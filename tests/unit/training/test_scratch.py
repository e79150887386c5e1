"""From-scratch training: schedule, augmentation against a slow reference, resumption."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from helpers.cifar_files import toy_colour_data

from vcrbench.errors import VcrbenchError
from vcrbench.training.scratch import (
    ScratchRecipe,
    accuracy,
    epoch_draws,
    learning_rate,
    load_state,
    new_state,
    save_state,
    train_epoch,
)
from vcrbench.training.views import pad_crop_flip


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
    out = pad_crop_flip(torch.as_tensor(images), torch.as_tensor(dx), torch.as_tensor(dy),
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


def test_training_learns_the_toy_task() -> None:
    images, labels = toy_colour_data(96)
    state = new_state(_recipe(epochs=8))  # 48 steps: BN's running statistics settle
    rows = [train_epoch(state, images, labels) for _ in range(8)]
    assert rows[-1]["loss"] < rows[0]["loss"]
    assert accuracy(state.model, images, labels, state.recipe) > 0.9
    with pytest.raises(VcrbenchError, match="all 8 epochs are already trained"):
        train_epoch(state, images, labels)


def test_resumed_training_equals_uninterrupted(tmp_path) -> None:
    torch.set_num_threads(1)
    images, labels = toy_colour_data(96)
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
    with pytest.raises(VcrbenchError, match="schedule 'step'.*method 'sgd'"):
        _recipe(schedule="step", method="sgd")
    with pytest.raises(VcrbenchError, match=r"unknown keys \['learning_rate'\]"):
        ScratchRecipe.from_dict({"architecture": "fastnet", "classes": 10,
                                 "learning_rate": 0.1})


def _augmix_recipe(**changes) -> ScratchRecipe:
    from vcrbench.training.spec import AugMixSettings

    return _recipe(method="augmix", augmix=AugMixSettings(), **changes)


def test_augmix_views_of_a_batch_are_keyed_by_position() -> None:
    from vcrbench.training.scratch import augmix_training_views

    images, _ = toy_colour_data(20)
    recipe = _augmix_recipe()
    whole = augmix_training_views(recipe, images, 2, range(0, 20))
    part = augmix_training_views(recipe, images[6:11], 2, range(6, 11))
    for v in range(2):
        assert torch.equal(whole[v][6:11], part[v])
        assert whole[v].shape == images.shape and whole[v].dtype == torch.uint8
    other_epoch = augmix_training_views(recipe, images, 3, range(0, 20))
    assert not torch.equal(whole[0], other_epoch[0])
    assert not torch.equal(whole[0], whole[1])


def _first_step(recipe: ScratchRecipe, images: torch.Tensor, labels: torch.Tensor,
                adversarial: torch.Tensor | None = None) -> tuple[list[torch.Tensor], torch.Tensor]:
    """The float64 probabilities of every part of the first batch (image, two views, and the
    counterpart when given) under the freshly initialised model, and the batch's labels; the
    recipe must neither crop nor flip and take the whole set in one batch."""
    from vcrbench.training.scratch import augmix_training_views, normalise

    n = len(labels)
    model = new_state(recipe).model
    model.train()
    order = torch.as_tensor(epoch_draws(recipe, n, 1).order)
    batch = images[order]
    parts = [batch, *augmix_training_views(recipe, batch, 1, range(n))]
    if adversarial is not None:
        parts.append(adversarial[order])
    with torch.no_grad():
        logits = model(normalise(torch.cat(parts), recipe)).double()
    return [part.softmax(1) for part in logits.split(n)], labels[order]


def _js(p: list[torch.Tensor]) -> torch.Tensor:
    """Jensen-Shannon divergence of three distributions, written out (AugMix's clamp)."""
    mixture = torch.clamp(sum(p) / 3, 1e-7, 1)
    return sum((q * (torch.log(q) - torch.log(mixture))).sum(1) for q in p) / 3


def test_augmix_loss_is_cross_entropy_plus_lambda_js_of_the_three_views() -> None:
    """One step over the whole set: the logged loss is the pre-step loss, recomputed here from
    the same model with an explicit Jensen-Shannon divergence."""
    images, labels = toy_colour_data(24)
    recipe = _augmix_recipe(epochs=1, batch_size=24, crop_padding=0, flip=False)
    p, y = _first_step(recipe, images, labels)
    ce = -torch.log(p[0][torch.arange(24), y])
    expected = float((ce + 12.0 * _js(p)).mean())
    row = train_epoch(new_state(recipe), images, labels)
    assert row["loss"] == pytest.approx(expected, rel=1e-4)


def test_augmix_settings_go_with_the_augmix_method_only() -> None:
    from vcrbench.training.spec import AugMixSettings

    with pytest.raises(VcrbenchError, match="method augmix needs augmix settings"):
        _recipe(method="augmix")
    with pytest.raises(VcrbenchError, match="method standard takes no augmix settings"):
        _recipe(augmix=AugMixSettings())
    recipe = _augmix_recipe()
    assert ScratchRecipe.from_dict(recipe.as_dict()) == recipe
    assert "augmix" not in _recipe().as_dict()


def _reva_recipe(method: str = "reva_minus", targeted=(), **changes) -> ScratchRecipe:
    from vcrbench.training.scratch import ScratchReva
    from vcrbench.training.spec import AugMixSettings

    return _recipe(method=method, augmix=AugMixSettings(), reva=ScratchReva(targeted=targeted),
                   **changes)


def _counterparts(images: torch.Tensor) -> torch.Tensor:
    """Stand-ins for PGD counterparts: the images moved by a fixed ±8 grey-level pattern."""
    rng = np.random.default_rng(11)
    delta = torch.as_tensor(rng.choice([-8, 8], images.shape[1:]), dtype=torch.int16)
    return (images.to(torch.int16) + delta).clamp(0, 255).to(torch.uint8)


def test_reva_loss_is_eq2_of_image_counterpart_and_views() -> None:
    """REVa's Eq. 2 recomputed by hand from the same model: CE(image) + γ·CE(counterpart) +
    γ·λ·JS(image, view 1, view 2), the four parts in one batch."""
    images, labels = toy_colour_data(24)
    adversarial = _counterparts(images)
    recipe = _reva_recipe(epochs=1, batch_size=24, crop_padding=0, flip=False)
    p, y = _first_step(recipe, images, labels, adversarial)
    rows = torch.arange(24)
    ce, ce_adv = -torch.log(p[0][rows, y]), -torch.log(p[3][rows, y])
    expected = float((ce + 0.5 * ce_adv + 0.5 * 12.0 * _js(p[:3])).mean())
    row = train_epoch(new_state(recipe), images, labels, adversarial=adversarial)
    assert row["loss"] == pytest.approx(expected, rel=1e-4)


def test_reva_counterparts_are_cropped_and_flipped_as_their_images() -> None:
    """A counterpart equal to its image changes nothing but the loss's CE weight: the loss of
    such a batch is (1 + γ)·CE + γ·λ·JS, checked against the AugMix loss of the same step."""
    images, labels = toy_colour_data(32)
    reva = _reva_recipe(epochs=1, batch_size=32)
    augmix = _augmix_recipe(epochs=1, batch_size=32)
    row = train_epoch(new_state(reva), images, labels, adversarial=images.clone())
    # the same model, order, crops, flips and views: only the loss differs
    from vcrbench.training.scratch import augmix_training_views, normalise

    state = new_state(augmix)
    state.model.train()
    draws = epoch_draws(augmix, 32, 1)
    order = torch.as_tensor(draws.order)
    batch = pad_crop_flip(images[order], torch.as_tensor(draws.dx), torch.as_tensor(draws.dy),
                    torch.as_tensor(draws.flip), 4)
    views = augmix_training_views(augmix, batch, 1, range(32))
    with torch.no_grad():
        logits = state.model(normalise(torch.cat([batch, *views, batch]), augmix)).double()
    p = [part.softmax(1) for part in logits.split(32)]
    ce = -torch.log(p[0][torch.arange(32), labels[order]])
    assert row["loss"] == pytest.approx(float((1.5 * ce + 6.0 * _js(p[:3])).mean()), rel=1e-4)


def test_reva_pool_adds_the_targeted_corruptions_at_cifar_c_severity() -> None:
    from vcrbench.corruptions import imagenet_c_samples
    from vcrbench.training.augmix import AUGMIX_OPS
    from vcrbench.training.scratch import augmix_pool, augmix_training_views

    recipe = _reva_recipe("reva", targeted=("gaussian_noise", "glass_blur"))
    pool, corruptions = augmix_pool(recipe, 32)
    assert pool == AUGMIX_OPS + ("gaussian_noise", "glass_blur")
    assert dict(corruptions["glass_blur"].params) == imagenet_c_samples("glass_blur", 32)[2]
    assert dict(corruptions["glass_blur"].params) != imagenet_c_samples("glass_blur", 224)[2]
    assert augmix_pool(_reva_recipe(), 32) == (AUGMIX_OPS, {})
    images, _ = toy_colour_data(8)
    minus = augmix_training_views(_reva_recipe(), images, 1, range(8))
    targeted = augmix_training_views(recipe, images, 1, range(8))
    assert not all(torch.equal(a, b) for a, b in zip(minus, targeted, strict=True))


@pytest.mark.parametrize("method", ["augmix", "reva"])
def test_augmix_and_reva_training_is_deterministic_and_learns(method: str) -> None:
    images, labels = toy_colour_data(96)
    if method == "augmix":
        recipe, adversarial = _augmix_recipe(epochs=6), None
    else:
        recipe = _reva_recipe("reva", targeted=("gaussian_noise",), epochs=6)
        adversarial = _counterparts(images)
    first, second = new_state(recipe), new_state(recipe)
    rows = [train_epoch(first, images, labels, adversarial=adversarial) for _ in range(2)]
    after_two = {k: v.clone() for k, v in first.model.state_dict().items()}
    rows += [train_epoch(first, images, labels, adversarial=adversarial) for _ in range(4)]
    for _ in range(2):  # deterministic: the same two epochs again give the same weights
        train_epoch(second, images, labels, adversarial=adversarial)
    assert all(torch.equal(after_two[k], v) for k, v in second.model.state_dict().items())
    assert second.log == rows[:2]
    assert rows[-1]["loss"] < rows[0]["loss"]
    assert accuracy(first.model, images, labels, first.recipe) > 0.9


def test_reva_settings_and_counterparts_are_checked() -> None:
    from vcrbench.training.scratch import ScratchReva
    from vcrbench.training.spec import AugMixSettings

    with pytest.raises(VcrbenchError, match="method reva_minus needs reva settings"):
        _recipe(method="reva_minus", augmix=AugMixSettings())
    with pytest.raises(VcrbenchError, match="method reva needs targeted corruptions"):
        _reva_recipe("reva")
    with pytest.raises(VcrbenchError, match="reva_minus takes no targeted"):
        _reva_recipe(targeted=("fog",))
    with pytest.raises(VcrbenchError, match="method augmix takes no reva settings"):
        _recipe(method="augmix", augmix=AugMixSettings(), reva=ScratchReva())
    auto = _reva_recipe("reva", targeted="auto")
    assert ScratchRecipe.from_dict(auto.as_dict()) == auto
    resolved = auto.with_targeted(["fog"])
    assert resolved.reva.targeted == ("fog",)
    assert ScratchRecipe.from_dict(resolved.as_dict()) == resolved
    images, labels = toy_colour_data(8)
    with pytest.raises(VcrbenchError, match="not been resolved"):
        train_epoch(new_state(auto), images, labels, adversarial=images)
    with pytest.raises(VcrbenchError, match="needs PGD counterparts"):
        train_epoch(new_state(_reva_recipe()), images, labels)
    with pytest.raises(VcrbenchError, match="takes no PGD counterparts"):
        train_epoch(new_state(_augmix_recipe()), images, labels, adversarial=images)
    with pytest.raises(VcrbenchError, match="shape"):
        train_epoch(new_state(_reva_recipe()), images, labels, adversarial=images[:4])


def test_gradient_clipping_bounds_each_steps_gradient() -> None:
    """A huge bound changes nothing; a bound of 1e-3 makes the first plain SGD step (no
    momentum history, no weight decay) move the weights by lr · 1e-3 in L2 norm."""
    images, labels = toy_colour_data(32)
    plain = dict(epochs=1, batch_size=32, momentum=0.0, nesterov=False, weight_decay=0.0)
    reference, huge = new_state(_recipe(**plain)), new_state(_recipe(**plain,
                                                                     clip_grad_norm=1e9))
    for state in (reference, huge):
        train_epoch(state, images, labels)
    assert all(torch.equal(a, b) for a, b in zip(reference.model.parameters(),
                                                  huge.model.parameters(), strict=True))
    clipped = new_state(_recipe(**plain, clip_grad_norm=1e-3))
    before = [p.detach().clone() for p in clipped.model.parameters()]
    train_epoch(clipped, images, labels)
    moved = torch.sqrt(sum(((p.detach() - b) ** 2).sum()
                           for p, b in zip(clipped.model.parameters(), before, strict=True)))
    lr = learning_rate(clipped.recipe, 0, 1)
    assert float(moved) == pytest.approx(lr * 1e-3, rel=1e-3)
    assert "clip_grad_norm" not in _recipe().as_dict()
    assert ScratchRecipe.from_dict(clipped.recipe.as_dict()) == clipped.recipe


def test_view_workers_give_the_same_training_as_views_made_in_process() -> None:
    """Views made ahead in worker processes are the in-process views byte for byte: the same
    weights after two REVa epochs of one pool (a targeted numpy corruption included) with more
    batches than batches in flight and a short last batch."""
    from vcrbench.training.view_workers import ViewWorkers

    torch.set_num_threads(1)
    images, labels = toy_colour_data(56)
    recipe = _reva_recipe("reva", targeted=("glass_blur",), epochs=2, batch_size=16)
    adversarial = _counterparts(images)
    reference = new_state(recipe)
    for _ in range(2):
        train_epoch(reference, images, labels, adversarial=adversarial)
    state = new_state(recipe)
    with ViewWorkers(2, ahead=3) as pool:
        rows = [train_epoch(state, images, labels, adversarial=adversarial, view_workers=pool)
                for _ in range(2)]
    assert rows == reference.log
    expected = reference.model.state_dict()
    for key, value in state.model.state_dict().items():
        assert torch.equal(value, expected[key]), key
    with pytest.raises(ValueError, match="at least 1"):
        ViewWorkers(0)


def test_view_worker_count_follows_the_device() -> None:
    from vcrbench.training.view_workers import view_worker_count

    assert view_worker_count("auto", 16, "cuda") == 15
    assert view_worker_count("auto", 1, "cuda") == 1  # views always made on the CPU on a GPU
    assert view_worker_count("auto", 16, "cpu") == 0
    assert view_worker_count(3, 16, "cpu") == 3 and view_worker_count(0, 16, "cuda") == 0
