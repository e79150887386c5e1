"""Prediction tables: one model's decisions on the clean images and on a scored shard.

Schemas (one row per image or sample):

- ``predictions/<m>/clean.parquet``: ``image_id`` (string), ``top1`` (int16, ImageNet-1k index),
  ``top1_16`` (int8, 16-class decision, index into the alphabetical 16 categories),
  ``p_top1`` (float32, softmax probability of ``top1``).
- ``predictions/<m>/<c>/shard-<k>.parquet``: the same with ``sample_id`` (int64) instead of
  ``image_id``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from vcrbench.data.prepared import DecodedImages, PreparedImages
from vcrbench.errors import VcrbenchError
from vcrbench.evaluation.scoring import decode_images, pixel_checksums, regenerated_batches


def _decision_columns(decisions: dict[str, np.ndarray]) -> dict[str, pa.Array]:
    return {
        "top1": pa.array(decisions["top1"].astype(np.int16), pa.int16()),
        "top1_16": pa.array(decisions["top1_16"].astype(np.int8), pa.int8()),
        "p_top1": pa.array(decisions["p_top1"].astype(np.float32), pa.float32()),
    }


@functools.lru_cache(maxsize=1)
def _loaded_model(model: str, device: str, models_dir: str | None):
    """The model, loaded once per process for a job that classifies several shards."""
    import torch

    from vcrbench.models import load_model

    return load_model(model, torch.device(device), models_dir=models_dir)


@dataclass(frozen=True)
class Inference:
    """How one model is run on images.

    Attributes:
        model: the model name (:data:`vcrbench.models.MODEL_FORMS`).
        device: ``auto``, ``cpu`` or ``cuda``.
        batch_size: images per forward pass.
        precision: ``fp32`` or ``bf16`` (CUDA only).
        models_dir: where ``finetuned:<name>`` checkpoints live (``results/<run>/models``).
        engine: ``auto``, ``eager`` or ``openvino`` (:mod:`vcrbench.models.engines`).
        compile: wrap the PyTorch model in ``torch.compile``.
        cache_dir: where converted models are cached (None: the engines' default folder).
    """

    model: str
    device: str = "auto"
    batch_size: int = 64
    precision: str = "fp32"
    models_dir: str | None = None
    engine: str = "eager"
    compile: bool = False
    cache_dir: str | None = None

    @classmethod
    def from_config(cls, model: str, device: str, inference: dict, models_dir: str | None
                    ) -> Inference:
        """From a model name, the config's ``device`` and ``inference`` section (its
        ``cache_dir`` defaults to ``<models_dir>/engine-cache``)."""
        cache_dir = inference.get("cache_dir") or (
            f"{models_dir}/engine-cache" if models_dir else None
        )
        return cls(model, device, int(inference["batch_size"]), inference["precision"],
                   models_dir, inference.get("engine", "auto"),
                   bool(inference.get("compile", False)), cache_dir)

    def decisions(self, images: np.ndarray) -> dict[str, pa.Array]:
        """Load the model on the resolved device (once per process) and classify
        ``(N, 224, 224, 3)`` uint8 images on the configured engine: the decision columns of the
        module docstring."""
        return self.streamed_decisions([images], len(images))

    def streamed_decisions(self, chunks: Iterable[np.ndarray], total: int
                           ) -> dict[str, pa.Array]:
        """:meth:`decisions` of uint8 image chunks from an iterable (a generator that makes
        them: on CUDA it runs in a loader thread, overlapped with the forward passes), ``total``
        images in all; the same decisions as for the chunks concatenated."""
        from vcrbench.models import resolve_device
        from vcrbench.models.inference import predict_stream

        device = resolve_device(self.device)
        model = _loaded_model(self.model, str(device), self.models_dir)
        decisions = predict_stream(
            model, chunks, total, batch_size=self.batch_size, precision=self.precision,
            device=device, engine=self.engine, compile=self.compile, cache_dir=self.cache_dir,
        )
        return _decision_columns(decisions)


def predict_clean(index: pa.Table, inference: Inference,
                  clean: PreparedImages | DecodedImages | None = None) -> pa.Table:
    """Decisions of one model on every clean image of the index (read from ``clean``, the
    prepared-image store, or decoded here when it is None)."""
    clean = DecodedImages(index) if clean is None else clean
    images = clean.images(index.column("image_id").to_pylist())
    return pa.table({"image_id": index.column("image_id"), **inference.decisions(images)})


def predict_scored(
    scored: pa.Table,
    inference: Inference,
    *,
    samples: pa.Table | None = None,
    clean: PreparedImages | DecodedImages | None = None,
    corruption_device: str = "cpu",
    batch_size: int = 32,
) -> pa.Table:
    """Decisions of one model on the corrupted images of a scored shard.

    Stored pixels are checked against their checksums before use. A shard stored without pixels
    needs its ``samples`` shard and the ``clean`` images: each corrupted image is made again on
    ``corruption_device`` (the device the scoring job used) and checked against its checksum
    (:func:`~vcrbench.evaluation.scoring.regenerated_batches`), batch by batch as the model
    classifies them (on CUDA the next batch is made while the model runs on this one).
    """
    if "image" not in scored.column_names:
        if samples is None or clean is None:
            raise VcrbenchError("this scored shard was stored without pixels: its samples shard "
                                "and the prepared images are needed to make them again")
        batches = regenerated_batches(scored, samples, clean, batch_size=batch_size,
                                      device=corruption_device)
        decisions = inference.streamed_decisions(batches, scored.num_rows)
        return pa.table({"sample_id": scored.column("sample_id"), **decisions})
    images = decode_images(scored.column("image"))
    for sample_id, made, checksum in zip(
        scored.column("sample_id").to_pylist(),
        pixel_checksums(images),
        scored.column("checksum").to_pylist(),
        strict=True,
    ):
        if made != checksum:
            raise VcrbenchError(
                f"sample {sample_id}: stored corrupted image does not match its checksum; "
                "delete the scored shard and re-run to regenerate it"
            )
    return pa.table({"sample_id": scored.column("sample_id"), **inference.decisions(images)})
