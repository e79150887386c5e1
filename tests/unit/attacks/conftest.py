"""Fixtures of the attack tests: a tiny fixed model and small images, so attacks take ms."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch
from helpers.paths import ASSETS


@pytest.fixture(scope="session")
def colour_net() -> torch.nn.Module:
    """The tests' tiny fixed-weight colour classifier (``tests/assets/colour_model.py``):
    differentiable, (B, 3, H, W) in [0, 1] -> (B, 1000) logits, usable as a Forward."""
    spec = importlib.util.spec_from_file_location("colour_model", ASSETS / "colour_model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build_model()


def _small_images(n: int = 6, size: int = 32, seed: int = 0) -> np.ndarray:
    """(n, size, size, 3) uint8: colour ramps with noise, some pixels at 0 and 255."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:size, 0:size]
    base = np.stack([x * 7, y * 5, (x + y) * 3], axis=-1) % 256
    return np.clip(base + rng.integers(-60, 60, (n, *base.shape)), 0, 255).astype(np.uint8)


@pytest.fixture(scope="session")
def small_images():
    """The factory of small test images: ``small_images(n=6, size=32, seed=0)``."""
    return _small_images
