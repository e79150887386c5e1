"""Adversarial attacks on a tiny fixed model: the L∞ bound after rounding, keyed randomness,
independence from the batch split, the parameters and the errors on bad input.

The model is the tests' fixed-weight colour classifier (``tests/assets/colour_model.py``) on
small 32 × 32 images, so every attack runs in milliseconds.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from vcrbench.attacks import ATTACKS, attack_images, check_attack_params
from vcrbench.attacks.registry import attack_float, quantise
from vcrbench.core.seeding import ATTACK
from vcrbench.errors import VcrbenchError

PER_IMAGE = ("fgsm", "bim", "pgd", "rfgsm", "mifgsm")


@pytest.fixture(scope="module")
def small(colour_net, small_images):
    """Six images, labels, ids and the colour model (a Forward as it is)."""
    return small_images(), np.arange(6) * 100, [f"img{i}" for i in range(6)], colour_net


def _levels(adv: np.ndarray, clean: np.ndarray) -> np.ndarray:
    return np.abs(adv.astype(int) - clean.astype(int))


# --------------------------------------------------------------------- the L∞ bound


@pytest.mark.parametrize("name", [*PER_IMAGE, "uap"])
@pytest.mark.parametrize("eps", [8 / 255, 0.1])
def test_change_stays_within_eps_after_rounding(small, name, eps):
    images, labels, ids, net = small
    adv = attack_images(name, net, images, labels, image_ids=ids, seed=1, params={"eps": eps})
    assert adv.dtype == np.uint8 and adv.shape == images.shape
    change = _levels(adv, images)
    assert 1 <= change.max() <= eps * 255  # 8 levels, or 25 (not 26) for 25.5
    if name == "fgsm":  # one step of ε: every pixel not held by 0 / 255 moves the whole bound
        assert change.max() == int(eps * 255 + 1e-6)


def test_quantise_rounds_half_to_even_then_projects():
    clean = torch.full((1, 3, 1, 4), 100, dtype=torch.uint8)
    # 0.1 · 255 = 25.5 levels: 100 + 25.5 rounds to 126 (even), projected to 125
    over = (clean.float() + torch.tensor([25.5, -25.5, 24.5, 3.5])) / 255
    assert quantise(over, clean, 0.1)[0, 0, 0].tolist() == [125, 75, 124, 104]
    # the [0, 255] range wins over the ε-ball
    edge = torch.tensor([0, 255], dtype=torch.uint8).reshape(1, 1, 1, 2)
    pushed = torch.tensor([-0.5, 1.5]).reshape(1, 1, 1, 2)
    assert quantise(pushed, edge, 1.0).flatten().tolist() == [0, 255]


def test_eps_below_one_grey_level_leaves_the_images_unchanged(small):
    images, labels, ids, net = small
    adv = attack_images("pgd", net, images, labels, image_ids=ids, seed=0,
                        params={"eps": 0.5 / 255, "steps": 2})
    assert np.array_equal(adv, images)


# ------------------------------------------------------------- batches and randomness


@pytest.mark.parametrize("name", PER_IMAGE)
def test_results_do_not_depend_on_the_batch(small, name):
    images, labels, ids, net = small
    runs = [attack_images(name, net, images, labels, image_ids=ids, seed=4, batch_size=b)
            for b in (1, 3, 6)]
    assert all(np.array_equal(runs[0], r) for r in runs[1:])
    # nor on the other images of the call
    alone = attack_images(name, net, images[2:3], labels[2:3], image_ids=ids[2:3], seed=4)
    assert np.array_equal(alone[0], runs[0][2])


def test_random_starts_are_keyed_by_seed_attack_and_image(small):
    images, labels, ids, net = small
    x = torch.from_numpy(images).permute(0, 3, 1, 2).float() / 255
    y = torch.from_numpy(labels)
    params = {"steps": 1, "alpha": 1e-9}  # the result is the random start itself

    def start(seed: int, image_ids=ids) -> torch.Tensor:
        return attack_float("pgd", net, x, y, image_ids=image_ids, seed=seed, params=params)

    first = start(1)
    # the draw for image i is ATTACK.rng(seed, "pgd", image_id), uniform on [−ε, ε)
    draw = ATTACK.rng(1, "pgd", "img2").random(x.shape[1:], dtype=np.float32) * 2 - 1
    expected = torch.clamp(x[2] + 8 / 255 * torch.from_numpy(draw), 0, 1)
    assert torch.allclose(first[2], expected, atol=1e-6)
    assert torch.equal(first, start(1))
    assert not torch.equal(first, start(2))
    assert not torch.equal(first, start(1, [i + "x" for i in ids]))
    assert float((first - x).abs().max()) <= 8 / 255 + 1e-6
    assert float((first - x).abs().mean()) > 3 / 255  # uniform on the ball, not x itself
    # R-FGSM's normal draws too: the same for the same seed, others for another
    rfgsm = [attack_float("rfgsm", net, x, y, image_ids=ids, seed=seed,
                          params={"steps": 1, "alpha": 1 / 255}) for seed in (1, 1, 2)]
    assert torch.equal(rfgsm[0], rfgsm[1]) and not torch.equal(rfgsm[0], rfgsm[2])


def test_pgd_without_random_start_is_bim(small):
    images, labels, ids, net = small
    pgd = attack_images("pgd", net, images, labels, image_ids=ids, seed=3,
                        params={"random_start": False})
    bim = attack_images("bim", net, images, labels, image_ids=ids, seed=9)
    assert np.array_equal(pgd, bim)


def test_no_gradient_is_left_on_the_model(small):
    images, labels, ids, net = small
    for name in ("mifgsm", "uap"):
        attack_images(name, net, images, labels, image_ids=ids, seed=0, params={"steps": 2}
                      if name != "uap" else {"epochs": 1})
    assert all(p.grad is None for p in net.parameters())


def test_attacks_run_under_no_grad(small):
    images, labels, ids, net = small
    with torch.no_grad():
        adv = attack_images("fgsm", net, images, labels, image_ids=ids, seed=0)
    assert _levels(adv, images).max() == 8


# ------------------------------------------------------------------------ parameters


def test_parameters_are_merged_and_typed():
    params = check_attack_params("pgd", {"eps": 0.1, "steps": 20.0, "random_start": 0})
    assert params == {"eps": 0.1, "alpha": 2 / 255, "steps": 20, "random_start": False}
    assert type(params["steps"]) is int and type(params["random_start"]) is bool
    assert check_attack_params("fgsm", {"eps": 1}) == {"eps": 1.0}
    assert check_attack_params("uap") == {"eps": 8 / 255, "step": 2 / 255, "epochs": 5,
                                          "fit_batch_size": 32}
    assert set(ATTACKS) == {"fgsm", "bim", "pgd", "rfgsm", "mifgsm", "uap"}
    assert all(attack.docs for attack in ATTACKS.values())
    with pytest.raises(TypeError):
        ATTACKS["pgd"].defaults["eps"] = 0.5  # read-only


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("cw", {}, "unknown attack 'cw'; known: fgsm, bim, pgd, rfgsm, mifgsm, uap"),
        ("pgd", {"epsilon": 0.1}, "unknown parameters ['epsilon']; its parameters: eps, alpha"),
        ("fgsm", {"alpha": 0.1}, "unknown parameters ['alpha']; its parameters: eps"),
        ("pgd", {"eps": 0}, "eps must be in (0, 1]"),
        ("fgsm", {"eps": 1.5}, "got 1.5"),
        ("bim", {"eps": -8}, "eps must be in (0, 1]"),
        ("bim", {"alpha": 0}, "alpha must be > 0"),
        ("rfgsm", {"alpha": -1}, "got -1"),
        ("bim", {"steps": 0}, "steps must be an integer >= 1, got 0"),
        ("bim", {"steps": 2.5}, "steps must be an integer >= 1, got 2.5"),
        ("mifgsm", {"decay": -0.5}, "decay must be >= 0"),
        ("pgd", {"random_start": 2}, "random_start must be true or false, got 2"),
        ("uap", {"eps": "x"}, "eps must be a finite number, got 'x'"),
        ("uap", {"step": float("inf")}, "step must be a finite number"),
        ("uap", {"epochs": True}, "epochs must be a finite number, got True"),
        ("uap", {"fit_batch_size": 0}, "fit_batch_size must be an integer >= 1"),
    ],
)
def test_bad_parameters_are_refused(name, params, message):
    with pytest.raises(VcrbenchError) as error:
        check_attack_params(name, params)
    assert message in str(error.value)


def test_bad_images_are_refused(small):
    images, labels, ids, net = small

    def attack(*, images=images, labels=labels, ids=ids, seed=0, batch_size=32, name="fgsm"):
        return attack_images(name, net, images, labels, image_ids=ids, seed=seed,
                             batch_size=batch_size)

    with pytest.raises(VcrbenchError, match="uint8 \\(N, H, W, 3\\), got float32"):
        attack(images=images.astype(np.float32))
    with pytest.raises(VcrbenchError, match="got uint8 \\(6, 32, 32\\)"):
        attack(images=images[..., 0])
    with pytest.raises(VcrbenchError, match="6 images need as many labels"):
        attack(labels=labels[:2])
    with pytest.raises(VcrbenchError, match="and 5 ids"):
        attack(ids=ids[:5])
    with pytest.raises(VcrbenchError, match="labels must be class indices >= 0"):
        attack(labels=labels - 1)
    with pytest.raises(VcrbenchError, match="batch_size must be an integer >= 1, got 0"):
        attack(batch_size=0)
    with pytest.raises(VcrbenchError, match="batch_size must be an integer >= 1, got '8'"):
        attack(batch_size="8")
    with pytest.raises(VcrbenchError, match="seed must be an integer >= 0, got -1"):
        attack(seed=-1, name="pgd")
    with pytest.raises(VcrbenchError, match="seed must be an integer >= 0, got 1.5"):
        attack(seed=1.5, name="pgd")
    with pytest.raises(VcrbenchError, match="unknown attack 'deepfool'"):
        attack(name="deepfool")


@pytest.mark.parametrize("name", list(ATTACKS))
def test_attacks_run_on_a_cifar_network_at_32px_with_10_classes(small_images, name):
    """REVa on CIFAR: every attack on 32 × 32 images through a 10-class CIFAR network (fastnet,
    random weights), its output as large as its input, within ε, and no less wrong on average."""
    from vcrbench.models.cifar import build_cifar_model

    net = build_cifar_model("fastnet", 10, seed=1).eval()
    images = small_images(n=8, size=32, seed=4)
    x = torch.from_numpy(images).permute(0, 3, 1, 2).float() / 255
    with torch.no_grad():
        labels = net(x).argmax(1).numpy()  # the net's own answers: every image starts correct
    adversarial = attack_images(name, net, images, labels, image_ids=[f"i{k}" for k in range(8)],
                                seed=0, params={"epochs": 1} if name == "uap" else None,
                                batch_size=4)
    assert adversarial.shape == images.shape == (8, 32, 32, 3)
    assert np.abs(adversarial.astype(int) - images.astype(int)).max() <= 8
    with torch.no_grad():
        after = net(torch.from_numpy(adversarial).permute(0, 3, 1, 2).float() / 255)
    assert after.shape == (8, 10)
    loss = torch.nn.functional.cross_entropy
    with torch.no_grad():
        assert loss(after, torch.from_numpy(labels)) >= loss(net(x), torch.from_numpy(labels))
