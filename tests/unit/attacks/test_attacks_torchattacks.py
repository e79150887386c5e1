"""Agreement with torchattacks 3.5.1, the reference for the update rules and the defaults.

Float adversarial images (before rounding) are compared on two fixed models: the colour
classifier and a small convolutional net with fixed random weights. torchattacks averages the
loss over the batch and we sum it; the signs of the gradients, hence the images, are the same.
PGD is compared without its random start, R-FGSM with torchattacks fed our keyed normal draws
(it takes them from ``torch.randn_like``), so both comparisons are exact.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torchattacks
from torch import nn

from vcrbench.attacks import check_attack_params
from vcrbench.attacks.registry import attack_float
from vcrbench.core.seeding import ATTACK

CLASSES = {"fgsm": "FGSM", "bim": "BIM", "pgd": "PGD", "rfgsm": "RFGSM", "mifgsm": "MIFGSM"}


def conv_model() -> nn.Module:
    """Two convolutions, ReLU, pooling and a linear map to 1000 logits; fixed weights."""
    with torch.random.fork_rng():
        torch.manual_seed(0)
        net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                            nn.Conv2d(8, 16, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(2),
                            nn.Flatten(), nn.Linear(64, 1000))
    return net.eval()


@pytest.fixture(scope="module", params=["colour", "conv"])
def case(request, colour_net, small_images):
    """A fixed model, five (3, 32, 32) float images in [0, 1], their labels and ids."""
    net = colour_net if request.param == "colour" else conv_model()
    x = torch.from_numpy(small_images(5, seed=1)).permute(0, 3, 1, 2).float() / 255
    return net, x, torch.tensor([3, 100, 500, 999, 0]), [f"im{i}" for i in range(5)]


@pytest.mark.parametrize("name", ["fgsm", "bim", "pgd", "mifgsm"])
@pytest.mark.parametrize("eps", [8 / 255, 0.1])
def test_update_rules_agree_with_torchattacks(case, name, eps):
    net, x, y, ids = case
    extra = {"random_start": False} if name == "pgd" else {}
    params = {"eps": eps, **({"alpha": eps / 4} if name != "fgsm" else {})}
    theirs = getattr(torchattacks, CLASSES[name])(net, **params, **extra)(x, y)
    ours = attack_float(name, net, x, y, image_ids=ids, seed=0, params={**params, **extra})
    assert (theirs - x).abs().max() > eps / 2  # the attack moved the images
    assert torch.allclose(ours, theirs, rtol=0, atol=1e-6)


def test_rfgsm_agrees_with_torchattacks_given_the_same_start(case, monkeypatch):
    net, x, y, ids = case
    normal = np.stack([ATTACK.rng(7, "rfgsm", i).standard_normal(x.shape[1:], dtype=np.float32)
                       for i in ids])
    monkeypatch.setattr(torch, "randn_like", lambda like: torch.from_numpy(normal.copy()))
    theirs = torchattacks.RFGSM(net)(x, y)
    monkeypatch.undo()
    ours = attack_float("rfgsm", net, x, y, image_ids=ids, seed=7, params={})
    assert torch.allclose(ours, theirs, rtol=0, atol=1e-6)


def test_pgd_random_start_is_uniform_in_the_eps_ball(case):
    """torchattacks draws U[−ε, ε] from torch's generator; ours comes from the keyed stream:
    compare the distribution of the start (one step of a negligible α)."""
    net, x, y, ids = case
    start = attack_float("pgd", net, x, y, image_ids=ids, seed=0,
                         params={"steps": 1, "alpha": 1e-9}) - x
    inside = (x > 8 / 255) & (x < 1 - 8 / 255)  # no clipping at 0 / 1
    draws = start[inside] * 255 / 8
    assert float(draws.abs().max()) <= 1 + 1e-5
    assert abs(float(draws.mean())) < 0.02 and abs(float(draws.var()) - 1 / 3) < 0.02


def test_defaults_are_torchattacks():
    for name, cls in CLASSES.items():
        signature = inspect.signature(getattr(torchattacks, cls).__init__).parameters
        theirs = {k: p.default for k, p in signature.items() if k not in ("self", "model")}
        assert check_attack_params(name) == theirs, name
