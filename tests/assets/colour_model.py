"""A user's own model for the `file:` contract: a tiny fixed-weight colour classifier.

Defines ``build_model()`` returning a module that maps a (B, 3, H, W) batch to (B, 1000)
logits, and ``preprocess`` (applied to the stored 224 × 224 images as floats in [0, 1]).
It is not trained: it exists to test that any user model runs through the whole pipeline.
"""

import torch
from torch import nn


class ColourHistogramNet(nn.Module):
    """Mean colour and colour contrast of 4 × 4 image cells, then a fixed random linear map."""

    def __init__(self) -> None:
        super().__init__()
        generator = torch.Generator().manual_seed(1234)
        self.pool = nn.AdaptiveAvgPool2d(4)
        self.linear = nn.Linear(3 * 16 * 2, 1000)
        with torch.no_grad():
            self.linear.weight.copy_(torch.randn(1000, 96, generator=generator) * 0.5)
            self.linear.bias.zero_()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        means = self.pool(x)
        contrast = self.pool((x - x.mean(dim=(2, 3), keepdim=True)).abs())
        return self.linear(torch.cat([means, contrast], dim=1).flatten(1))


def build_model() -> nn.Module:
    return ColourHistogramNet().eval()


def preprocess(images: torch.Tensor) -> torch.Tensor:
    return images * 2.0 - 1.0
