"""The attacks on a real model: EfficientNet-Lite0 with its ImageNet weights, on eight real
ImageNet images from the shared sample (``../shared/data/imagenet-sample``), prepared as the
pipeline stores them. A few seconds each on two CPU cores."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from vcrbench.attacks import attack_images, forward_of

pytestmark = pytest.mark.shared


@pytest.fixture(scope="module")
def real(imagenet_sample):
    """Eight (224, 224, 3) uint8 images, their labels and ids, and Lite0 (a LoadedModel)."""
    from vcrbench.data.datasets import prepare_image
    from vcrbench.data.imagenet import label_of_filename
    from vcrbench.models import load_model

    files = sorted(imagenet_sample.glob("*.JPEG"))[3::125][:8]
    images = np.stack([prepare_image(f) for f in files])
    labels = np.array([label_of_filename(f) for f in files])
    assert images.shape == (8, 224, 224, 3) and (labels >= 0).all()
    return images, labels, [f.stem for f in files], load_model("efficientnet-lite0")


def _error_and_loss(forward, images: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    x = torch.from_numpy(images).permute(0, 3, 1, 2).float() / 255
    y = torch.from_numpy(labels)
    with torch.no_grad():
        logits = forward(x)
    return float((logits.argmax(1) != y).float().mean()), float(F.cross_entropy(logits, y))


def test_forward_is_the_models_prediction(real):
    from vcrbench.models.inference import predict

    images, labels, _, model = real
    error, _ = _error_and_loss(forward_of(model), images, labels)
    top1 = predict(model, images)["top1"]
    assert error == pytest.approx(float((top1 != labels).mean()))


def test_pgd_error_does_not_fall_as_steps_grow(real):
    images, labels, ids, model = real
    forward = forward_of(model)
    eps = 1 / 255  # small enough that one step does not already fool every image
    results = [
        _error_and_loss(forward, attack_images(
            "pgd", forward, images, labels, image_ids=ids, seed=0,
            params={"eps": eps, "alpha": eps / 4, "steps": steps}), labels)
        for steps in (1, 2, 5)
    ]
    clean = _error_and_loss(forward, images, labels)
    errors, losses = [r[0] for r in results], [r[1] for r in results]
    assert errors == sorted(errors) and errors[0] > clean[0], (clean, results)
    assert losses == sorted(losses) and losses[0] > clean[1], (clean, results)


def test_pgd_on_the_real_model_does_not_depend_on_the_batch(real):
    images, labels, ids, model = real
    forward = forward_of(model)
    runs = [attack_images("pgd", forward, images[:3], labels[:3], image_ids=ids[:3], seed=2,
                          params={"steps": 1}, batch_size=b) for b in (1, 3)]
    assert np.array_equal(runs[0], runs[1])
    assert np.abs(runs[0].astype(int) - images[:3]).max() == 8


def test_the_universal_perturbation_raises_the_error(real):
    images, labels, ids, model = real
    forward = forward_of(model)
    adv = attack_images("uap", forward, images, labels, image_ids=ids, seed=0,
                        params={"epochs": 3, "fit_batch_size": 4})
    assert np.abs(adv.astype(int) - images).max() <= 8
    clean_error, clean_loss = _error_and_loss(forward, images, labels)
    error, loss = _error_and_loss(forward, adv, labels)
    assert error > clean_error and loss > clean_loss, (clean_error, error, clean_loss, loss)
