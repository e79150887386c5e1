"""Batched inference: uint8 images -> 1000-class top-1, its probability and the 16-class decision.

Decisions per image:

- ``top1``: argmax of the (B, 1000) logits (ImageNet-1k label index, int16).
- ``p_top1``: softmax probability of ``top1`` (float32, softmax in float32).
- ``top1_16``: :func:`vcrbench.data.imagenet16.decide_16` of the softmax probabilities (int8,
  0..15).

On the CPU the results are bit-identical across re-runs with the same torch build and thread
count (eval mode, ``torch.inference_mode``, fixed batch order). On CUDA, cuDNN may pick
different convolution algorithms between runs; decisions rarely differ.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from vcrbench.core.progress import Progress
from vcrbench.data.imagenet16 import CATEGORIES16, decide_16
from vcrbench.errors import VcrbenchError
from vcrbench.models.preprocess import apply_preprocessing, as_uint8_batch
from vcrbench.models.registry import LoadedModel, load_model

PRECISIONS = ("fp32", "bf16")


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """``"auto"`` (CUDA when torch sees a GPU, else CPU), ``"cpu"``, ``"cuda"`` or ``"cuda:N"``."""
    if isinstance(device, torch.device):
        device = str(device)
    device = device.strip().lower()
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cpu":
        return torch.device("cpu")
    if device == "cuda" or device.startswith("cuda:"):
        if not torch.cuda.is_available():
            raise VcrbenchError(
                f"device: {device} was asked for but torch sees no CUDA GPU; "
                "set device: auto or cpu"
            )
        return torch.device(device)
    raise VcrbenchError(f"device: {device!r} is not one of auto, cpu, cuda")


def predict(
    model: LoadedModel,
    images: np.ndarray | torch.Tensor,
    *,
    batch_size: int = 64,
    precision: str = "fp32",
    device: torch.device | str | None = None,
) -> dict[str, np.ndarray]:
    """Classify uint8 images, (N, 224, 224, 3) or (N, 3, 224, 224), numpy or torch.

    Args:
        model: from :func:`~vcrbench.models.registry.load_model`.
        images: uint8 RGB images as prepared by the pipeline (0..255).
        batch_size: images per forward pass.
        precision: ``"fp32"``, or ``"bf16"`` (autocast; CUDA only, a VcrbenchError on CPU).
        device: where to run; None: the model's device. The model is moved there if needed.

    Returns:
        ``{"top1": int16 (N,), "top1_16": int8 (N,), "p_top1": float32 (N,)}``.
    """
    if precision not in PRECISIONS:
        raise VcrbenchError(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    if int(batch_size) < 1:
        raise VcrbenchError(f"batch_size must be at least 1, got {batch_size}")
    target = model.device if device is None else torch.device(device)
    if precision == "bf16" and target.type != "cuda":
        raise VcrbenchError("precision bf16 needs a CUDA device; use precision fp32 on the CPU")
    if model.device != target:
        model.module.to(target)
    model.module.eval()
    # Channels-last roughly doubles CPU convolution throughput (benchmarks/bench_inference.py);
    # modules with lazy, still uninitialised parameters keep their layout.
    if not any(
        isinstance(p, torch.nn.parameter.UninitializedParameter) for p in model.module.parameters()
    ):
        model.module.to(memory_format=torch.channels_last)
    batch = as_uint8_batch(images)
    n = batch.shape[0]
    top1 = np.empty(n, np.int16)
    top1_16 = np.empty(n, np.int8)
    p_top1 = np.empty(n, np.float32)
    autocast = (
        torch.autocast("cuda", dtype=torch.bfloat16)
        if precision == "bf16"
        else contextlib.nullcontext()
    )
    progress = Progress(f"predict {model.name}", n, "images")
    with torch.inference_mode():
        for start in range(0, n, int(batch_size)):
            stop = min(n, start + int(batch_size))
            x = batch[start:stop].contiguous().to(target).float().div_(255.0)
            x = apply_preprocessing(model.preprocessing, x)
            if x.dim() == 4:
                x = x.contiguous(memory_format=torch.channels_last)
            with autocast:
                logits = model.module(x)
            if not isinstance(logits, torch.Tensor) or tuple(logits.shape) != (stop - start, 1000):
                shape = tuple(logits.shape) if isinstance(logits, torch.Tensor) else type(logits)
                raise VcrbenchError(f"model {model.name}: expected (B, 1000) logits, got {shape}")
            probabilities = torch.softmax(logits.float(), dim=1)
            p, index = probabilities.max(dim=1)
            top1[start:stop] = index.cpu().numpy()
            p_top1[start:stop] = p.cpu().numpy()
            top1_16[start:stop] = decide_16(probabilities.cpu().numpy())
            progress.advance(stop - start)
    return {"top1": top1, "top1_16": top1_16, "p_top1": p_top1}


def prepare_file(path: str | Path) -> np.ndarray:
    """The pipeline's preparation (:func:`vcrbench.data.datasets.prepare_image`):
    (224, 224, 3) uint8."""
    from vcrbench.data.datasets import prepare_image

    return prepare_image(path)


def predict_files(
    model_name: str,
    paths: Sequence[str | Path],
    *,
    device: str = "auto",
    batch_size: int = 64,
    precision: str = "fp32",
) -> list[dict]:
    """Classify image files with the pipeline's preparation (short side 256, centre crop 224).

    Returns one record per file: ``image`` (the path), ``top1`` (label index), ``wnid``, ``name``,
    ``p_top1``, ``top1_16`` (0..15) and ``category16`` (its name).
    """
    from vcrbench.data.imagenet import class_names, wnids

    if not paths:
        raise VcrbenchError("predict: give at least one image file")
    images = np.stack([prepare_file(p) for p in paths])
    torch_device = resolve_device(device)
    model = load_model(model_name, torch_device)
    out = predict(model, images, batch_size=batch_size, precision=precision, device=torch_device)
    records = []
    for i, path in enumerate(paths):
        label = int(out["top1"][i])
        c16 = int(out["top1_16"][i])
        records.append(
            {
                "image": str(path),
                "top1": label,
                "wnid": wnids()[label],
                "name": class_names()[label],
                "p_top1": float(out["p_top1"][i]),
                "top1_16": c16,
                "category16": CATEGORIES16[c16],
            }
        )
    return records


def format_predictions(records: list[dict], *, as_json: bool = False) -> str:
    """Text for ``vcrbench predict``: one line per image, or a JSON list with ``as_json``."""
    if as_json:
        return json.dumps(records, indent=2)
    return "\n".join(
        f"{r['image']}: {r['top1']} {r['wnid']} {r['name']} (p={r['p_top1']:.3f}); "
        f"16-class: {r['category16']}"
        for r in records
    )
