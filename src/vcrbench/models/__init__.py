"""Models and inference: a registry of ImageNet classifiers selected by a config string.

Public API (imported lazily, so that ``parse_model_name`` for config validation does not
import torch)::

    load_model(name, device="cpu") -> LoadedModel
    parse_model_name(name) -> ModelSpec            # validation without loading
    known_model_kinds() -> list[str]
    predict(model, images, *, batch_size=64, precision="fp32", device=None,
            engine="eager", compile=False, cache_dir=None, prefetch=None) -> dict
    predict_stream(model, chunks, total, **same options) -> dict   # chunks from a generator
    ENGINES = ("auto", "eager", "openvino")                        # vcrbench.models.engines
    predict_files(model_name, paths, *, device="auto", ...) -> list[dict]
    resolve_device("auto" | "cpu" | "cuda") -> torch.device
    decide_16(probabilities) -> (B,) int8;  CATEGORIES16;  category16_of_label(label)

Model names, preprocessing per model: :mod:`vcrbench.models.registry`; inference engines and
their cache: :mod:`vcrbench.models.engines`; loaders per source:
:mod:`~vcrbench.models.sources`, :mod:`~vcrbench.models.efficientnet_lite`,
:mod:`~vcrbench.models.finetuned` and :mod:`~vcrbench.models.trained` (models trained here,
from the checkpoints the training package writes; their one format and reader:
:mod:`~vcrbench.models.checkpoints`).

May import: :mod:`vcrbench.core`, :mod:`vcrbench.data` (preparation, label spaces).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vcrbench.data.imagenet16 import CATEGORIES16, category16_of_label, decide_16
    from vcrbench.models.engines import ENGINES
    from vcrbench.models.inference import (
        format_predictions,
        predict,
        predict_files,
        predict_stream,
        resolve_device,
    )
    from vcrbench.models.preprocess import Preprocessing
    from vcrbench.models.registry import (
        MODEL_FORMS,
        LoadedModel,
        ModelSpec,
        known_model_kinds,
        load_model,
        parse_model_name,
    )

_WHERE = {
    "CATEGORIES16": "vcrbench.data.imagenet16",
    "category16_of_label": "vcrbench.data.imagenet16",
    "decide_16": "vcrbench.data.imagenet16",
    "ENGINES": "vcrbench.models.engines",
    "format_predictions": "vcrbench.models.inference",
    "predict": "vcrbench.models.inference",
    "predict_files": "vcrbench.models.inference",
    "predict_stream": "vcrbench.models.inference",
    "resolve_device": "vcrbench.models.inference",
    "Preprocessing": "vcrbench.models.preprocess",
    "MODEL_FORMS": "vcrbench.models.registry",
    "LoadedModel": "vcrbench.models.registry",
    "ModelSpec": "vcrbench.models.registry",
    "known_model_kinds": "vcrbench.models.registry",
    "load_model": "vcrbench.models.registry",
    "parse_model_name": "vcrbench.models.registry",
}
__all__ = [
    "CATEGORIES16",
    "ENGINES",
    "MODEL_FORMS",
    "LoadedModel",
    "ModelSpec",
    "Preprocessing",
    "category16_of_label",
    "decide_16",
    "format_predictions",
    "known_model_kinds",
    "load_model",
    "parse_model_name",
    "predict",
    "predict_files",
    "predict_stream",
    "resolve_device",
]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'vcrbench.models' has no attribute {name!r}")
