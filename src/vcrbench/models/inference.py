"""Batched inference: uint8 images -> top-1 class, its probability and the 16-class decision.

Decisions per image:

- ``top1``: argmax of the (B, classes) logits (int16): the ImageNet-1k label index, or the class
  of a model trained on another label space (``trained:``, e.g. CIFAR-10's 10).
- ``p_top1``: softmax probability of ``top1`` (float32, softmax in float32).
- ``top1_16``: :func:`vcrbench.data.imagenet16.decide_16` of the softmax probabilities (int8,
  0..15); -1 for a model without ImageNet's classes.

The forward pass runs on an engine (:mod:`vcrbench.models.engines`): eager PyTorch (the
reference, optionally compiled by ``torch.compile``) or OpenVINO on the CPU. Around it, per
batch: the host part (regroup the uint8 images into a contiguous batch, pin it for a GPU) runs
in a loader thread when ``prefetch`` is on (by default on CUDA), overlapped with the previous
batch's forward pass; then the copy to the device (asynchronous from pinned memory), the
uint8 -> float conversion, the model's preprocessing, the forward pass (bf16 autocast on CUDA if
asked for, channels-last for eager), the float32 softmax and the decisions. Batches stay in
order, so the results do not depend on ``prefetch``.

On the CPU the results are bit-identical across re-runs with the same torch / OpenVINO build
and thread count (eval mode, ``torch.inference_mode``, fixed batch order); OpenVINO's are also
independent of the batch size. On CUDA, cuDNN may pick different convolution algorithms between
runs; decisions rarely differ.
"""

from __future__ import annotations

import contextlib
import json
import queue
import sys
import threading
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np
import torch

from vcrbench.core.progress import Progress
from vcrbench.data.imagenet16 import CATEGORIES16, decide_16
from vcrbench.errors import VcrbenchError
from vcrbench.models.engines import check_engine, engine_for
from vcrbench.models.preprocess import apply_preprocessing, as_uint8_batch
from vcrbench.models.registry import LoadedModel, load_model

PRECISIONS = ("fp32", "bf16")
T = TypeVar("T")


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
    engine: str = "eager",
    compile: bool = False,
    cache_dir: str | Path | None = None,
    prefetch: bool | None = None,
) -> dict[str, np.ndarray]:
    """Classify uint8 images, (N, 224, 224, 3) or (N, 3, 224, 224), numpy or torch.

    Args:
        model: from :func:`~vcrbench.models.registry.load_model`.
        images: uint8 RGB images as prepared by the pipeline (0..255).
        batch_size: images per forward pass.
        precision: ``"fp32"``, or ``"bf16"`` (autocast; CUDA only, a VcrbenchError on CPU).
        device: where to run; None: the model's device. The model is moved there if needed.
        engine: ``"eager"`` (the reference), ``"openvino"`` or ``"auto"``
            (:mod:`vcrbench.models.engines`).
        compile: wrap the eager module in ``torch.compile``.
        cache_dir: where converted models are cached (default
            :func:`vcrbench.models.engines.default_cache_dir`).
        prefetch: prepare the next batch on the host (copy, pin) in a loader thread while the
            current one runs; None: on CUDA only. Results are the same either way.

    Returns:
        ``{"top1": int16 (N,), "top1_16": int8 (N,), "p_top1": float32 (N,)}``; ``top1`` indexes
        the model's classes, ``top1_16`` is -1 for a model without ImageNet's 1000 classes.
    """
    batch = as_uint8_batch(images)
    n = batch.shape[0]
    size = _check_batch_size(batch_size)
    chunks = (batch[start : start + size] for start in range(0, n, size))
    return predict_stream(
        model, chunks, n, batch_size=size, precision=precision, device=device, engine=engine,
        compile=compile, cache_dir=cache_dir, prefetch=prefetch,
    )


def predict_stream(
    model: LoadedModel,
    chunks: Iterable[np.ndarray | torch.Tensor],
    total: int,
    *,
    batch_size: int = 64,
    precision: str = "fp32",
    device: torch.device | str | None = None,
    engine: str = "eager",
    compile: bool = False,
    cache_dir: str | Path | None = None,
    prefetch: bool | None = None,
) -> dict[str, np.ndarray]:
    """:func:`predict` on image chunks from an iterable, e.g. a generator that decodes or
    corrupts them: with ``prefetch`` the generator runs in the loader thread, overlapped with the
    forward passes. Chunks of any length are regrouped into batches of ``batch_size`` in order;
    each chunk is copied, so a producer may reuse its buffer. ``total``: the number of images
    expected (for the progress lines). Arguments and result as in :func:`predict`.
    """
    if precision not in PRECISIONS:
        raise VcrbenchError(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    size = _check_batch_size(batch_size)
    check_engine(engine)
    target = model.device if device is None else torch.device(device)
    if precision == "bf16" and target.type != "cuda":
        raise VcrbenchError("precision bf16 needs a CUDA device; use precision fp32 on the CPU")
    if model.device != target:
        model.module.to(target)
    model.module.eval()
    runner = engine_for(model, target, engine, compile=compile, cache_dir=cache_dir)
    pin = target.type == "cuda"
    batches = host_batches(chunks, size, pin=pin)
    if prefetch if prefetch is not None else target.type == "cuda":
        batches = in_thread(batches)
    autocast = (
        torch.autocast("cuda", dtype=torch.bfloat16)
        if precision == "bf16" and runner.autocast_ok
        else contextlib.nullcontext()
    )
    top1: list[np.ndarray] = []
    top1_16: list[np.ndarray] = []
    p_top1: list[np.ndarray] = []
    progress = Progress(f"predict {model.name}", total, "images")
    fitting = FittingBatch(model.name, target, size)
    with contextlib.closing(batches), torch.inference_mode():
        for host in batches:
            x = host.to(target, non_blocking=pin).float().div_(255.0)
            x = apply_preprocessing(model.preprocessing, x)
            with autocast:
                logits = fitting.forward(runner.forward, x)
            expected = (len(host), model.classes)
            if not isinstance(logits, torch.Tensor) or tuple(logits.shape) != expected:
                shape = tuple(logits.shape) if isinstance(logits, torch.Tensor) else type(logits)
                raise VcrbenchError(f"model {model.name}: expected (B, {model.classes}) logits, "
                                    f"got {shape}")
            probabilities = torch.softmax(logits.float(), dim=1)
            p, index = probabilities.max(dim=1)
            top1.append(index.cpu().numpy().astype(np.int16))
            p_top1.append(p.cpu().numpy().astype(np.float32))
            top1_16.append(decide_16(probabilities.cpu().numpy()).astype(np.int8)
                           if model.classes == 1000 else np.full(len(host), -1, np.int8))
            progress.advance(len(host))
    return {
        "top1": np.concatenate(top1) if top1 else np.empty(0, np.int16),
        "top1_16": np.concatenate(top1_16) if top1_16 else np.empty(0, np.int8),
        "p_top1": np.concatenate(p_top1) if p_top1 else np.empty(0, np.float32),
    }


class FittingBatch:
    """Forward passes in the largest batch that fits the device's memory: a batch that runs out
    of memory is run again in halves, and every later batch in pieces of the size that fitted,
    said once on stderr. Each image's logits come from its own forward pass in any piece (the
    pieces are in order), so the results are those of the whole batch up to the kernels' own
    batch-size dependence. A single image that does not fit is a ``VcrbenchError`` (nothing is
    written: the job fails before its table)."""

    def __init__(self, model: str, device: torch.device, batch_size: int) -> None:
        self.model, self.device, self.size = model, device, batch_size

    def forward(self, run: Callable[[torch.Tensor], torch.Tensor],
                x: torch.Tensor) -> torch.Tensor:
        """``run`` on ``x`` (B, ...) in pieces of at most the size that fits: (B, classes)."""
        if len(x) <= self.size:
            try:
                return run(x)
            except torch.OutOfMemoryError:
                if len(x) == 1:
                    raise VcrbenchError(
                        f"model {self.model} does not fit in the memory of {self.device} even "
                        "with one image per batch; free the device or use a larger one") from None
                if self.device.type == "cuda":
                    torch.cuda.empty_cache()
                self.size = max(1, len(x) // 2)
                print(f"predict {self.model}: a batch of {len(x)} images does not fit in the "
                      f"memory of {self.device}; running batches of {self.size} (set "
                      f"inference.batch_size: {self.size} to start there)", file=sys.stderr,
                      flush=True)
        pieces, start = [], 0
        while start < len(x):  # the size may drop again inside a piece
            piece = x[start:start + self.size]
            pieces.append(self.forward(run, piece))
            start += len(piece)
        return torch.cat(pieces)


def _check_batch_size(batch_size: int) -> int:
    if int(batch_size) < 1:
        raise VcrbenchError(f"batch_size must be at least 1, got {batch_size}")
    return int(batch_size)


def host_batches(
    chunks: Iterable[np.ndarray | torch.Tensor], batch_size: int, *, pin: bool = False
) -> Iterator[torch.Tensor]:
    """Regroup uint8 image chunks into contiguous uint8 (B, 3, H, W) batches of ``batch_size``
    (the last may be smaller), in order. Each batch is a new tensor the chunks are copied into
    (so a producer may reuse its buffer), in pinned (page-locked) memory with ``pin``, for
    asynchronous copies to a GPU."""
    batch: torch.Tensor | None = None
    count = 0
    for chunk in chunks:
        x = as_uint8_batch(chunk)
        while x.shape[0]:
            if batch is None:
                batch = torch.empty((batch_size, *x.shape[1:]), dtype=torch.uint8,
                                    device=x.device)
                if pin and batch.device.type == "cpu":
                    batch = batch.pin_memory()
                count = 0
            if x.shape[1:] != batch.shape[1:]:
                raise VcrbenchError(
                    f"images of one batch must have one size, got {tuple(x.shape[1:])} after "
                    f"{tuple(batch.shape[1:])}"
                )
            take = min(batch_size - count, x.shape[0])
            batch[count : count + take].copy_(x[:take])
            count += take
            x = x[take:]
            if count == batch_size:
                yield batch
                batch = None
    if batch is not None:
        yield batch[:count]


def in_thread(items: Iterator[T], depth: int = 2) -> Generator[T, None, None]:
    """Iterate ``items`` in a loader thread, at most ``depth`` items ahead, in order.

    An exception of the producer is raised here; closing the generator (or an exception in the
    consumer) stops the thread.
    """
    buffer: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(message: tuple) -> bool:
        while not stop.is_set():
            try:
                buffer.put(message, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in items:
                if not put(("item", item)):
                    return
            put(("end", None))
        except BaseException as error:  # handed to the consumer, raised there
            put(("error", error))

    thread = threading.Thread(target=work, name="vcrbench-loader", daemon=True)
    thread.start()
    try:
        while True:
            kind, item = buffer.get()
            if kind == "end":
                return
            if kind == "error":
                raise item
            yield item
    finally:
        stop.set()
        thread.join()


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
    engine: str = "eager",
    cache_dir: str | Path | None = None,
) -> list[dict]:
    """Classify image files with the pipeline's preparation (short side 256, centre crop 224),
    on ``engine`` (as in :func:`predict`).

    Returns one record per file: ``image`` (the path), ``top1`` (label index), ``wnid``, ``name``,
    ``p_top1``, ``top1_16`` (0..15) and ``category16`` (its name).
    """
    from vcrbench.data.imagenet import class_names, wnids

    if not paths:
        raise VcrbenchError("predict: give at least one image file")
    images = np.stack([prepare_file(p) for p in paths])
    torch_device = resolve_device(device)
    model = load_model(model_name, torch_device)
    out = predict(model, images, batch_size=batch_size, precision=precision, device=torch_device,
                  engine=engine, cache_dir=cache_dir)
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
