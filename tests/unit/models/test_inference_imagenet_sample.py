"""Clean accuracy of the shipped EfficientNet-Lite weights on the shared 1,000-image sample.

The sample (``../shared/data/imagenet-sample``, one image per class, ``<WNID>_<name>.JPEG``) is
prepared exactly as the pipeline does (:func:`vcrbench.data.datasets.prepare_image`). Lite0's clean
accuracy is checked by default through the pipeline's clean-prediction stage
(``tests/workflow/test_workflow.py``); this library-level check of all three runs with
``VCRBENCH_SLOW_TESTS=1`` (``benchmarks/bench_inference.py --accuracy`` measures all three).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from helpers.paths import IMAGENET_SAMPLE

SAMPLE = IMAGENET_SAMPLE
#: Measured with the registry's preprocessing (see vcrbench.models.efficientnet_lite).
MIN_TOP1 = {"efficientnet-lite0": 0.74, "efficientnet-lite1": 0.74, "efficientnet-lite2": 0.74}
SLOW = os.environ.get("VCRBENCH_SLOW_TESTS") == "1"

pytestmark = [
    pytest.mark.shared,
    pytest.mark.skipif(not SAMPLE.is_dir(), reason=f"{SAMPLE} is absent"),
]


@pytest.fixture(scope="module")
def sample() -> tuple[np.ndarray, np.ndarray]:
    """(1000, 224, 224, 3) uint8 images and (1000,) labels, sorted by file name."""
    from vcrbench.data.datasets import prepare_image
    from vcrbench.data.imagenet import label_of_filename

    files = sorted(SAMPLE.glob("*.JPEG"))
    labels = np.array([label_of_filename(f) for f in files])
    assert len(files) == 1000 and (labels >= 0).all()
    return np.stack([prepare_image(f) for f in files]), labels


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("efficientnet-lite0", marks=pytest.mark.skipif(not SLOW, reason="slow")),
        pytest.param("efficientnet-lite1", marks=pytest.mark.skipif(not SLOW, reason="slow")),
        pytest.param("efficientnet-lite2", marks=pytest.mark.skipif(not SLOW, reason="slow")),
    ],
)
def test_clean_accuracy(
    name: str, sample: tuple[np.ndarray, np.ndarray], record_property: pytest.RecordProperty
) -> None:
    from vcrbench.data.imagenet16 import label_to_category16
    from vcrbench.models import load_model, predict

    images, labels = sample
    out = predict(load_model(name), images, batch_size=64)
    top1 = float((out["top1"] == labels).mean())
    category = label_to_category16()[labels]
    in16 = category >= 0
    acc16 = float((out["top1_16"][in16] == category[in16]).mean())
    record_property("top1", top1)
    record_property("acc16", acc16)
    print(f"{name}: top-1 {top1:.3f} on 1000 images; 16-class {acc16:.3f} on {in16.sum()}")
    assert in16.sum() == 207
    assert top1 >= MIN_TOP1[name]
    assert acc16 >= 0.85
