"""Model-specific preprocessing, applied *after* corruption to the stored 224 x 224 uint8 image.

Every image reaches a model as the pipeline's prepared array (decode, RGB, short side 256,
centre crop 224, uint8; see :func:`vcrbench.data.datasets.prepare_image`), corrupted or not. A model
then sees::

    x = image / 255                                   # (B, 3, 224, 224) float32 in [0, 1]
    x = resize(x, input_size, interpolation)          # only when input_size != 224
    x = (x - mean) / std                              # per channel

The resize is :func:`torch.nn.functional.interpolate` on the whole 224 crop (no second crop:
the crop has already been taken at the standard 224/256 ratio), ``align_corners=False``,
anti-aliased when shrinking. Upscaling the 224 crop is what a model with a larger native input
(EfficientNet-Lite1 at 240, Lite2 at 260) needs to see the same field of view as the others.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from vcrbench.errors import VcrbenchError

IMAGENET_MEAN: tuple[float, float, float] = (0.485, 0.456, 0.406)
IMAGENET_STD: tuple[float, float, float] = (0.229, 0.224, 0.225)
#: TensorFlow EfficientNet-Lite ("edge") models: (x*255 - 127) / 128, i.e. about [-1, 1].
TF_LITE_MEAN: tuple[float, float, float] = (127.0 / 255.0,) * 3
TF_LITE_STD: tuple[float, float, float] = (128.0 / 255.0,) * 3
#: OpenAI CLIP normalisation (the open_clip default).
CLIP_MEAN: tuple[float, float, float] = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD: tuple[float, float, float] = (0.26862954, 0.26130258, 0.27577711)
#: No normalisation (models that normalise inside, e.g. RobustBench ImageNet models).
IDENTITY_MEAN: tuple[float, float, float] = (0.0, 0.0, 0.0)
IDENTITY_STD: tuple[float, float, float] = (1.0, 1.0, 1.0)
INTERPOLATIONS = ("bilinear", "bicubic", "nearest")


@dataclass(frozen=True)
class Preprocessing:
    """Resize + normalisation applied to a (B, 3, 224, 224) float [0, 1] batch.

    Attributes:
        input_size: side of the square model input in pixels.
        mean, std: per-channel normalisation on the [0, 1] scale (RGB order).
        interpolation: "bilinear" | "bicubic" | "nearest", used when ``input_size != 224``.
    """

    input_size: int
    mean: tuple[float, float, float]
    std: tuple[float, float, float]
    interpolation: str = "bilinear"

    def __post_init__(self) -> None:
        if self.interpolation not in INTERPOLATIONS:
            raise VcrbenchError(
                f"interpolation {self.interpolation!r} is not one of {', '.join(INTERPOLATIONS)}"
            )
        if int(self.input_size) < 1:
            raise VcrbenchError(
                f"input_size must be a positive number of pixels, got {self.input_size}"
            )
        if len(self.mean) != 3 or len(self.std) != 3 or min(self.std) <= 0:
            raise VcrbenchError(f"mean and std need 3 values, std > 0; got {self.mean}, {self.std}")
        object.__setattr__(self, "mean", tuple(float(v) for v in self.mean))
        object.__setattr__(self, "std", tuple(float(v) for v in self.std))

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """(B, 3, H, W) float in [0, 1] -> (B, 3, input_size, input_size) normalised."""
        if x.shape[-1] != self.input_size or x.shape[-2] != self.input_size:
            size = (self.input_size, self.input_size)
            if self.interpolation == "nearest":
                x = F.interpolate(x, size=size, mode="nearest")
            else:
                shrink = self.input_size < min(x.shape[-2:])
                x = F.interpolate(
                    x, size=size, mode=self.interpolation, align_corners=False, antialias=shrink
                )
        mean = torch.tensor(self.mean, dtype=x.dtype, device=x.device).view(1, 3, 1, 1)
        std = torch.tensor(self.std, dtype=x.dtype, device=x.device).view(1, 3, 1, 1)
        return (x - mean) / std

    def describe(self) -> str:
        """One line: ``224 px bilinear, mean (...), std (...)``."""
        mean = ", ".join(f"{v:.4g}" for v in self.mean)
        std = ", ".join(f"{v:.4g}" for v in self.std)
        return f"{self.input_size} px {self.interpolation}, mean ({mean}), std ({std})"


#: A model's preprocessing: the dataclass, or any callable on (B, 3, 224, 224) float [0, 1].
PreprocessFn = Preprocessing | Callable[[torch.Tensor], torch.Tensor]


def as_uint8_batch(images: np.ndarray | torch.Tensor) -> torch.Tensor:
    """uint8 images (N, H, W, 3) or (N, 3, H, W), numpy or torch -> uint8 (N, 3, H, W) view.

    A single image (H, W, 3) / (3, H, W) becomes a batch of one. No copy where possible (the
    result may be non-contiguous); torch tensors stay on their device.
    """
    x = torch.from_numpy(np.asarray(images)) if isinstance(images, np.ndarray) else images
    if not isinstance(x, torch.Tensor):
        raise VcrbenchError(f"images must be a numpy array or torch tensor, got {type(images)}")
    if x.dtype != torch.uint8:
        raise VcrbenchError(f"images must be uint8 (0..255), got {x.dtype}")
    if x.ndim == 3:
        x = x.unsqueeze(0)
    if x.ndim != 4:
        raise VcrbenchError(
            f"images must be (N, H, W, 3) or (N, 3, H, W), got shape {tuple(x.shape)}"
        )
    if x.shape[1] != 3:
        if x.shape[-1] != 3:
            raise VcrbenchError(f"images must have 3 (RGB) channels, got shape {tuple(x.shape)}")
        x = x.permute(0, 3, 1, 2)
    return x


def to_float_batch(images: np.ndarray | torch.Tensor) -> torch.Tensor:
    """uint8 images as in :func:`as_uint8_batch` -> contiguous (N, 3, H, W) float32 in [0, 1]."""
    return as_uint8_batch(images).contiguous().float().div_(255.0)


def apply_preprocessing(preprocess: PreprocessFn, x: torch.Tensor) -> torch.Tensor:
    """Run a model's preprocessing on a (B, 3, 224, 224) float [0, 1] batch."""
    out = preprocess(x)
    if not isinstance(out, torch.Tensor) or out.ndim != 4 or out.shape[0] != x.shape[0]:
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise VcrbenchError(
            f"the model's preprocess must return a (B, C, H, W) tensor; got {shape}"
        )
    return out

