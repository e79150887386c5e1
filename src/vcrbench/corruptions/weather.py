"""Frost (ImageNet-C): the image mixed with a crop of a real frost photograph.

``x' = clip(image_weight * x + frost_weight * frost)``, with ``frost`` a random crop of one of the
frost photographs that ImageNet-C ships (the ``imagecorruptions`` wheel carries the same files
under ``imagecorruptions/frost/``). As ImageNet-C: one of ``frost1.png … frost5.jpg`` (its
``np.random.randint(5)`` never picks ``frost6.jpg``), loaded by OpenCV, enlarged by 1.1 after
scaling up to cover the image if needed (bicubic, 8-bit), then cropped at a random position.

The photograph's scale follows the image size below 176 px (:func:`frost_scale`): CIFAR-10-C
(``make_cifar_c.py``) shrinks it by 0.2 (``cv2.resize`` with ``fx = fy = 0.2``, bilinear) for its
32 px images, so the layer is scaled by ``0.2 · side / 32`` (the shorter side), which meets
ImageNet-C's 1.1 at 176 px; from there up it is ImageNet-C's, so 224 px images are unchanged.
Only 32 px and 176 px and up are published rules; sizes between are this interpolation (Tiny
ImageNet-C, for one, shrinks by 0.3 at 64 px, where this gives 0.4), and they resize bilinearly
as CIFAR-10-C does. A narrow image that the scaled photograph would not cover gets ImageNet-C's
covering scale instead.
Here the photograph index and the crop position come from the sample's seed, with the
counter-based generator :mod:`vcrbench.core.philox` (``philox.integers``, one stream each:
:data:`PHOTO_STREAM` the index in ``0 .. 4``, :data:`TOP_STREAM` the row offset in
``[0, layer height - H)``, :data:`LEFT_STREAM` the column offset in ``[0, layer width - W)``, as
ImageNet-C's ``randint`` bounds). The five rescaled photographs of an image size are kept on each
device (padded to one ``(5, 3, h, w)`` uint8 tensor) and a batch's crops are gathered from it in
one indexing operation: no loop over the samples, no host round trip.

The files are read from the installed ``imagecorruptions`` distribution without importing it
(its ``__init__`` imports ``pkg_resources``, which current setuptools no longer provides).
Licence: the ``imagecorruptions`` wheel is Apache-2.0 (its ``LICENSE``); the photographs come
from Hendrycks & Dietterich's ImageNet-C repository (``hendrycks/robustness``, Apache-2.0);
neither states a separate origin or licence for the photographs themselves.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch

from vcrbench.core import philox
from vcrbench.errors import VcrbenchError

FROST_FILES = ("frost1.png", "frost2.png", "frost3.png", "frost4.jpg", "frost5.jpg")
#: Philox stream ids of frost's draws (one per draw).
PHOTO_STREAM = 1  # which photograph
TOP_STREAM = 2  # the crop's row offset
LEFT_STREAM = 3  # the crop's column offset


def frost_directory() -> Path:
    """The ``frost/`` folder of the installed ``imagecorruptions`` package (not imported)."""
    spec = importlib.util.find_spec("imagecorruptions")
    if spec is None or not spec.submodule_search_locations:
        raise VcrbenchError(
            "frost needs the frost photographs of the 'imagecorruptions' package; install it "
            "with `pip install imagecorruptions==1.1.2`")
    folder = Path(next(iter(spec.submodule_search_locations))) / "frost"
    missing = [f for f in FROST_FILES if not (folder / f).is_file()]
    if missing:
        raise VcrbenchError(f"frost photographs missing from {folder}: {', '.join(missing)}; "
                            "reinstall imagecorruptions==1.1.2")
    return folder


#: ImageNet-C's enlargement of the frost photograph.
IMAGENET_C_FROST_SCALE = 1.1
#: CIFAR-10-C's scale of the photograph for 32 px images.
CIFAR_C_FROST_SCALE = 0.2


def frost_scale(height: int, width: int) -> float | None:
    """The photograph's scale for a small ``H x W`` image, ``0.2 · min(H, W) / 32`` (CIFAR-10-C's
    0.2 at 32 px), or None from 176 px up, where ImageNet-C's rule applies."""
    scale = CIFAR_C_FROST_SCALE * min(height, width) / 32
    return scale if scale < IMAGENET_C_FROST_SCALE else None


@lru_cache(maxsize=32)
def frost_layer(index: int, height: int, width: int) -> np.ndarray:
    """Frost photograph ``index`` rescaled for an ``H x W`` image (module docstring): RGB uint8.

    Images from 176 px up: as ImageNet-C (bicubic, 1.1 times the scale that covers the image).
    Smaller ones: as CIFAR-10-C at :func:`frost_scale` (``cv2.resize`` with ``fx = fy``,
    bilinear)."""
    import cv2

    path = frost_directory() / FROST_FILES[index]
    frost = cv2.imread(str(path))
    if frost is None:
        raise VcrbenchError(f"cannot decode the frost photograph {path}")
    fh, fw = frost.shape[:2]
    small = frost_scale(height, width)
    if small is not None:
        # a narrow image the shrunk photograph would not cover: enlarged to cover, as ImageNet-C
        small = max(small, IMAGENET_C_FROST_SCALE * max(height / fh, width / fw))
        resized = cv2.resize(frost, (0, 0), fx=small, fy=small)
    else:
        # ImageNet-C: scale up only along a side that is too short (the larger factor), then x1.1
        scale = max(1.0, height / fh, width / fw) * IMAGENET_C_FROST_SCALE
        size = (int(np.ceil(fw * scale)), int(np.ceil(fh * scale)))
        resized = cv2.resize(frost, dsize=size, interpolation=cv2.INTER_CUBIC)
    if resized.shape[0] <= height or resized.shape[1] <= width:
        raise VcrbenchError(f"the frost photograph {path.name} at scale {small} is too small "
                            f"for a {height} x {width} image")
    return np.ascontiguousarray(resized[..., ::-1])


@lru_cache(maxsize=16)
def frost_layers(height: int, width: int, device: torch.device) -> tuple[torch.Tensor, ...]:
    """The five photographs of :func:`frost_layer` on ``device``: ``(stack, sizes)``, ``stack``
    ``(5 * h, w * 3)`` uint8 (photograph ``i`` in rows ``i h ..``, RGB interleaved along a row,
    each at the top left of its block, zero padded to the largest ``h x w``) and ``sizes``
    ``(5, 2)`` int64 (each photograph's height and width)."""
    layers = [frost_layer(i, height, width) for i in range(len(FROST_FILES))]
    h, w = max(a.shape[0] for a in layers), max(a.shape[1] for a in layers)
    stack = np.zeros((len(layers), h, w, 3), dtype=np.uint8)
    for i, layer in enumerate(layers):
        stack[i, : layer.shape[0], : layer.shape[1]] = layer
    sizes = torch.tensor([a.shape[:2] for a in layers], dtype=torch.int64)
    stack = torch.from_numpy(stack.reshape(len(layers) * h, w * 3))
    return stack.to(device), sizes.to(device)


def frost_draws(seeds: Sequence[int] | torch.Tensor, height: int, width: int,
                device: torch.device | str = "cpu") -> tuple[torch.Tensor, ...]:
    """Each sample's ``(photograph index, top, left)``, three ``(B,)`` int64 tensors on
    ``device``, drawn from its seed (module docstring)."""
    device = torch.device(device)
    _, sizes = frost_layers(height, width, device)
    index = philox.integers(seeds, len(FROST_FILES), 1, PHOTO_STREAM, device=device)[:, 0]
    size = sizes[index]
    top = philox.integers(seeds, size[:, 0] - height, 1, TOP_STREAM, device=device)[:, 0]
    left = philox.integers(seeds, size[:, 1] - width, 1, LEFT_STREAM, device=device)[:, 0]
    return index, top, left


def frost_crops(seeds: Sequence[int], height: int, width: int) -> list[tuple[int, int, int]]:
    """Each sample's ``(photograph index, top, left)`` drawn from its seed, as Python ints."""
    index, top, left = frost_draws(seeds, height, width)
    return list(zip(index.tolist(), top.tolist(), left.tolist(), strict=True))


def frost_one(image: torch.Tensor, image_weight: float, frost_weight: float, index: int,
              top: int, left: int) -> torch.Tensor:
    """One ``(3, H, W)`` image mixed with photograph ``index`` cropped at ``(top, left)`` (a
    per-sample reference for :func:`frost`)."""
    _, h, w = image.shape
    layer = frost_layer(index, h, w)[top : top + h, left : left + w]
    crop = torch.from_numpy(np.ascontiguousarray(layer)).permute(2, 0, 1)
    crop = crop.to(image.device, image.dtype) / 255.0
    return (image * image_weight + crop * frost_weight).clamp(0.0, 1.0)


def frost(images: torch.Tensor, params: dict[str, np.ndarray],
          seeds: Sequence[int]) -> torch.Tensor:
    """``clip(image_weight * x + frost_weight * frost_crop / 255)``, batched: the crops are
    gathered from the device's photographs (:func:`frost_layers`) in one indexing operation."""
    b, _, h, w = images.shape
    stack, sizes = frost_layers(h, w, images.device)
    index, top, left = frost_draws(seeds, h, w, images.device)
    block = stack.shape[0] // len(FROST_FILES)
    # the crop's rows (one index_select), then each sample's columns (one gather)
    rows = (index * block + top).view(b, 1) + torch.arange(h, device=images.device)
    strips = stack.index_select(0, rows.view(-1)).view(b, h, -1)
    cols = (left * 3).view(b, 1) + torch.arange(3 * w, device=images.device)
    crop = strips.gather(2, cols.view(b, 1, 3 * w).expand(b, h, 3 * w))
    crop = crop.view(b, h, w, 3).permute(0, 3, 1, 2).to(images.dtype,
                                                         memory_format=torch.contiguous_format)

    def weight(name: str, scale: float = 1.0) -> torch.Tensor:
        values = np.asarray(params[name], dtype=np.float64) * scale
        return torch.as_tensor(values, dtype=images.dtype).to(images.device).view(b, 1, 1, 1)

    crop *= weight("frost_weight", 1.0 / 255.0)
    return crop.addcmul_(images, weight("image_weight")).clamp_(0.0, 1.0)
