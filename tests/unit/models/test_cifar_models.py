"""CIFAR architectures: sizes against their papers, shapes, seeds, refusals."""

from __future__ import annotations

import pytest
import torch

from vcrbench.errors import VcrbenchError
from vcrbench.models.cifar import (
    CIFAR_ARCHITECTURES,
    build_cifar_model,
    input_size,
    parameter_count,
)

#: Published sizes (millions of parameters, CIFAR-10 heads): WRN-40-2 2.2 M (Zagoruyko &
#: Komodakis 2016, Table 1), DenseNet-BC L=100 k=12 0.8 M (Huang et al. 2017, Table 2),
#: ResNet-18 11.2 M (the CIFAR variant of He et al.'s ResNet-18), AllConvNet 1.4 M (AugMix,
#: Hendrycks et al. 2020, Table 6: All-CNN-C with BN).
PUBLISHED_MILLIONS = {"wrn-40-2": 2.2, "densenet-bc-100-12": 0.8, "resnet18": 11.2,
                      "allconvnet": 1.4, "allconvnet-augmix": 1.4}


@pytest.mark.parametrize("architecture", sorted(PUBLISHED_MILLIONS))
def test_parameter_counts_match_the_papers(architecture: str) -> None:
    millions = parameter_count(build_cifar_model(architecture, 10)) / 1e6
    assert millions == pytest.approx(PUBLISHED_MILLIONS[architecture], abs=0.05)


@pytest.mark.parametrize("architecture", CIFAR_ARCHITECTURES)
@pytest.mark.parametrize("classes", [10, 100])
def test_logits_shape(architecture: str, classes: int) -> None:
    model = build_cifar_model(architecture, classes).eval()
    with torch.no_grad():
        logits = model(torch.randn(2, 3, input_size(architecture), 32))
    assert logits.shape == (2, classes) and torch.isfinite(logits).all()


def test_weights_depend_on_the_seed_alone() -> None:
    torch.manual_seed(123)
    a = build_cifar_model("fastnet", 10, seed=5).state_dict()
    torch.manual_seed(456)
    b = build_cifar_model("fastnet", 10, seed=5).state_dict()
    c = build_cifar_model("fastnet", 10, seed=6).state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)


def test_global_generator_untouched() -> None:
    torch.manual_seed(7)
    expected = torch.rand(3)
    torch.manual_seed(7)
    build_cifar_model("allconvnet", 10)
    assert torch.equal(torch.rand(3), expected)


def test_unknown_architecture_lists_the_known_ones() -> None:
    with pytest.raises(VcrbenchError, match="unknown CIFAR architecture 'vgg16'.*wrn-40-2"):
        build_cifar_model("vgg16", 10)
    with pytest.raises(VcrbenchError, match="at least 2 classes"):
        build_cifar_model("fastnet", 1)


def test_allconvnet_augmix_spatial_sizes() -> None:
    """8 px after two poolings, 6 px after the unpadded 3x3, 8 and 10 px after the padded 1x1s,
    1 px after the 8x8 average pooling."""
    model = build_cifar_model("allconvnet-augmix", 10).eval()
    sizes = []
    x = torch.zeros(1, 3, 32, 32)
    with torch.no_grad():
        for layer in model.features:
            x = layer(x)
            if isinstance(layer, torch.nn.Conv2d | torch.nn.AvgPool2d):
                sizes.append(x.shape[-1])
    assert sizes == [32, 32, 32, 16, 16, 16, 6, 8, 10, 1]
