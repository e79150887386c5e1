"""Inference engines: what runs a loaded model's forward pass (eager PyTorch or OpenVINO).

``inference.engine`` (config) / ``engine=`` (:func:`vcrbench.models.predict`):

- ``eager``: the torch module itself (the reference); with ``compile=True`` wrapped in
  ``torch.compile`` (inductor, any device; the first batch of each shape compiles, tens of
  seconds on the CPU).
- ``openvino``: the module converted to an OpenVINO model (``openvino.convert_model``, traced on
  the model's preprocessed input) and compiled for the CPU in float32 (``INFERENCE_PRECISION_HINT
  f32``: OpenVINO's own default on CPUs with bf16 instructions is bfloat16), one inference
  stream, ``torch.get_num_threads()`` threads, batches run in pieces of :data:`OPENVINO_PIECE`
  images. CPU only.
- ``auto``: ``openvino`` on the CPU, ``eager`` on CUDA (or with ``compile=True``).

Measured on 2 AVX-512 cores (``benchmarks/bench_inference.py --engines eager,openvino``), the
OpenVINO forward pass of EfficientNet-Lite0 is several times faster than eager PyTorch, its
top-1 decisions agree with eager PyTorch on the shared ImageNet sample and a corrupted shard
(figures in docs/architecture.md), and its outputs do not depend on the batch composition.

Checked conversion. Every OpenVINO model is checked against the eager module before use, on a
probe of :data:`PROBE_IMAGES` fixed images through the model's preprocessing: same top-1 and
``max |logit difference| <= PROBE_TOLERANCE * max(1, max |logit|)``. A model that cannot be
converted (tracing fails, several outputs, data-dependent control flow that the trace froze) is
run eagerly with a logged warning under ``auto``, and is a :class:`VcrbenchError` when
``openvino`` was asked for explicitly (or openvino is not installed).

Cache. A converted model is stored as OpenVINO IR (``model.xml`` + ``model.bin``, float32
weights, with ``key.json``) in ``<cache_dir>/<model>-<key>/``, where the key is the SHA-256 of
the model name, a checksum of every parameter and buffer (names, dtypes, shapes, bytes), the
source code of the module's classes, the input shape and the torch / openvino / cache format
versions. A new entry is written to a temporary folder and renamed into place (atomic; when two
jobs race, the first rename wins and the other's copy is discarded). An entry that cannot be
read, or whose outputs fail the check below, is converted again. ``cache_dir`` defaults to
``$VCRBENCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/vcrbench/engines``
(``~/.cache/vcrbench/engines``); the workflow passes ``results/<run>/models/engine-cache``.

The engine built for a :class:`~vcrbench.models.registry.LoadedModel` is kept on it and reused by
later calls with the same settings and torch thread count while its parameters are unchanged
(same storage, no in-place update).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
import os
import shutil
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from vcrbench.errors import VcrbenchError
from vcrbench.models.preprocess import apply_preprocessing
from vcrbench.models.registry import LoadedModel

log = logging.getLogger(__name__)

ENGINES = ("auto", "eager", "openvino")
#: Bumped whenever the stored IR or its key changes meaning (old entries are then ignored).
CACHE_FORMAT = 1
#: Variable naming the engine cache folder when no ``cache_dir`` is given.
CACHE_DIR_VARIABLE = "VCRBENCH_CACHE_DIR"
#: Images of the conversion check (one noise image, one smooth gradient).
PROBE_IMAGES = 2
#: Largest logit difference of the conversion check, relative to the logits' scale. Float32
#: reorderings give about 1e-5 on EfficientNet-Lite0; a wrongly traced graph gives O(1).
PROBE_TOLERANCE = 1e-3
OPENVINO_PIN = "openvino==2026.4.1"
#: Images per OpenVINO inference: a batch runs in pieces this large (its activations then stay
#: in the CPU caches: Lite0 ran 1.1-1.2x faster in pieces of 4-8 than in one piece of 64 on 2
#: quiet cores, 1.4x on busy ones, and a job's peak memory fell from 1.8 to 1.3 GB).
#: OpenVINO's outputs do not depend on the batch size (tested).
OPENVINO_PIECE = 8


class EngineUnavailable(Exception):
    """This engine cannot run this model (the message says why)."""


@dataclass
class Engine:
    """A model's forward pass, bound to one device.

    Attributes:
        name: ``eager``, ``eager+compile`` or ``openvino``.
        description: one line for the job's log.
        forward: preprocessed float32 (B, C, H, W) on the device -> (B, 1000) logits tensor (on
            the device for eager, on the CPU for openvino).
        autocast_ok: whether bf16 autocast applies (eager on CUDA).
    """

    name: str
    description: str
    forward: Callable[[torch.Tensor], torch.Tensor]
    autocast_ok: bool = True


def check_engine(engine: str) -> str:
    """``engine`` if it is one of :data:`ENGINES`, else a :class:`VcrbenchError`."""
    if engine not in ENGINES:
        raise VcrbenchError(
            f"inference.engine: {engine!r} is not one of {', '.join(ENGINES)}"
        )
    return engine


def openvino_available() -> bool:
    """Whether the ``openvino`` package imports."""
    try:
        import openvino  # noqa: F401
    except ImportError:
        return False
    return True


def default_cache_dir() -> Path:
    """``$VCRBENCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/vcrbench/engines`` (``~/.cache/...``)."""
    if os.environ.get(CACHE_DIR_VARIABLE):
        return Path(os.environ[CACHE_DIR_VARIABLE]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "vcrbench" / "engines"


def weights_checksum(module: torch.nn.Module) -> str:
    """SHA-256 of every parameter and buffer: names, dtypes, shapes and bytes (state-dict order)."""
    digest = hashlib.sha256()
    for name, tensor in module.state_dict(keep_vars=False).items():
        if not isinstance(tensor, torch.Tensor):
            continue
        data = tensor.detach().to("cpu").contiguous().reshape(-1)
        digest.update(f"{name}|{data.dtype}|{tuple(data.shape)}|".encode())
        digest.update(data.view(torch.uint8).numpy().tobytes() if data.numel() else b"")
    return digest.hexdigest()


def _class_source(cls: type) -> str:
    """The source of a class; for one inspect cannot find (a ``file:`` model's module is not in
    ``sys.modules``), the whole files its methods were compiled from; else nothing."""
    try:
        return inspect.getsource(cls)
    except (OSError, TypeError):
        methods = [f for f in vars(cls).values() if inspect.isfunction(f)]
        files = sorted({f.__code__.co_filename for f in methods})
        return "".join(Path(f).read_text(errors="replace") for f in files if os.path.isfile(f))


def code_checksum(module: torch.nn.Module) -> str:
    """SHA-256 of the source code of the module's classes (a changed ``forward`` changes the
    graph), each with its qualified name."""
    digest = hashlib.sha256()
    for cls in sorted({type(m) for m in module.modules()}, key=lambda c: c.__qualname__):
        digest.update(f"{cls.__module__}.{cls.__qualname__}\n{_class_source(cls)}\n".encode())
    return digest.hexdigest()


def _parameter_state(module: torch.nn.Module) -> tuple:
    """Where the parameters live and their in-place versions: changes when weights change."""
    return tuple(
        (id(t), -1) if isinstance(t, torch.nn.parameter.UninitializedTensorMixin)
        else (t.data_ptr(), t._version)
        for t in (*module.parameters(), *module.buffers())
    )


def probe_batch(model: LoadedModel) -> torch.Tensor:
    """:data:`PROBE_IMAGES` fixed uint8 images through the model's preprocessing: float32
    (2, C, H, W) on the CPU (its shape is the model's input shape)."""
    noise = np.random.default_rng(20251125).integers(0, 256, (224, 224, 3), dtype=np.uint8)
    ramp = np.linspace(0, 255, 224, dtype=np.float32)
    gradient = np.stack(
        [np.add.outer(ramp, ramp) / 2, np.add.outer(ramp, 255 - ramp) / 2,
         np.broadcast_to(ramp[:, None], (224, 224))], axis=-1
    ).astype(np.uint8)
    images = torch.from_numpy(np.stack([noise, gradient])).permute(0, 3, 1, 2)
    with torch.no_grad():
        return apply_preprocessing(model.preprocessing, images.contiguous().float().div_(255.0))


def compare_logits(reference: torch.Tensor, other: torch.Tensor, tolerance: float) -> str | None:
    """None when ``other`` matches ``reference`` (same shape and top-1, max abs difference at most
    ``tolerance * max(1, max |reference|)``), else what differs."""
    reference, other = reference.float().cpu(), other.float().cpu()
    if reference.shape != other.shape:
        return f"output shape {tuple(other.shape)} instead of {tuple(reference.shape)}"
    scale = max(1.0, float(reference.abs().max()))
    difference = float((reference - other).abs().max())
    if not difference <= tolerance * scale:
        return f"logits differ by up to {difference:.3g} (allowed {tolerance * scale:.3g})"
    if not torch.equal(reference.argmax(1), other.argmax(1)):
        return "top-1 differs"
    return None


# --------------------------------------------------------------------------- eager


def _eager(model: LoadedModel, device: torch.device, compile: bool) -> Engine:
    module = model.module
    # Channels-last roughly doubles CPU convolution throughput (benchmarks/bench_inference.py);
    # modules with lazy, still uninitialised parameters keep their layout.
    if not any(
        isinstance(p, torch.nn.parameter.UninitializedParameter) for p in module.parameters()
    ):
        module.to(memory_format=torch.channels_last)
    run = torch.compile(module) if compile else module

    def forward(x: torch.Tensor) -> torch.Tensor:
        if x.dim() == 4:
            x = x.contiguous(memory_format=torch.channels_last)
        return run(x)

    name = "eager+compile" if compile else "eager"
    what = "torch.compile (inductor)" if compile else "eager PyTorch"
    return Engine(name, f"{model.name}: {what} on {device}, channels-last", forward)


# --------------------------------------------------------------------------- OpenVINO


def _cache_entry(model: LoadedModel, shape: tuple[int, ...], cache_dir: Path) -> tuple[Path, dict]:
    import openvino

    key = {
        "format": CACHE_FORMAT,
        "model": model.name,
        "weights_sha256": weights_checksum(model.module),
        "code_sha256": code_checksum(model.module),
        "input_shape": ["batch", *shape],
        "torch": torch.__version__,
        "openvino": openvino.__version__,
    }
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]
    readable = "".join(c if c.isalnum() or c in "-_." else "_" for c in model.name)[:60]
    return cache_dir / f"{readable}-{digest}", key


def _convert(model: LoadedModel, probe: torch.Tensor):  # -> openvino.Model
    import openvino

    try:
        # OpenVINO traces with TorchScript, which torch marks deprecated on every call; the
        # probe check (not the tracer's own warnings) decides whether the trace is usable.
        with torch.no_grad(), warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=FutureWarning, module="torch.jit")
            converted = openvino.convert_model(model.module, example_input=probe[:1])
        if len(converted.inputs) != 1 or len(converted.outputs) != 1:
            raise EngineUnavailable(
                f"the converted model has {len(converted.inputs)} inputs and "
                f"{len(converted.outputs)} outputs (one of each is needed)"
            )
        converted.reshape([-1, *probe.shape[1:]])
    except EngineUnavailable:
        raise
    except Exception as error:  # tracing and conversion raise many types
        raise EngineUnavailable(
            f"conversion failed ({type(error).__name__}: {str(error).splitlines()[0][:300]})"
        ) from None
    return converted


def _store(converted, entry: Path, key: dict) -> None:
    """Write the IR to a temporary sibling folder and rename it to ``entry`` (atomic); a cache
    that cannot be written is logged, not fatal."""
    import openvino

    tmp = entry.with_name(f".{entry.name}.tmp-{os.getpid()}")
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        openvino.save_model(converted, str(tmp / "model.xml"), compress_to_fp16=False)
        (tmp / "key.json").write_text(json.dumps(key, indent=2, sort_keys=True) + "\n")
        for file in tmp.iterdir():
            with open(file, "rb") as handle:
                os.fsync(handle.fileno())
        try:
            os.rename(tmp, entry)
        except OSError:
            if not (entry / "key.json").is_file():  # not another job's complete entry: retry
                shutil.rmtree(entry, ignore_errors=True)
                os.rename(tmp, entry)
    except OSError as error:
        log.warning("%s: cannot write the engine cache %s (%s); converting in every job",
                    key["model"], entry, error)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _compiled_forward(core, converted) -> Callable[[torch.Tensor], torch.Tensor]:
    """Compile an OpenVINO model for the CPU (module docstring): its forward function."""
    try:
        compiled = core.compile_model(
            converted,
            "CPU",
            {
                "INFERENCE_PRECISION_HINT": "f32",
                "PERFORMANCE_HINT": "LATENCY",
                "NUM_STREAMS": 1,
                "INFERENCE_NUM_THREADS": max(1, torch.get_num_threads()),
                "ENABLE_CPU_PINNING": False,
            },
        )
    except Exception as error:  # the plugin raises RuntimeError subclasses of its own
        raise EngineUnavailable(f"OpenVINO cannot compile it ({error})") from None
    request = compiled.create_infer_request()

    def forward(x: torch.Tensor) -> torch.Tensor:
        array = np.ascontiguousarray(x.detach().to("cpu", torch.float32).numpy())
        pieces = [
            request.infer({0: array[start : start + OPENVINO_PIECE]})[0].copy()
            for start in range(0, len(array), OPENVINO_PIECE)
        ]
        return torch.from_numpy(np.concatenate(pieces))

    return forward


def _openvino(model: LoadedModel, device: torch.device, cache_dir: Path | None) -> Engine:
    if device.type != "cpu":
        raise EngineUnavailable(f"openvino runs on the CPU only, not on {device}")
    try:
        import openvino
    except ImportError:
        raise EngineUnavailable(f"openvino is not installed (pip install {OPENVINO_PIN})") from None
    probe = probe_batch(model)
    with torch.no_grad():  # also initialises lazy modules before their weights are hashed
        reference = model.module(probe)
    entry, key = _cache_entry(model, tuple(probe.shape[1:]), cache_dir or default_cache_dir())
    core = openvino.Core()
    if (entry / "key.json").is_file():
        try:
            forward = _compiled_forward(core, core.read_model(str(entry / "model.xml")))
            problem = compare_logits(reference, forward(probe), PROBE_TOLERANCE)
        except Exception as error:  # a damaged entry
            problem = f"{type(error).__name__}: {error}"
        if problem is None:
            return _openvino_engine(model, forward, f"cached {entry}")
        log.warning("%s: engine cache %s is unusable (%s); converting again",
                    model.name, entry, problem)
        shutil.rmtree(entry, ignore_errors=True)
    converted = _convert(model, probe)
    forward = _compiled_forward(core, converted)
    problem = compare_logits(reference, forward(probe), PROBE_TOLERANCE)
    if problem is not None:
        raise EngineUnavailable(f"the converted model disagrees with PyTorch: {problem}")
    _store(converted, entry, key)
    return _openvino_engine(model, forward, f"converted, cached in {entry}")


def _openvino_engine(
    model: LoadedModel, forward: Callable[[torch.Tensor], torch.Tensor], source: str
) -> Engine:
    import openvino

    return Engine(
        "openvino",
        f"{model.name}: OpenVINO {openvino.__version__} on the CPU, float32, "
        f"{torch.get_num_threads()} threads, pieces of {OPENVINO_PIECE} images ({source})",
        forward,
        autocast_ok=False,
    )


# --------------------------------------------------------------------------- choice


def engine_for(
    model: LoadedModel,
    device: torch.device,
    engine: str = "auto",
    *,
    compile: bool = False,
    cache_dir: str | Path | None = None,
) -> Engine:
    """The engine that runs ``model`` on ``device`` (module docstring), built once per model.

    ``model.module`` must already be on ``device``.
    """
    check_engine(engine)
    if compile and engine == "openvino":
        raise VcrbenchError(
            "inference.compile: true uses torch.compile, which runs with engine eager (or auto), "
            "not openvino"
        )
    wanted = engine
    if engine == "auto":
        wanted = "openvino" if device.type == "cpu" and not compile else "eager"
    memo_key = (wanted, str(device), bool(compile), str(cache_dir or ""),
                torch.get_num_threads())
    state = _parameter_state(model.module)
    cached = model.engines.get(memo_key)
    if cached is not None and cached[0] == state:
        return cached[1]
    if wanted == "openvino":
        try:
            built = _openvino(model, device, Path(cache_dir) if cache_dir else None)
        except EngineUnavailable as why:
            if engine == "openvino":
                raise VcrbenchError(
                    f"{model.name}: inference.engine openvino cannot run it: {why}; "
                    "use inference.engine eager (or auto, which falls back to eager)"
                ) from None
            log.warning("%s: OpenVINO cannot run it (%s); running eager PyTorch", model.name, why)
            built = _eager(model, device, compile=False)
    else:
        built = _eager(model, device, compile)
    log.info("inference engine: %s", built.description)
    model.engines[memo_key] = (_parameter_state(model.module), built)
    return built
