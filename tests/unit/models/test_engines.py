"""Inference engines (eager, OpenVINO, torch.compile), their cache, and the loader thread.

The eager PyTorch forward pass is the reference: OpenVINO must give the same top-1 and
probabilities within float32 reordering error. Tolerance of ``p_top1``: :data:`P_TOLERANCE`
(1e-4), about 10x the largest difference measured between the two engines on the shared sample's
1,000 images and 400 corrupted ones (``benchmarks/bench_inference.py --agreement``: below 1e-5);
a wrongly converted graph differs by O(0.1).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers.paths import IMAGENET_SAMPLE

from vcrbench.errors import VcrbenchError
from vcrbench.models import load_model, predict, predict_stream
from vcrbench.models.engines import (
    code_checksum,
    engine_for,
    openvino_available,
    weights_checksum,
)
from vcrbench.models.inference import host_batches, in_thread

P_TOLERANCE = 1e-4
needs_openvino = pytest.mark.skipif(not openvino_available(), reason="openvino is not installed")

TINY_CONV = '''
import torch


def build_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, stride=2), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(), torch.nn.Linear(8, 1000),
    )


input_size = 32
'''

#: Tracing freezes the branch of the example batch (one image); a batch of two goes the other way.
SHAPE_BRANCH = '''
import torch


class Branchy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.one = torch.nn.Linear(3, 1000)
        self.many = torch.nn.Linear(3, 1000)

    def forward(self, x):
        pooled = x.mean(dim=(2, 3))
        return self.one(pooled) if x.shape[0] == 1 else self.many(pooled)


model = Branchy()
input_size = 16
'''


def _images(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (n, 224, 224, 3), dtype=np.uint8)


def _model_file(tmp_path: Path, source: str, name: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    return f"file:{path}"


def _same(a: dict, b: dict) -> bool:
    return all(a[key].tobytes() == b[key].tobytes() for key in ("top1", "top1_16", "p_top1"))


# --------------------------------------------------------------------------- OpenVINO


@needs_openvino
def test_openvino_matches_eager_and_is_cached(tmp_path: Path, caplog) -> None:
    name = _model_file(tmp_path, TINY_CONV, "conv")
    cache = tmp_path / "cache"
    images = _images(7)
    model = load_model(name)
    eager = predict(model, images, batch_size=4)
    with caplog.at_level(logging.INFO, "vcrbench.models.engines"):
        converted = predict(model, images, batch_size=4, engine="openvino", cache_dir=cache)
    assert "converted, cached in" in caplog.text
    np.testing.assert_array_equal(converted["top1"], eager["top1"])
    np.testing.assert_array_equal(converted["top1_16"], eager["top1_16"])
    np.testing.assert_allclose(converted["p_top1"], eager["p_top1"], rtol=0, atol=P_TOLERANCE)
    (entry,) = cache.iterdir()
    assert sorted(f.name for f in entry.iterdir()) == ["key.json", "model.bin", "model.xml"]
    assert weights_checksum(model.module) in (entry / "key.json").read_text()

    # a fresh load reads the cached IR; other batch sizes give the same bytes
    caplog.clear()
    with caplog.at_level(logging.INFO, "vcrbench.models.engines"):
        again = predict(load_model(name), images, batch_size=3, engine="auto", cache_dir=cache)
    assert f"(cached {entry})" in caplog.text
    assert _same(again, converted)
    assert len(list(cache.iterdir())) == 1

    # a damaged entry is converted again
    (entry / "model.xml").write_text("<net>")
    caplog.clear()
    with caplog.at_level(logging.INFO, "vcrbench.models.engines"):
        repaired = predict(load_model(name), images, batch_size=4, engine="auto", cache_dir=cache)
    assert "is unusable" in caplog.text and "converted, cached in" in caplog.text
    assert _same(repaired, converted)

    # changed weights: a new cache entry, and the engine on the model is rebuilt
    with torch.no_grad():
        model.module[-1].bias[:] = torch.arange(1000.0) / 100
    changed = predict(model, images, batch_size=4, engine="openvino", cache_dir=cache)
    assert len(list(cache.iterdir())) == 2
    assert (changed["top1"] == 999).all()


@needs_openvino
def test_openvino_refuses_a_wrongly_traced_model(tmp_path: Path, caplog) -> None:
    name = _model_file(tmp_path, SHAPE_BRANCH, "branchy")
    model = load_model(name)
    images = _images(4)
    with pytest.raises(VcrbenchError, match="openvino cannot run it.*disagrees"):
        predict(model, images, engine="openvino", cache_dir=tmp_path / "cache")
    with caplog.at_level(logging.WARNING, "vcrbench.models.engines"):
        fallback = predict(model, images, batch_size=2, engine="auto", cache_dir=tmp_path / "c")
    assert "running eager PyTorch" in caplog.text
    assert _same(fallback, predict(model, images, batch_size=2))


@pytest.mark.shared
@needs_openvino
@pytest.mark.skipif(not IMAGENET_SAMPLE.is_dir(), reason=f"{IMAGENET_SAMPLE} is absent")
def test_openvino_agrees_with_eager_on_real_images(tmp_path: Path) -> None:
    """Lite0 on 6 sample images and 6 gaussian-noise / gaussian-blur versions of them."""
    from vcrbench.corruptions import corrupt_uint8
    from vcrbench.data.datasets import prepare_image

    files = sorted(IMAGENET_SAMPLE.glob("*.JPEG"))[::167]
    clean = np.stack([prepare_image(f) for f in files])
    noisy = corrupt_uint8("gaussian_noise", clean[:3], {"sigma": np.full(3, 0.2)}, [1, 2, 3],
                          torch.device("cpu"))
    blurred = corrupt_uint8("gaussian_blur", clean[3:], {"sigma": np.full(3, 3.0)}, [4, 5, 6],
                            torch.device("cpu"))
    images = np.concatenate([clean, noisy, blurred])
    model = load_model("efficientnet-lite0")
    eager = predict(model, images, batch_size=6)
    converted = predict(model, images, batch_size=6, engine="openvino", cache_dir=tmp_path)
    np.testing.assert_array_equal(converted["top1"], eager["top1"])
    np.testing.assert_array_equal(converted["top1_16"], eager["top1_16"])
    np.testing.assert_allclose(converted["p_top1"], eager["p_top1"], rtol=0, atol=P_TOLERANCE)


SUBCLASS = '''
import torch


class Net(torch.nn.Linear):
    def forward(self, x):
        return super().forward(x.mean(dim=(2, 3)))


model = Net(3, 1000)
'''


def test_code_checksum_sees_a_file_models_source(tmp_path: Path) -> None:
    name = _model_file(tmp_path, SUBCLASS, "net")
    first = code_checksum(load_model(name).module)
    assert code_checksum(load_model(name).module) == first
    (tmp_path / "net.py").write_text(SUBCLASS.replace("x.mean", "2 * x.mean"))
    assert code_checksum(load_model(name).module) != first


def test_engine_choice_and_errors(tmp_path: Path) -> None:
    model = load_model(_model_file(tmp_path, TINY_CONV, "conv"))
    cuda = torch.device("cuda")  # only named: neither engine touches the device here
    assert engine_for(model, cuda, "auto").name == "eager"
    with pytest.raises(VcrbenchError, match="openvino cannot run it.*CPU only"):
        engine_for(model, cuda, "openvino")
    with pytest.raises(VcrbenchError, match="inference.engine: 'onnx' is not one of"):
        predict(model, _images(1), engine="onnx")
    with pytest.raises(VcrbenchError, match="inference.compile"):
        predict(model, _images(1), engine="openvino", compile=True)
    cpu = torch.device("cpu")
    first = engine_for(model, cpu, "eager")
    assert engine_for(model, cpu, "eager") is first  # kept on the model


def test_compile_wraps_the_eager_module(tmp_path: Path, monkeypatch) -> None:
    """The plumbing of ``compile=True`` (dynamo with its eager backend: inductor's C++ build
    would take tens of seconds)."""
    calls = []
    real = torch.compile

    def fake_compile(module):
        calls.append(module)
        return real(module, backend="eager")

    monkeypatch.setattr(torch, "compile", fake_compile)
    model = load_model(_model_file(tmp_path, TINY_CONV, "conv"))
    images = _images(3)
    compiled = predict(model, images, batch_size=3, compile=True)
    assert calls == [model.module]
    assert _same(compiled, predict(model, images, batch_size=3))


# --------------------------------------------------------------------------- loader thread


def test_prefetch_and_regrouping_keep_results(tmp_path: Path) -> None:
    model = load_model(_model_file(tmp_path, TINY_CONV, "conv"))
    images = _images(11, seed=3)
    plain = predict(model, images, batch_size=4, prefetch=False)
    assert _same(plain, predict(model, images, batch_size=4, prefetch=True))

    def chunks():  # uneven chunks, one buffer reused by the producer
        buffer = np.empty((5, 224, 224, 3), np.uint8)
        for start, stop in ((0, 3), (3, 8), (8, 9), (9, 11)):
            buffer[: stop - start] = images[start:stop]
            yield buffer[: stop - start]

    streamed = predict_stream(model, chunks(), len(images), batch_size=4, prefetch=True)
    assert _same(plain, streamed)


def test_host_batches_order_and_pinning(monkeypatch) -> None:
    pinned = []

    def fake_pin(self):
        pinned.append(self.shape[0])
        return self

    monkeypatch.setattr(torch.Tensor, "pin_memory", fake_pin)
    chunks = [np.full((n, 2, 2, 3), i, np.uint8) for i, n in enumerate((2, 3, 1))]
    batches = list(host_batches(chunks, 4, pin=True))
    assert [b.shape for b in batches] == [(4, 3, 2, 2), (2, 3, 2, 2)]
    assert all(b.is_contiguous() for b in batches)
    assert torch.cat(batches)[:, 0, 0, 0].tolist() == [0, 0, 1, 1, 1, 2]
    assert pinned == [4, 4]  # allocated whole, then filled


def test_in_thread_order_errors_and_stop() -> None:
    assert list(in_thread(iter(range(50)), depth=2)) == list(range(50))

    def failing():
        yield 1
        raise ValueError("producer broke")

    with pytest.raises(ValueError, match="producer broke"):
        list(in_thread(failing()))

    produced = []

    def endless():
        i = 0
        while True:
            produced.append(i)
            yield i
            i += 1

    stream = in_thread(endless(), depth=2)
    assert next(stream) == 0
    stream.close()  # joins the thread
    assert not [t for t in threading.enumerate() if t.name == "vcrbench-loader"]
    assert len(produced) <= 5


def test_inference_from_config_passes_the_engine() -> None:
    from vcrbench.evaluation.predictions import Inference

    section = {"batch_size": 8, "precision": "fp32", "engine": "auto", "compile": False,
               "cache_dir": None}
    inference = Inference.from_config("efficientnet-lite0", "cpu", section, "results/r/models")
    assert (inference.engine, inference.compile) == ("auto", False)
    assert inference.cache_dir == "results/r/models/engine-cache"
    section.update(engine="eager", compile=True, cache_dir="/tmp/engines")
    inference = Inference.from_config("efficientnet-lite0", "cpu", section, None)
    assert (inference.engine, inference.compile, inference.cache_dir) == (
        "eager", True, "/tmp/engines"
    )
