"""The universal adversarial perturbation on the tiny fixed model: one δ for every image, within
ε, deterministic, fitted by signed steps on the mean loss of fixed minibatches."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from vcrbench.attacks import attack_images
from vcrbench.attacks.universal import apply_universal, fit_universal


@pytest.fixture(scope="module")
def small(colour_net, small_images):
    return small_images(8, seed=2), np.arange(8) * 120, [f"u{i}" for i in range(8)], colour_net


def test_one_delta_for_every_image(small):
    images, labels, ids, net = small
    adv = attack_images("uap", net, images, labels, image_ids=ids, seed=0,
                        params={"epochs": 3, "fit_batch_size": 3})
    delta = adv.astype(int) - images.astype(int)
    inside = np.all((images >= 8) & (images <= 247), axis=0)  # clipping cannot bite there
    assert inside.mean() > 0.3
    assert (delta[:, inside] == delta[0, inside]).all()
    assert np.abs(delta).max() <= 8 and np.abs(delta[0, inside]).max() > 0


def test_the_fit_is_signed_ascent_of_the_mean_loss(small):
    images, labels, ids, net = small
    x = torch.from_numpy(images).permute(0, 3, 1, 2)
    y = torch.from_numpy(labels)
    # one epoch, one minibatch: a single signed step of the gradient of the mean loss at δ = 0
    delta = fit_universal(net, x, y, eps=8 / 255, step=2 / 255, epochs=1, batch_size=8)
    x = x.float() / 255
    d = torch.zeros(x.shape[1:], requires_grad=True)
    F.cross_entropy(net(torch.clamp(x + d, 0, 1)), y).backward()
    assert delta.shape == (3, 32, 32)
    assert torch.equal(delta, 2 / 255 * d.grad.sign())
    # more steps: still within ε, and the loss of the set goes up
    fitted = fit_universal(net, x, y, eps=8 / 255, step=2 / 255, epochs=4, batch_size=3)
    assert float(fitted.abs().max()) <= 8 / 255 + 1e-7
    with torch.no_grad():
        clean = F.cross_entropy(net(x), y)
        attacked = F.cross_entropy(net(apply_universal(x, fitted)), y)
    assert float(attacked) > float(clean)


def test_uap_is_deterministic_and_ignores_seed_ids_and_batch_size(small):
    images, labels, ids, net = small
    params = {"epochs": 2, "fit_batch_size": 3}
    a = attack_images("uap", net, images, labels, image_ids=ids, seed=0, params=params)
    b = attack_images("uap", net, images, labels, image_ids=ids[::-1], seed=5, params=params,
                      batch_size=2)
    assert np.array_equal(a, b)
    # the fit's minibatches are part of the attack
    c = attack_images("uap", net, images, labels, image_ids=ids, seed=0,
                      params={"epochs": 2, "fit_batch_size": 8})
    assert not np.array_equal(a, c)
