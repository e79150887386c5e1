"""Model loaders per source: torchvision, timm and user files (RobustBench's zoo:
:mod:`vcrbench.models.robustbench_zoo`; OpenCLIP: :mod:`vcrbench.models.openclip_zoo`).

Every loader returns ``(module, preprocessing, description)`` for a 1000-class ImageNet
classifier in eval mode on the CPU. Nothing is downloaded at run time: pretrained weights are
looked up in the local caches first and a missing file raises :class:`VcrbenchError` naming the
expected path and a one-line command that fetches it (run it where there is internet, with the
same ``TORCH_HOME`` / ``HF_HOME``, e.g. on a cluster's login node). While a model is built,
:func:`no_downloads` also blocks torch-hub downloads and puts the Hugging Face hub in offline
mode, so a download that a library would start on its own fails loudly instead.

Caches: torch hub checkpoints ``$TORCH_HOME/hub/checkpoints`` (default
``~/.cache/torch/hub/checkpoints``); Hugging Face ``$HF_HUB_CACHE`` or ``$HF_HOME/hub`` (default
``~/.cache/huggingface/hub``); OpenCLIP URL weights ``~/.cache/clip``.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import torch

from vcrbench.errors import VcrbenchError
from vcrbench.models.preprocess import (
    IMAGENET_MEAN,
    IMAGENET_STD,
    PreprocessFn,
    Preprocessing,
)
from vcrbench.models.random_init import init_seed, seeded_construction

Loaded = tuple[torch.nn.Module, PreprocessFn, str]



# --------------------------------------------------------------------------- caches and guards


def torch_checkpoints_dir() -> Path:
    """torch hub's checkpoint folder (honours ``TORCH_HOME`` at call time)."""
    return Path(torch.hub.get_dir()) / "checkpoints"


def hf_cache_dir() -> Path:
    """The Hugging Face hub cache (``HF_HUB_CACHE``, else ``HF_HOME/hub``), read at call time."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "huggingface"
    )
    return Path(home).expanduser() / "hub"


def _hf_cached(repo_id: str, filenames: list[str], revision: str | None = None) -> str | None:
    """Path of the first of ``filenames`` present in the local HF cache, or None."""
    from huggingface_hub import try_to_load_from_cache

    for filename in filenames:
        found = try_to_load_from_cache(
            repo_id, filename, cache_dir=str(hf_cache_dir()), revision=revision
        )
        if isinstance(found, str) and os.path.isfile(found):
            return found
    return None


def _hf_expected(repo_id: str, filename: str) -> str:
    return str(
        hf_cache_dir() / f"models--{repo_id.replace('/', '--')}" / "snapshots" / "<rev>" / filename
    )


class _DownloadBlocked(Exception):
    def __init__(self, url: str, target: str) -> None:
        super().__init__(f"download of {url} to {target} blocked")
        self.url, self.target = url, target


@contextlib.contextmanager
def no_downloads() -> Iterator[None]:
    """Block torch-hub downloads and set the Hugging Face hub offline for the duration."""

    def refuse(url: str, dst: str, *args: object, **kwargs: object) -> None:
        raise _DownloadBlocked(url, dst)

    saved_env = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    saved_download = torch.hub.download_url_to_file
    hf_constants = None
    try:
        from huggingface_hub import constants as hf_constants
    except ImportError:
        pass
    saved_offline = getattr(hf_constants, "HF_HUB_OFFLINE", None)
    torch.hub.download_url_to_file = refuse
    os.environ.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    if hf_constants is not None:
        hf_constants.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        torch.hub.download_url_to_file = saved_download
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        if hf_constants is not None:
            hf_constants.HF_HUB_OFFLINE = saved_offline


def missing_weights(model: str, expected: str, command: str) -> VcrbenchError:
    """The error for pretrained weights that are not in the local cache."""
    return VcrbenchError(
        f"{model}: pretrained weights are not in the local cache (expected {expected}); vcrbench "
        "never downloads weights at run time. Fetch them once where there is internet, with the "
        f"same TORCH_HOME / HF_HOME (e.g. on a login node):\n    {command}\n"
        "or use a model whose weights ship with an installed package (efficientnet-lite0/1/2), "
        "or an architecture without weights for tests (torchvision:<arch>?weights=none)."
    )


def _missing_dependency(kind: str, package: str) -> VcrbenchError:
    return VcrbenchError(
        f"{kind}: models need the optional package {package}, which is not installed; "
        f"pip install {package}"
    )


def _check_1000(model: str, module: torch.nn.Module) -> None:
    classes = getattr(module, "num_classes", 1000)
    if isinstance(classes, int) and classes != 1000:
        raise VcrbenchError(
            f"{model}: has {classes} output classes; an ImageNet-1k classifier "
            "(1000 classes) is needed"
        )


# --------------------------------------------------------------------------- torchvision


def torchvision_archs() -> list[str]:
    """Names of torchvision's ImageNet classification architectures."""
    import torchvision.models as tvm

    return sorted(tvm.list_models(module=tvm))


def _torchvision_weights(arch: str, weights: str):  # -> torchvision.models.WeightsEnum member
    import torchvision.models as tvm

    enum = tvm.get_model_weights(arch)
    if weights == "default":
        return enum.DEFAULT
    try:
        return enum[weights]
    except KeyError:
        names = ", ".join(["default", "none", *(w.name for w in enum)])
        raise VcrbenchError(
            f"torchvision:{arch}: unknown weights {weights!r}; known: {names}"
        ) from None


def torchvision_weights_file(arch: str, weights: str) -> tuple[Path, str]:
    """The local file of torchvision weights (``default`` or a name) and the command that
    fetches it."""
    member = _torchvision_weights(arch, weights)
    path = torch_checkpoints_dir() / os.path.basename(urlparse(member.url).path)
    command = (
        f"python -c \"import torchvision; torchvision.models.get_model('{arch}', "
        f"weights='{member.name}')\""
    )
    return path, command


def load_torchvision(arch: str, weights: str = "default", seed: int = 0) -> Loaded:
    """torchvision ``<arch>`` with a weights enum member (``default``, ``none`` or a name).

    Preprocessing: the weights' own ``transforms()`` (crop size, mean/std, interpolation), with
    the 224 crop resized to their crop size; ``none``: 224, ImageNet mean/std, bilinear, and
    random weights seeded from the name and ``seed`` (:mod:`vcrbench.models.random_init`).
    """
    import torchvision.models as tvm

    model = f"torchvision:{arch}"
    if arch not in torchvision_archs():
        raise VcrbenchError(
            f"{model}: not a torchvision classification model; known: "
            + ", ".join(torchvision_archs())
        )
    if weights == "none":
        init = init_seed("torchvision", arch, seed)
        with seeded_construction(init):
            module = tvm.get_model(arch, weights=None)
        pre = Preprocessing(224, IMAGENET_MEAN, IMAGENET_STD, "bilinear")
        return module.eval(), pre, f"{model}, random initialisation (seed {init})"
    member = _torchvision_weights(arch, weights)
    path, command = torchvision_weights_file(arch, weights)
    if not path.is_file():
        raise missing_weights(model, str(path), command)
    try:
        with no_downloads():
            module = tvm.get_model(arch, weights=member)
    except _DownloadBlocked as blocked:
        raise missing_weights(model, blocked.target, command) from None
    transform = member.transforms()
    pre = Preprocessing(
        int(transform.crop_size[0]),
        tuple(transform.mean),
        tuple(transform.std),
        transform.interpolation.value,
    )
    return module.eval(), pre, f"{model}, weights {type(member).__name__}.{member.name}"


# --------------------------------------------------------------------------- timm


def check_timm_name(name: str) -> None:
    """Raise :class:`VcrbenchError` when timm does not know ``name`` (``arch`` or ``arch.tag``)."""
    try:
        import timm
        from timm.models import get_pretrained_cfg
    except ImportError:
        raise _missing_dependency("timm", "timm==1.0.31") from None
    if not timm.is_model(name):
        raise VcrbenchError(
            f"timm:{name}: timm has no such model; list them with "
            f"python -c \"import timm; print(timm.list_models('*{name.split('.')[0]}*'))\""
        )
    if "." in name:
        try:
            get_pretrained_cfg(name)
        except RuntimeError as error:
            raise VcrbenchError(f"timm:{name}: {error}") from None


def _timm_weights_file(name: str, cfg: object) -> str:
    """Local file of a timm pretrained config (HF cache, then torch hub), else the error."""
    from timm.models._hub import HF_WEIGHTS_NAME, hf_split

    hf_hub_id = getattr(cfg, "hf_hub_id", None)
    url = getattr(cfg, "url", None)
    expected: list[str] = []
    if getattr(cfg, "file", None):
        return str(cfg.file)
    if hf_hub_id:
        repo_id, revision = hf_split(hf_hub_id)
        filename = getattr(cfg, "hf_hub_filename", None) or HF_WEIGHTS_NAME
        candidates = [filename]
        if filename == HF_WEIGHTS_NAME:
            candidates.insert(0, "model.safetensors")
        elif filename.endswith((".bin", ".pth")):
            candidates.insert(0, filename[:-4] + ".safetensors")
        found = _hf_cached(repo_id, candidates, revision)
        if found:
            return found
        expected.append(_hf_expected(repo_id, " or ".join(candidates)))
    if url:
        path = torch_checkpoints_dir() / os.path.basename(urlparse(url).path)
        if path.is_file():
            return str(path)
        expected.append(str(path))
    if not expected:
        raise VcrbenchError(
            f"timm:{name}: timm has no pretrained weights for it; "
            f"use timm:{name}?pretrained=false or another tag"
        )
    raise missing_weights(
        f"timm:{name}",
        " or ".join(expected),
        f"python -c \"import timm; timm.create_model('{name}', pretrained=True)\"",
    )


def load_timm(name: str, pretrained: bool = True, seed: int = 0) -> Loaded:
    """timm model ``name`` (``arch`` or ``arch.tag``), pretrained from the local cache only, or
    with random weights seeded from the name and ``seed`` (:mod:`vcrbench.models.random_init`).

    Preprocessing: timm's data config of the model (input size, mean/std, interpolation); the
    224 crop is resized to its input size (timm's own ``crop_pct`` is not re-applied).
    """
    check_timm_name(name)
    import timm
    from timm.data import resolve_model_data_config
    from timm.models import get_pretrained_cfg

    model = f"timm:{name}"
    if pretrained:
        path = _timm_weights_file(name, get_pretrained_cfg(name))
        try:
            with no_downloads():
                module = timm.create_model(
                    name, pretrained=True, pretrained_cfg_overlay={"file": path}
                )
        except _DownloadBlocked as blocked:
            raise missing_weights(
                model,
                blocked.target,
                f"python -c \"import timm; timm.create_model('{name}', pretrained=True)\"",
            ) from None
        description = f"{model}, pretrained weights {path}"
    else:
        init = init_seed("timm", name, seed)
        with seeded_construction(init):
            module = timm.create_model(name, pretrained=False)
        description = f"{model}, random initialisation (seed {init})"
    _check_1000(model, module)
    config = resolve_model_data_config(module)
    _, height, width = config["input_size"]
    if height != width:
        raise VcrbenchError(f"{model}: non-square input {height}x{width} is not supported")
    interpolation = config.get("interpolation", "bicubic")
    if interpolation not in ("bilinear", "bicubic", "nearest"):
        interpolation = "bicubic"
    pre = Preprocessing(int(height), tuple(config["mean"]), tuple(config["std"]), interpolation)
    return module.eval(), pre, description


# --------------------------------------------------------------------------- user files


def load_file(path: str) -> Loaded:
    """A user's model from a Python file.

    Contract: the file defines ``model`` (a ``torch.nn.Module`` mapping a preprocessed
    (B, 3, H, W) float batch to (B, 1000) ImageNet logits) or a function ``build_model()``
    returning one. Optionally ``preprocess``, a callable on a (B, 3, 224, 224) float [0, 1]
    tensor returning the model input; otherwise ``input_size`` (default 224), ``mean`` and
    ``std`` (default ImageNet's) and ``interpolation`` (default "bilinear").
    """
    file = Path(path).expanduser()
    model = f"file:{path}"
    if file.suffix != ".py" or not file.is_file():
        raise VcrbenchError(f"{model}: not an existing .py file")
    digest = hashlib.sha1(str(file.resolve()).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(f"vcrbench_user_model_{digest}", file)
    if spec is None or spec.loader is None:
        raise VcrbenchError(f"{model}: cannot import this file")
    source = importlib.util.module_from_spec(spec)
    try:
        # a file that initialises weights at random gets the same ones in every job
        with seeded_construction(init_seed("file", path)):
            spec.loader.exec_module(source)
            module = getattr(source, "model", None)
            if module is None and callable(getattr(source, "build_model", None)):
                module = source.build_model()
    except Exception as error:
        raise VcrbenchError(
            f"{model}: running the file failed: {type(error).__name__}: {error}"
        ) from error
    if not isinstance(module, torch.nn.Module):
        raise VcrbenchError(
            f"{model}: the file must define `model` (a torch.nn.Module giving (B, 1000) logits) "
            "or a function `build_model()` returning one"
        )
    preprocess = getattr(source, "preprocess", None)
    if preprocess is not None:
        if not callable(preprocess):
            raise VcrbenchError(
                f"{model}: `preprocess` must be callable on a (B, 3, 224, 224) float [0, 1] tensor"
            )
        pre: PreprocessFn = preprocess
    else:
        pre = Preprocessing(
            int(getattr(source, "input_size", 224)),
            tuple(getattr(source, "mean", IMAGENET_MEAN)),
            tuple(getattr(source, "std", IMAGENET_STD)),
            str(getattr(source, "interpolation", "bilinear")),
        )
    return module.eval(), pre, f"{model}, user model from {file}"
