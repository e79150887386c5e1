"""``vcrbench cifar-c`` (:mod:`vcrbench.training.cifar_c`) on a tiny split and a fresh network:
the clean and per-severity errors against the model's own predictions made here, the paired
difference against the per-model means, the class-balanced subset and the interval by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from vcrbench.cli import main
from vcrbench.core.seeding import noise_seed
from vcrbench.corruptions.cifar_c import cifar_c_severities
from vcrbench.corruptions.registry import corrupt_uint8
from vcrbench.data.cifar import CIFAR10_CLASSES, CifarSplit
from vcrbench.training.cifar_c import balanced_subset, cifar_c_report, interval, load_model
from vcrbench.training.scratch import ScratchRecipe, new_state, save_state


def _split(n: int = 20) -> CifarSplit:
    rng = np.random.default_rng(0)
    return CifarSplit(rng.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8),
                      np.arange(n, dtype=np.int64) % 10, tuple(f"test/{i}" for i in range(n)),
                      CIFAR10_CLASSES)


def _model(path, seed: int):
    torch.manual_seed(seed)
    save_state(new_state(ScratchRecipe(architecture="fastnet", classes=10, seed=seed, epochs=1)),
               path, optimizer=False)
    return path


def test_errors_match_the_models_predictions_made_here(tmp_path):
    test = _split()
    a, b = _model(tmp_path / "a.pt", 0), _model(tmp_path / "b.pt", 1)
    text = cifar_c_report(test, a, baseline=b, corruptions="gaussian_noise", seed=3,
                          machine={"cpu": "test"})
    errors = {}
    for role, path in (("model", a), ("baseline", b)):
        network, recipe = load_model(path, torch.device("cpu"))
        assert recipe.precision == "fp32"  # the report's default: no autocast to redo here
        with torch.no_grad():
            def wrong(images, network=network, recipe=recipe):
                x = torch.as_tensor(images).permute(0, 3, 1, 2).float() / 255
                mean = torch.tensor(recipe.mean).view(1, 3, 1, 1)
                std = torch.tensor(recipe.std).view(1, 3, 1, 1)
                return (network((x - mean) / std).argmax(1).numpy() != test.labels)
            clean = wrong(test.images)
            levels = [wrong(corrupt_uint8(
                "gaussian_noise", test.images,
                {k: np.full(len(test), v) for k, v in point.items()},
                [noise_seed(3, f"cifar-c/gaussian_noise/{s}", i) for i in range(len(test))],
                torch.device("cpu"))) for s, point in
                enumerate(cifar_c_severities("gaussian_noise"), start=1)]
        errors[role] = (clean, np.stack(levels))
    clean, levels = errors["model"]
    row = "| gaussian_noise | " + " | ".join(f"{100 * e.mean():.1f}" for e in levels)
    assert row + f" | {100 * levels.mean():.1f} |" in text
    assert f"| clean error | {100 * clean.mean():.2f} [" in text
    difference = levels.mean(0) - errors["baseline"][1].mean(0)
    assert "model − baseline (paired) |" in text
    assert f"| mean corruption error | {100 * levels.mean():.2f} [" in text
    assert f" | {100 * difference.mean():+.2f} [" in text
    assert text.splitlines()[0].startswith('20 test images (all), precision fp32; machine: '
                                           '{"cpu": "test"}')


def test_balanced_subset_and_interval_by_hand():
    labels = np.repeat(np.arange(10), 7)
    index = balanced_subset(labels, 30, seed=2)
    assert np.all(np.diff(index) > 0) and np.bincount(labels[index]).tolist() == [3] * 10
    values = np.array([0.0, 1.0, 1.0, 0.0])
    draws = np.array([[0, 0, 0, 0], [1, 1, 1, 1], [0, 1, 2, 3]])
    mean, lo, hi = interval(values, draws)
    assert mean == 0.5
    assert (lo, hi) == pytest.approx(tuple(np.percentile([0.0, 1.0, 0.5], [2.5, 97.5])))


def test_the_command_writes_the_report(tmp_path, capsys):
    split = _split(20)
    cache = tmp_path / "cache.npz"
    np.savez(cache, **{f"{s}_{k}": v for s in ("train", "test")
                       for k, v in (("images", split.images), ("labels", split.labels),
                                    ("ids", np.asarray(split.image_ids)))})
    out = tmp_path / "report.md"
    assert main(["cifar-c", "--model", str(_model(tmp_path / "a.pt", 0)), "--data", "unused",
                 "--cache", str(cache), "--images", "10", "--corruptions", "fog",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    report = out.read_text()
    assert report.startswith("10 test images (class-balanced subset)") and "| fog |" in report
    assert printed.endswith(report)
