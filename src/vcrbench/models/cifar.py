"""CIFAR classifiers, built with random weights for training from scratch (32 x 32 inputs).

Architectures (:data:`CIFAR_ARCHITECTURES`), written from their papers' descriptions:

- ``allconvnet``: All-CNN-C (Springenberg et al. 2015, Table 2), which the AugMix and REVa
  papers name, with batch normalisation and GELU after every convolution: 3x3 convolutions
  96-96-96/2 (the third of stride 2: the paper's point is convolutions in place of pooling),
  dropout 0.5, 192-192-192/2, dropout 0.5, a 3x3 192 convolution without padding (8 -> 6 px),
  two 1x1 192 convolutions, global average pooling and a linear classifier. 1.41 M parameters.
- ``allconvnet-augmix``: the variant of AugMix's published code (read, not copied): three
  stride-1 3x3 convolutions per width followed by 2x2 max pooling and dropout 0.5, convolutions
  with biases, GELU as ``x * sigmoid(1.702 x)``, the two 1x1 convolutions zero-padded by 1 px
  (6 -> 8 -> 10 px) and an 8x8 average pooling (10 -> 1 px: the border-only ring is dropped).
  Its numbers are the ones the AugMix and REVa papers report for "AllConvNet".
- ``wrn-40-2``: Wide ResNet (Zagoruyko & Komodakis 2016) of depth 40 and widening factor 2:
  pre-activation basic blocks (BN-ReLU-conv3x3, twice), 6 per group, widths 32, 64, 128 at 32,
  16, 8 px, no dropout. 2.24 M parameters.
- ``densenet-bc-100-12``: DenseNet-BC (Huang et al. 2017) with L = 100, growth rate k = 12:
  three dense blocks of 16 bottleneck layers (BN-ReLU-1x1 conv to 4k, BN-ReLU-3x3 conv to k),
  transitions compressing by 0.5 with 2x2 average pooling. 0.77 M parameters.
- ``resnet18``: ResNet-18 (He et al. 2016) with the CIFAR stem: one 3x3 convolution of stride 1,
  no max pooling, stages of 64-128-256-512 channels. 11.17 M parameters.
- ``fastnet``: this project's small network for CPU runs (a design in the spirit of the fastest
  published CIFAR-10 training methods): a 2x2 stem convolution, three stages of
  conv3x3-maxpool2-BN-GELU-conv3x3-BN-GELU at 32, 16 and 8 px with widths set by ``width``
  (default 64-128-256), global max pooling and a linear classifier whose output is scaled by
  1/8. It trains to over 85 % on CIFAR-10 in a few epochs (``benchmarks/bench_cifar_train.py``).

Every model maps a (B, 3, 32, 32) float tensor, already normalised, to (B, classes) logits.
Inputs of another size run as long as the spatial sizes stay valid, but the workflow gives CIFAR
models 32 px images only (:func:`input_size`).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from vcrbench.errors import VcrbenchError

#: The architecture names accepted by :func:`build_cifar_model`.
CIFAR_ARCHITECTURES = ("allconvnet", "allconvnet-augmix", "wrn-40-2", "densenet-bc-100-12",
                       "resnet18", "fastnet")
#: Input side (px) of every CIFAR architecture.
CIFAR_INPUT_SIZE = 32


def input_size(architecture: str) -> int:
    """The input side (px) the architecture is built for (32 for all of them)."""
    _check_architecture(architecture)
    return CIFAR_INPUT_SIZE


def _check_architecture(architecture: str) -> None:
    if architecture not in CIFAR_ARCHITECTURES:
        raise VcrbenchError(
            f"unknown CIFAR architecture {architecture!r}; choose one of "
            f"{', '.join(CIFAR_ARCHITECTURES)}"
        )


def _conv_bn_gelu(c_in: int, c_out: int, kernel: int, stride: int = 1, padding: int = 0
                  ) -> list[nn.Module]:
    return [nn.Conv2d(c_in, c_out, kernel, stride, padding, bias=False), nn.BatchNorm2d(c_out),
            nn.GELU()]


class AllConvNet(nn.Module):
    """All-CNN-C with BN and GELU (AugMix's CIFAR AllConvNet)."""

    def __init__(self, classes: int) -> None:
        super().__init__()
        self.features = nn.Sequential(
            *_conv_bn_gelu(3, 96, 3, padding=1),
            *_conv_bn_gelu(96, 96, 3, padding=1),
            *_conv_bn_gelu(96, 96, 3, stride=2, padding=1),
            nn.Dropout(0.5),
            *_conv_bn_gelu(96, 192, 3, padding=1),
            *_conv_bn_gelu(192, 192, 3, padding=1),
            *_conv_bn_gelu(192, 192, 3, stride=2, padding=1),
            nn.Dropout(0.5),
            *_conv_bn_gelu(192, 192, 3),
            *_conv_bn_gelu(192, 192, 1),
            *_conv_bn_gelu(192, 192, 1),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.classifier = nn.Linear(192, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


class _SigmoidGelu(nn.Module):
    """GELU's sigmoid approximation ``x * sigmoid(1.702 x)`` (AugMix's code)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(1.702 * x) * x


class AllConvNetAugMix(nn.Module):
    """The AllConvNet of AugMix's code: max pooling and dropout between widths (module docs)."""

    def __init__(self, classes: int) -> None:
        super().__init__()

        def conv(c_in: int, c_out: int, kernel: int, padding: int) -> list[nn.Module]:
            return [nn.Conv2d(c_in, c_out, kernel, padding=padding), nn.BatchNorm2d(c_out),
                    _SigmoidGelu()]

        self.features = nn.Sequential(
            *conv(3, 96, 3, 1), *conv(96, 96, 3, 1), *conv(96, 96, 3, 1),
            nn.MaxPool2d(2), nn.Dropout(0.5),
            *conv(96, 192, 3, 1), *conv(192, 192, 3, 1), *conv(192, 192, 3, 1),
            nn.MaxPool2d(2), nn.Dropout(0.5),
            *conv(192, 192, 3, 0), *conv(192, 192, 1, 1), *conv(192, 192, 1, 1),
            nn.AvgPool2d(8), nn.Flatten(),
        )
        self.classifier = nn.Linear(192, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


class _WideBlock(nn.Module):
    """Pre-activation basic block: BN-ReLU-conv3x3-BN-ReLU-conv3x3, 1x1 shortcut on change."""

    def __init__(self, c_in: int, c_out: int, stride: int) -> None:
        super().__init__()
        self.bn1 = nn.BatchNorm2d(c_in)
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.shortcut = (None if c_in == c_out and stride == 1
                         else nn.Conv2d(c_in, c_out, 1, stride, 0, bias=False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pre = torch.relu(self.bn1(x))
        out = self.conv2(torch.relu(self.bn2(self.conv1(pre))))
        return out + (x if self.shortcut is None else self.shortcut(pre))


class WideResNet(nn.Module):
    """WRN-depth-widen (pre-activation), as used for CIFAR by AugMix and REVa."""

    def __init__(self, depth: int, widen: int, classes: int) -> None:
        super().__init__()
        if (depth - 4) % 6:
            raise VcrbenchError(f"WRN depth must be 6n + 4, got {depth}")
        blocks = (depth - 4) // 6
        widths = [16, 16 * widen, 32 * widen, 64 * widen]
        layers: list[nn.Module] = [nn.Conv2d(3, widths[0], 3, 1, 1, bias=False)]
        for group in range(3):
            for block in range(blocks):
                c_in = widths[group] if block == 0 else widths[group + 1]
                stride = 2 if group > 0 and block == 0 else 1
                layers.append(_WideBlock(c_in, widths[group + 1], stride))
        layers += [nn.BatchNorm2d(widths[3]), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten()]
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(widths[3], classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


class _DenseLayer(nn.Module):
    """Bottleneck layer: BN-ReLU-conv1x1 (4k) - BN-ReLU-conv3x3 (k), concatenated to its input."""

    def __init__(self, c_in: int, growth: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.BatchNorm2d(c_in), nn.ReLU(), nn.Conv2d(c_in, 4 * growth, 1, bias=False),
            nn.BatchNorm2d(4 * growth), nn.ReLU(),
            nn.Conv2d(4 * growth, growth, 3, padding=1, bias=False),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, self.body(x)], dim=1)


class DenseNetBC(nn.Module):
    """DenseNet-BC for CIFAR: 3 dense blocks, compression 0.5, first convolution to 2k."""

    def __init__(self, depth: int, growth: int, classes: int) -> None:
        super().__init__()
        if (depth - 4) % 6:
            raise VcrbenchError(f"DenseNet-BC depth must be 6n + 4, got {depth}")
        per_block = (depth - 4) // 6
        channels = 2 * growth
        layers: list[nn.Module] = [nn.Conv2d(3, channels, 3, padding=1, bias=False)]
        for block in range(3):
            for _ in range(per_block):
                layers.append(_DenseLayer(channels, growth))
                channels += growth
            if block < 2:
                out = channels // 2
                layers += [nn.BatchNorm2d(channels), nn.ReLU(),
                           nn.Conv2d(channels, out, 1, bias=False), nn.AvgPool2d(2)]
                channels = out
        layers += [nn.BatchNorm2d(channels), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten()]
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(channels, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


def _resnet18_cifar(classes: int) -> nn.Module:
    """torchvision's ResNet-18 with a 3x3 stride-1 stem and no max pooling."""
    from torchvision.models import resnet18

    model = resnet18(weights=None, num_classes=classes)
    model.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
    model.maxpool = nn.Identity()
    return model


class FastNet(nn.Module):
    """The small CPU network: 2x2 stem, three conv-pool stages, max pooling, scaled logits.

    Args:
        classes: number of outputs.
        width: channels of the three stages (the stem has ``width[0] // 2``).
    """

    LOGIT_SCALE = 1 / 8

    def __init__(self, classes: int, width: tuple[int, int, int] = (64, 128, 256)) -> None:
        super().__init__()
        stem = width[0] // 2
        layers: list[nn.Module] = [nn.Conv2d(3, stem, 2, padding=1, bias=False),
                                   nn.BatchNorm2d(stem), nn.GELU()]
        c_in = stem
        for c_out in width:
            layers += [nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.MaxPool2d(2),
                       nn.BatchNorm2d(c_out), nn.GELU(),
                       nn.Conv2d(c_out, c_out, 3, padding=1, bias=False),
                       nn.BatchNorm2d(c_out), nn.GELU()]
            c_in = c_out
        layers += [nn.AdaptiveMaxPool2d(1), nn.Flatten()]
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(c_in, classes, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x)) * self.LOGIT_SCALE


def _initialise(model: nn.Module) -> None:
    """He-normal convolutions (fan-out), unit BN, zero linear biases (convolution biases keep
    PyTorch's default): the papers' initialisation."""
    for module in model.modules():
        if isinstance(module, nn.Conv2d):
            fan_out = module.kernel_size[0] * module.kernel_size[1] * module.out_channels
            nn.init.normal_(module.weight, 0.0, math.sqrt(2.0 / fan_out))
        elif isinstance(module, nn.BatchNorm2d):
            nn.init.ones_(module.weight)
            nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)


def build_cifar_model(architecture: str, classes: int, seed: int = 0) -> nn.Module:
    """A CIFAR architecture with ``classes`` outputs and weights drawn from ``seed``.

    The weights depend on ``seed`` alone (a local generator, never torch's global state).
    """
    _check_architecture(architecture)
    if classes < 2:
        raise VcrbenchError(f"a classifier needs at least 2 classes, got {classes}")
    state = torch.random.get_rng_state()
    try:
        torch.manual_seed(seed)
        if architecture == "allconvnet":
            model: nn.Module = AllConvNet(classes)
        elif architecture == "allconvnet-augmix":
            model = AllConvNetAugMix(classes)
        elif architecture == "wrn-40-2":
            model = WideResNet(40, 2, classes)
        elif architecture == "densenet-bc-100-12":
            model = DenseNetBC(100, 12, classes)
        elif architecture == "resnet18":
            model = _resnet18_cifar(classes)
        else:
            model = FastNet(classes)
        if architecture != "resnet18":
            _initialise(model)
    finally:
        torch.random.set_rng_state(state)
    return model


def parameter_count(model: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
