"""RobustBench's model zoo as a model source, offline: every entry of its CIFAR-10, CIFAR-100
and ImageNet leaderboards (Linf, L2, corruptions), from the user's model folder.

Name: ``robustbench:<name>?dataset=cifar10|cifar100|imagenet&threat=Linf|L2|corruptions&
model_dir=<dir>`` (defaults ``imagenet``, ``corruptions``, :data:`DEFAULT_MODEL_DIR`).

Files, in RobustBench's own layout (what its ``load_model`` downloads; place them by running
the command of :attr:`ZooEntry.fetch_command` where there is internet, e.g. a login node):

- most entries: ``<model_dir>/<dataset>/<threat>/<name>.pt``;
- ensembles (a list of files in the zoo): ``<model_dir>/<dataset>/<threat>/<name>.pt_m<i>.pt``;
- entries that RobustBench builds through timm (XCiT, DeiT, AlexNet on ImageNet): timm's
  pretrained file, in torch hub's checkpoint folder (``$TORCH_HOME/hub/checkpoints``);
- ImageNet's ``Standard_R50``: torchvision's ResNet-50 (V1) weights, in the same folder.

Inputs: CIFAR models take 32 x 32 images in [0, 1] and normalise inside (the zoo's own
normalisation is part of the network), and give logits in CIFAR's label order; ImageNet models
take [0, 1] images too and each has the geometry RobustBench evaluates it on
(:attr:`ZooEntry.preprocessing`: ``Res256Crop224``, ``BicubicRes256Crop224``, ``Res224`` or
``Crop288`` from the zoo; for the entries it builds through timm, timm's resize and crop, e.g.
``BicubicRes248Crop224``).

The package: robustbench 1.1.1 pins timm 1.0.9 (this project runs 1.0.31, which OpenCLIP's
``timm>=1.0.17`` also needs), so pip cannot install it with its dependencies next to this
project; it is installed with ``--no-deps`` after the ``zoo`` extra (:data:`INSTALL`), which
brings what its model code needs. Its package ``__init__`` imports its attack evaluation
(``autoattack``, which its PyPI dependency ``pyautoattack`` does not provide under that name)
and ``pkg_resources`` (gone from setuptools 81 on); the model code needs neither, so
:func:`import_zoo` loads ``robustbench.model_zoo`` and ``robustbench.utils`` without running
that ``__init__``. Every entry's architecture builds with timm 1.0.31 (tested), except those
that need CUDA to be built (:data:`NEEDS_CUDA`).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import math
import os
import pickle
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from vcrbench.errors import VcrbenchError

#: The robustbench release whose zoo this module reads.
VERSION = "1.1.1"
#: How to install the zoos (RobustBench and OpenCLIP) into this project's environment.
INSTALL = f"pip install -e '.[zoo]' && pip install --no-deps robustbench=={VERSION}"
#: Where checkpoints are looked for when the name has no ``model_dir``.
DEFAULT_MODEL_DIR = "~/.cache/robustbench"
#: dataset -> (classes, the side of its images in px).
DATASETS: dict[str, tuple[int, int]] = {"cifar10": (10, 32), "cifar100": (100, 32),
                                        "imagenet": (1000, 224)}
#: The threat models of the leaderboards (the spelling RobustBench uses).
THREATS = ("Linf", "L2", "corruptions")
#: ImageNet geometries of the zoo (its ``preprocessing`` field) -> the side of the model input.
GEOMETRY_SIDE = {"Res256Crop224": 224, "BicubicRes256Crop224": 224, "Res224": 224,
                 "Crop288": 288}
#: Entries whose construction calls CUDA (RobustBench 1.1.1 builds them with ``.cuda()``).
NEEDS_CUDA = frozenset({("cifar10", "Linf", "Bai2023Improving_edm"),
                        ("cifar100", "Linf", "Bai2023Improving_edm"),
                        ("cifar100", "Linf", "Bai2023Improving_trades")})


@dataclass(frozen=True)
class ZooEntry:
    """One resolved zoo entry (nothing built, nothing read).

    Attributes:
        name, dataset, threat: the entry (``threat`` in RobustBench's spelling).
        classes: outputs (10, 100 or 1000), in the dataset's label order.
        input_side: side of the model input in px (32; 224 or 288 on ImageNet).
        preprocessing: the zoo's ImageNet geometry, or None on CIFAR (the 32 px image as it is).
        files: the weight files RobustBench reads, in its layout (see the module docstring).
        build: how RobustBench builds it: ``checkpoint``, ``ensemble`` or ``timm``.
        model_dir: the checkpoint folder.
    """

    name: str
    dataset: str
    threat: str
    classes: int
    input_side: int
    preprocessing: str | None
    files: tuple[Path, ...]
    build: str
    model_dir: Path

    @property
    def model_string(self) -> str:
        return f"robustbench:{self.name}?dataset={self.dataset}&threat={self.threat}"

    @property
    def fetch_command(self) -> str:
        """The command that downloads this entry's files into :attr:`model_dir` (internet)."""
        return (f"python -c \"from vcrbench.models.robustbench_zoo import fetch; fetch("
                f"'{self.name}', '{self.dataset}', '{self.threat}', "
                f"'{self.model_dir.absolute()}')\"")

    def missing(self) -> list[Path]:
        """The files of :attr:`files` that are not there."""
        return [path for path in self.files if not path.is_file()]


def canonical_threat(threat: str) -> str:
    """``linf`` -> ``Linf``, ``l2`` -> ``L2``, ``corruptions``; :class:`VcrbenchError` else."""
    for known in THREATS:
        if threat.lower() == known.lower():
            return known
    raise VcrbenchError(f"robustbench: unknown threat {threat!r}; known: {', '.join(THREATS)}")


def check_dataset(dataset: str) -> str:
    """The dataset option, checked."""
    if dataset not in DATASETS:
        raise VcrbenchError(
            f"robustbench: unknown dataset {dataset!r}; known: {', '.join(DATASETS)}")
    return dataset


# --------------------------------------------------------------------------- the package


def _not_installed(why: str) -> VcrbenchError:
    return VcrbenchError(
        f"robustbench: models need RobustBench's model code, {why}. Install it into this "
        f"environment with\n    {INSTALL}\n(--no-deps: robustbench {VERSION} pins timm 1.0.9, "
        "which this project does not use; its model code runs on the project's timm)")


def import_zoo() -> types.SimpleNamespace:
    """``model_dicts``, ``BenchmarkDataset``, ``ThreatModel`` and ``load_model`` of robustbench,
    imported without its package ``__init__`` (see the module docstring).

    Raises :class:`VcrbenchError` with the install command when the package is missing, of
    another version, incomplete (torchattacks ships a partial copy of an old robustbench that
    can overwrite or shadow it) or its model code's own dependencies are missing.
    """
    spec = importlib.util.find_spec("robustbench") if "robustbench" not in sys.modules else \
        sys.modules["robustbench"].__spec__
    if spec is None or not spec.submodule_search_locations:
        raise _not_installed("which is not installed")
    try:
        version = importlib.metadata.version("robustbench")
    except importlib.metadata.PackageNotFoundError:
        version = None
    folder = Path(list(spec.submodule_search_locations)[0])
    if version != VERSION or not (folder / "model_zoo" / "imagenet.py").is_file():
        found = f"version {version}" if version else "a copy without its metadata"
        raise _not_installed(
            f"but {found} is at {folder}" + (
                "" if (folder / "model_zoo" / "imagenet.py").is_file() else
                " without its ImageNet zoo (an incomplete copy, e.g. torchattacks'; "
                "reinstall it with --force-reinstall)"))
    if "robustbench" not in sys.modules:
        package = types.ModuleType("robustbench")
        package.__path__ = [str(folder)]
        package.__spec__ = spec
        package.__file__ = str(folder / "__init__.py")
        sys.modules["robustbench"] = package
    try:
        with _quiet():
            from robustbench.model_zoo import model_dicts
            from robustbench.model_zoo.enums import BenchmarkDataset, ThreatModel
            from robustbench.utils import load_model
    except ImportError as error:
        raise _not_installed(f"whose model code does not import here ({error})") from None
    return types.SimpleNamespace(model_dicts=model_dicts, BenchmarkDataset=BenchmarkDataset,
                                 ThreatModel=ThreatModel, load_model=load_model)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence the zoo's prints and warnings while its modules import and models build."""
    import warnings

    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# --------------------------------------------------------------------------- resolution


def _timm_name(name: str, dataset: str, threat: str) -> str:
    """The timm model RobustBench builds the entry through, when timm knows it."""
    return f"{name.lower().replace('-', '_')}_{dataset}_{threat.lower()}"


def _timm_file(timm_name: str) -> Path:
    """torch hub's file of a timm pretrained config registered by the zoo (by its URL)."""
    from timm.models import get_pretrained_cfg

    from vcrbench.models.sources import torch_checkpoints_dir

    cfg = get_pretrained_cfg(timm_name)
    url = getattr(cfg, "url", None)
    if not url:
        raise VcrbenchError(f"robustbench: timm's {timm_name} has no weights URL")
    return torch_checkpoints_dir() / os.path.basename(urlparse(url).path)


def entries(dataset: str, threat: str) -> list[str]:
    """The names of one leaderboard of the zoo (empty where it has none, e.g. ImageNet L2)."""
    zoo = import_zoo()
    return sorted(zoo.model_dicts[zoo.BenchmarkDataset(dataset)].get(
        zoo.ThreatModel(threat), {}))


def resolve(name: str, dataset: str = "imagenet", threat: str = "corruptions",
            model_dir: str | Path | None = None) -> ZooEntry:
    """The zoo entry of a name: its label space, input, geometry and files (no network, no
    weights read; :class:`VcrbenchError` naming the known entries when there is none)."""
    import timm

    dataset, threat = check_dataset(dataset), canonical_threat(threat)
    zoo = import_zoo()
    board = zoo.model_dicts[zoo.BenchmarkDataset(dataset)].get(zoo.ThreatModel(threat), {})
    model = f"robustbench:{name}"
    if name not in board:
        known = ", ".join(sorted(board)) or "none: this leaderboard does not exist"
        raise VcrbenchError(
            f"{model}: not in RobustBench's {dataset} {threat} zoo; known: {known}")
    directory = Path(os.path.expanduser(str(model_dir or DEFAULT_MODEL_DIR)))
    classes, side = DATASETS[dataset]
    folder = directory / dataset / threat
    gdrive = board[name]["gdrive_id"]
    timm_name = _timm_name(name, dataset, threat)
    if timm.is_model(timm_name):
        build, files = "timm", (_timm_file(timm_name),)
    elif isinstance(gdrive, list):
        build = "ensemble"
        files = tuple(folder / f"{name}.pt_m{i}.pt" for i in range(len(gdrive)))
    elif dataset == "imagenet" and "Standard" in name:
        # RobustBench builds it as torchvision's ResNet-50 with its V1 weights, no checkpoint
        from vcrbench.models.sources import torchvision_weights_file

        build, files = "checkpoint", (torchvision_weights_file("resnet50", "IMAGENET1K_V1")[0],)
    else:
        build, files = "checkpoint", (folder / f"{name}.pt",)
    geometry = None
    if dataset == "imagenet" and build == "timm":
        geometry, side = _timm_geometry(timm_name)
    elif dataset == "imagenet":
        geometry = board[name].get("preprocessing", "Res256Crop224")
        side = GEOMETRY_SIDE[geometry]
    return ZooEntry(name, dataset, threat, classes, side, geometry, files, build, directory)


def _timm_geometry(timm_name: str) -> tuple[str, int]:
    """``(name, input side)`` of the geometry RobustBench evaluates a timm-built ImageNet entry
    on: not its zoo field but timm's config (resize the short side to ``floor(side /
    crop_pct)`` with the config's filter, then the centre ``side`` crop), named like the zoo's
    (``BicubicRes248Crop224``)."""
    from timm.models import get_pretrained_cfg

    cfg = get_pretrained_cfg(timm_name)
    side = int(cfg.input_size[1])
    scale = math.floor(side / cfg.crop_pct)
    prefix = "Bicubic" if cfg.interpolation == "bicubic" else ""
    return f"{prefix}Res{scale}Crop{side}", side


# --------------------------------------------------------------------------- loading


def missing_error(entry: ZooEntry) -> VcrbenchError:
    """The error for an entry whose files are not all in place."""
    from vcrbench.models.sources import missing_weights

    return missing_weights(entry.model_string, " and ".join(map(str, entry.missing())),
                           entry.fetch_command)


def load(entry: ZooEntry) -> tuple:
    """``(module, description)``: the entry built by RobustBench's ``load_model`` from its
    files, on the CPU, in eval mode. Checkpoints that hold Python objects besides tensors
    (which torch's default weights-only reading refuses) are unpickled in full, as RobustBench
    itself does on the torch it was written for: the files are the user's own downloads."""
    from vcrbench.models.sources import _DownloadBlocked

    if entry.missing():
        raise missing_error(entry)
    if (entry.dataset, entry.threat, entry.name) in NEEDS_CUDA:
        import torch

        if not torch.cuda.is_available():
            raise VcrbenchError(
                f"{entry.model_string}: RobustBench {VERSION} builds this model on CUDA only; "
                "run it on a GPU host (device: cuda)")
    zoo = import_zoo()
    full_unpickling = False
    try:
        module = _rb_load(zoo, entry)
    except _DownloadBlocked as blocked:
        raise missing_error(_with_file(entry, blocked.target)) from None
    except pickle.UnpicklingError:
        full_unpickling = True
        try:
            with _full_unpickling():
                module = _rb_load(zoo, entry)
        except pickle.UnpicklingError as error:
            raise VcrbenchError(
                f"{entry.model_string}: a file of {', '.join(map(str, entry.files))} cannot be "
                f"read ({error}); it is damaged or not RobustBench's: delete it and fetch it "
                f"again with\n    {entry.fetch_command}") from None
    note = ", checkpoint unpickled in full" if full_unpickling else ""
    files = ", ".join(str(path) for path in entry.files)
    return module.eval(), (f"{entry.model_string}, RobustBench {entry.dataset} {entry.threat} "
                           f"zoo ({files}{note})")


def _rb_load(zoo, entry: ZooEntry):
    """RobustBench's ``load_model`` on the entry, downloads blocked, its own errors named."""
    from vcrbench.models.random_init import init_seed, seeded_construction
    from vcrbench.models.sources import _DownloadBlocked, no_downloads

    try:
        # seeded: a parameter a checkpoint leaves out (RobustBench may load non-strictly) keeps
        # the same initial value in every job
        with no_downloads(), _quiet(), seeded_construction(init_seed("robustbench",
                                                                     entry.model_string)):
            return zoo.load_model(entry.name, model_dir=str(entry.model_dir),
                                  dataset=entry.dataset, threat_model=entry.threat)
    except (pickle.UnpicklingError, VcrbenchError, _DownloadBlocked):
        raise
    except Exception as error:
        raise VcrbenchError(
            f"{entry.model_string}: RobustBench could not build it from "
            f"{', '.join(map(str, entry.files))} "
            f"({type(error).__name__}: {error}); if a file is damaged, delete it and fetch it "
            f"again with:\n    {entry.fetch_command}") from error


def _with_file(entry: ZooEntry, target: str) -> ZooEntry:
    return ZooEntry(entry.name, entry.dataset, entry.threat, entry.classes, entry.input_side,
                    entry.preprocessing, (*entry.files, Path(target)), entry.build,
                    entry.model_dir)


@contextlib.contextmanager
def _full_unpickling() -> Iterator[None]:
    saved = os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
    os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", None)
        else:
            os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = saved


def fetch(name: str, dataset: str = "imagenet", threat: str = "corruptions",
          model_dir: str | Path | None = None) -> list[Path]:
    """Download an entry's files where there is internet (RobustBench's own download, into
    :attr:`ZooEntry.files`); returns them. Never called by a run."""
    entry = resolve(name, dataset, threat, model_dir)
    if (entry.dataset, entry.threat, entry.name) in NEEDS_CUDA:
        import torch

        if not torch.cuda.is_available():
            raise VcrbenchError(f"{entry.model_string}: RobustBench {VERSION} builds it on CUDA "
                                "before it downloads its files: fetch it on a host with a GPU")
    zoo = import_zoo()
    with _quiet(), _full_unpickling():  # RobustBench's download, then its own full read
        zoo.load_model(name, model_dir=str(entry.model_dir), dataset=dataset,
                       threat_model=entry.threat)
    missing = entry.missing()
    if missing:
        raise VcrbenchError(f"{entry.model_string}: the download left {missing} missing")
    return list(entry.files)
