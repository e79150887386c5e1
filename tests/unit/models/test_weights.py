"""Weights checked before any job: each source's missing file is named with its fetch command,
models without files pass, and a present file passes."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from helpers.zoo_files import write_checkpoint, zoo_model_string

from vcrbench.errors import VcrbenchError
from vcrbench.models.weights import check_weights, missing_weights_report


def test_models_without_files_pass(offline_caches: Path) -> None:
    assert missing_weights_report([
        "efficientnet-lite0", "torchvision:resnet18?weights=none",
        "timm:resnet18?pretrained=false", "trained:net", "finetuned:lite0-noise",
    ]) == []


def test_torchvision_file_missing_then_present(offline_caches: Path) -> None:
    with pytest.raises(VcrbenchError) as error:
        check_weights("torchvision:resnet18")
    path = offline_caches / "torch" / "hub" / "checkpoints" / "resnet18-f37072fd.pth"
    assert str(path) in str(error.value) and "get_model('resnet18'" in str(error.value)
    path.parent.mkdir(parents=True)
    torch.save({}, path)
    check_weights("torchvision:resnet18")


def test_timm_file_missing(offline_caches: Path) -> None:
    with pytest.raises(VcrbenchError, match="models--timm--resnet18.a1_in1k"):
        check_weights("timm:resnet18.a1_in1k")


def test_robustbench_file_missing_then_present(offline_caches: Path) -> None:
    name = zoo_model_string("Ding2020MMA", "cifar10", "Linf", offline_caches / "zoo")
    problems = missing_weights_report([name, "efficientnet-lite0"])
    assert len(problems) == 1
    assert str(offline_caches / "zoo" / "cifar10" / "Linf" / "Ding2020MMA.pt") in problems[0]
    assert "fetch('Ding2020MMA', 'cifar10', 'Linf'" in problems[0]
    write_checkpoint(offline_caches / "zoo", "Ding2020MMA", "cifar10", "Linf", "bare")
    check_weights(name)
