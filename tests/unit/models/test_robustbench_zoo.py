"""RobustBench's zoo offline: every entry of the three datasets' leaderboards resolves and its
architecture builds on this project's timm; checkpoints in the zoo's layout load and classify
as the architecture itself does; missing files and packages are named with the fix."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers.zoo_files import (
    CIFAR10_ENTRIES,
    KIREEV,
    NOT_ON_META,
    write_checkpoint,
    zoo_model_string,
)

from vcrbench.errors import VcrbenchError
from vcrbench.models import load_model, parse_model_name, predict
from vcrbench.models import robustbench_zoo as zoo_module
from vcrbench.models.preprocess import IDENTITY_MEAN, IDENTITY_STD, Preprocessing
from vcrbench.models.sources import _DownloadBlocked, no_downloads

#: Entries per leaderboard in robustbench 1.1.1 (ImageNet and CIFAR-100 have no L2 board).
BOARD_SIZES = {("cifar10", "Linf"): 76, ("cifar10", "L2"): 21, ("cifar10", "corruptions"): 17,
               ("cifar100", "Linf"): 38, ("cifar100", "L2"): 0, ("cifar100", "corruptions"): 12,
               ("imagenet", "Linf"): 30, ("imagenet", "L2"): 0, ("imagenet", "corruptions"): 12}
def _all_entries() -> list[tuple[str, str, str]]:
    return [(dataset, threat, name) for dataset in zoo_module.DATASETS
            for threat in zoo_module.THREATS for name in zoo_module.entries(dataset, threat)]


def _robustbench_timm_geometry(timm_name: str) -> tuple[str, int]:
    """RobustBench's own rule for an ImageNet entry it builds through timm (its
    ``get_timm_model_preprocessing``: resize to floor(side / crop_pct), centre crop side),
    read off the built model's config."""
    import math

    import timm

    with torch.device("meta"), zoo_module._quiet():
        model = timm.create_model(timm_name)
    if isinstance(model, torch.nn.Sequential):  # normalisation wrapped around the timm model
        model = model.model
    cfg = model.default_cfg
    side = cfg["input_size"][1]
    filter_name = "Bicubic" if cfg["interpolation"] == "bicubic" else ""
    return f"{filter_name}Res{math.floor(side / cfg['crop_pct'])}Crop{side}", side


def test_every_leaderboard_entry_resolves(tmp_path: Path, offline_caches: Path) -> None:
    found = _all_entries()
    sizes = {board: 0 for board in BOARD_SIZES}
    for dataset, threat, name in found:
        sizes[dataset, threat] += 1
        entry = zoo_module.resolve(name, dataset, threat, tmp_path)
        classes, side = zoo_module.DATASETS[dataset]
        assert entry.classes == classes
        if dataset == "imagenet" and entry.build == "timm":
            assert (entry.preprocessing, entry.input_side) == _robustbench_timm_geometry(
                zoo_module._timm_name(name, dataset, threat))
        elif dataset == "imagenet":
            assert entry.preprocessing in zoo_module.GEOMETRY_SIDE
            assert entry.input_side == zoo_module.GEOMETRY_SIDE[entry.preprocessing]
        else:
            assert (entry.input_side, entry.preprocessing) == (32, None)
        assert entry.files and entry.missing() == list(entry.files)
        if entry.build in ("checkpoint", "ensemble") and "Standard_R50" != name:
            assert all(path.parent == tmp_path / dataset / threat for path in entry.files)
            assert entry.files[0].name.startswith(f"{name}.pt")
    assert sizes == BOARD_SIZES
    geometries = {zoo_module.resolve(n, "imagenet", t, tmp_path).preprocessing
                  for d, t, n in found if d == "imagenet"}
    assert geometries == set(zoo_module.GEOMETRY_SIDE) | {
        "BicubicRes224Crop224", "BicubicRes248Crop224", "Res224Crop224"}


def test_every_architecture_builds_on_this_timm() -> None:
    """Built on the meta device (no memory, no weights): RobustBench's constructors and the timm
    models it registers all run on the project's timm; a constructor's own download (ImageNet's
    Standard_R50) is stopped, as in a run."""
    import timm

    zoo = zoo_module.import_zoo()
    failed = {}
    for dataset, threat, name in _all_entries():
        if (dataset, threat, name) in zoo_module.NEEDS_CUDA | NOT_ON_META:
            continue
        timm_name = zoo_module._timm_name(name, dataset, threat)
        board = zoo.model_dicts[zoo.BenchmarkDataset(dataset)][zoo.ThreatModel(threat)]
        try:
            with no_downloads(), torch.device("meta"), zoo_module._quiet():
                if timm.is_model(timm_name):
                    module = timm.create_model(timm_name, pretrained=False,
                                               num_classes=zoo_module.DATASETS[dataset][0])
                else:
                    module = board[name]["model"]()
            assert sum(p.numel() for p in module.parameters()) > 0
        except _DownloadBlocked:
            pass
        except Exception as error:  # noqa: BLE001 - collected and reported together
            failed[dataset, threat, name] = f"{type(error).__name__}: {error}"
    assert not failed


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    folder = tmp_path_factory.mktemp("robustbench")
    states = {entry[0]: write_checkpoint(folder, *entry) for entry in (*CIFAR10_ENTRIES, KIREEV)}
    return folder, states


@pytest.mark.parametrize("entry", [*CIFAR10_ENTRIES, KIREEV], ids=lambda e: e[0])
def test_checkpoint_in_zoo_layout_loads_and_classifies_as_its_architecture(
        entry: tuple, model_dir: tuple[Path, dict]) -> None:
    folder, states = model_dir
    name, dataset, threat, _ = entry
    model = load_model(zoo_model_string(name, dataset, threat, folder))
    assert model.classes == 10 and not model.module.training
    assert model.preprocessing == Preprocessing(32, IDENTITY_MEAN, IDENTITY_STD, "bilinear")
    state = model.module.state_dict()
    assert set(state) == set(states[name])
    assert all(torch.equal(state[key], value) for key, value in states[name].items())
    # reference: the zoo's architecture with those weights on the [0, 1] image, unnormalised
    zoo = zoo_module.import_zoo()
    reference = zoo.model_dicts[zoo.BenchmarkDataset(dataset)][zoo.ThreatModel(threat)][name][
        "model"]()
    reference.load_state_dict(states[name])
    images = np.random.default_rng(3).integers(0, 256, (6, 32, 32, 3), dtype=np.uint8)
    with torch.inference_mode():
        logits = reference.eval()(torch.from_numpy(images).permute(0, 3, 1, 2).float() / 255)
    out = predict(model, images, batch_size=4)
    np.testing.assert_array_equal(out["top1"], logits.argmax(1).numpy())
    np.testing.assert_allclose(out["p_top1"], logits.softmax(1).amax(1).numpy(), rtol=1e-5)
    assert (out["top1_16"] == -1).all()  # CIFAR classes have no 16-class category


def test_missing_checkpoint_names_the_file_and_the_fetch(tmp_path: Path) -> None:
    with pytest.raises(VcrbenchError) as error:
        load_model(zoo_model_string("Standard", "cifar10", "Linf", tmp_path))
    message = str(error.value)
    assert str(tmp_path / "cifar10" / "Linf" / "Standard.pt") in message
    assert "robustbench_zoo import fetch; fetch('Standard', 'cifar10', 'Linf'" in message


def test_ensemble_and_timm_built_entries_name_their_files(tmp_path: Path) -> None:
    ensemble = zoo_module.resolve("Bai2024MixedNUTS", "cifar10", "Linf", tmp_path)
    assert ensemble.build == "ensemble" and [p.name for p in ensemble.files] == [
        f"Bai2024MixedNUTS.pt_m{i}.pt" for i in range(len(ensemble.files))]
    xcit = zoo_module.resolve("Debenedetti2022Light_XCiT-S12", "cifar10", "Linf", tmp_path)
    assert xcit.build == "timm" and xcit.files[0].parent.name == "checkpoints"
    standard = zoo_module.resolve("Standard_R50", "imagenet", "Linf", tmp_path)
    assert standard.files[0].name == "resnet50-0676ba61.pth"


def test_damaged_checkpoint_names_the_file_and_the_fetch(tmp_path: Path) -> None:
    write_checkpoint(tmp_path, "Rice2020Overfitting", "cifar10", "L2", "bare")
    path = tmp_path / "cifar10" / "L2" / "Rice2020Overfitting.pt"
    path.write_bytes(path.read_bytes()[:1000])
    with pytest.raises(VcrbenchError, match="delete it and fetch it again"):
        load_model(zoo_model_string("Rice2020Overfitting", "cifar10", "L2", tmp_path))


def test_checkpoint_with_python_objects_is_read_in_full(tmp_path: Path) -> None:
    """RobustBench's own files may hold training arguments beside the weights, which torch's
    weights-only reading refuses: read in full, as RobustBench does, and said so."""
    import argparse
    import os

    state = write_checkpoint(tmp_path, "Rice2020Overfitting", "cifar10", "L2", "bare")
    path = tmp_path / "cifar10" / "L2" / "Rice2020Overfitting.pt"
    torch.save({"state_dict": state, "args": argparse.Namespace(lr=0.1)}, path)
    model = load_model(zoo_model_string("Rice2020Overfitting", "cifar10", "L2", tmp_path))
    assert "unpickled in full" in model.description
    assert all(torch.equal(model.module.state_dict()[k], v) for k, v in state.items())
    assert "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD" not in os.environ


def test_cuda_only_entries_are_refused_on_a_cpu_run() -> None:
    from vcrbench.config import validate_config

    config = {"dataset": {"source": "builtin"}, "device": "cpu",
              "models": ["robustbench:Bai2023Improving_edm?dataset=cifar10&threat=Linf"]}
    with pytest.raises(VcrbenchError, match="builds it on CUDA only"):
        validate_config(config)


@pytest.mark.parametrize("name,fragment", [
    ("robustbench:Nobody2099?dataset=cifar10&threat=Linf", "not in RobustBench's cifar10 Linf zoo"),
    ("robustbench:Standard?dataset=cifar100&threat=L2", "none: this leaderboard does not exist"),
])
def test_unknown_entries(name: str, fragment: str) -> None:
    with pytest.raises(VcrbenchError, match=fragment):
        load_model(name)


@pytest.mark.parametrize("name", ["robustbench:Standard?dataset=svhn",
                                  "robustbench:Standard?threat=Linfinity"])
def test_bad_options_fail_at_parse(name: str) -> None:
    with pytest.raises(VcrbenchError, match="must be one of"):
        parse_model_name(name)


def test_wrong_or_partial_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version",
                        lambda dist: "1.0" if dist == "robustbench" else real(dist))
    with pytest.raises(VcrbenchError) as error:
        zoo_module.import_zoo()
    assert "version 1.0" in str(error.value) and zoo_module.INSTALL in str(error.value)


@pytest.mark.parametrize("name,crop,fix", [
    ("Wong2020Fast", None, "not built"),
    ("Tian2022Deeper_DeiT-B", None, "BicubicRes248Crop224 geometry yet"),
    ("Mo2022When_ViT-B", "res224", "dataset.crop: res224"),
    ("Singh2023Revisiting_ViT-B-ConvStem", "bicubic-res256-crop224",
     "dataset.crop: bicubic-res256-crop224"),
])
def test_imagenet_entries_see_their_zoo_geometry_or_are_refused(
        name: str, crop: str | None, fix: str) -> None:
    from vcrbench.config import validate_config

    model = f"robustbench:{name}?threat={'corruptions' if 'Tian' in name else 'Linf'}"
    other = "res224" if crop != "res224" else "res256-crop224"
    config = {"dataset": {"source": "builtin", "crop": other}, "models": [model]}
    with pytest.raises(VcrbenchError, match=f"prepares its images as {other}; .*{fix}"):
        validate_config(config)
    config["models"] = [f"{model}&geometry=run"]
    validate_config(config)
    if crop is not None:
        for accepted in zoo_module_crops(crop):
            validate_config({"dataset": {"source": "builtin", "crop": accepted},
                             "models": [model]})


def zoo_module_crops(crop: str) -> list[str]:
    """The run crops a zoo entry prepared as ``crop`` accepts (both 256/224 filters)."""
    return [crop] if crop == "res224" else ["res256-crop224", "bicubic-res256-crop224"]


@pytest.mark.parametrize("crop,transform", [
    ("res256-crop224", "bilinear"), ("bicubic-res256-crop224", "bicubic"), ("res224", None)])
def test_prepared_crops_are_torchvisions_transforms(crop: str, transform: str | None) -> None:
    """The run's crops against RobustBench's own definitions, written with torchvision's
    transforms on PIL images (the independent reference)."""
    from PIL import Image
    from torchvision import transforms

    from vcrbench.data.datasets import prepare_pil

    rng = np.random.default_rng(0)
    for size in ((500, 375), (333, 500), (640, 427)):
        image = Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8))
        if transform is None:
            reference = transforms.Resize([224, 224])(image)
        else:
            mode = transforms.InterpolationMode(transform)
            reference = transforms.Compose([transforms.Resize(256, interpolation=mode),
                                            transforms.CenterCrop(224)])(image)
        np.testing.assert_array_equal(prepare_pil(image, crop if crop != "res256-crop224"
                                                  else 224), np.asarray(reference))
