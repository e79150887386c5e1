"""Shared fixtures: repository paths and the optional ../shared reference data."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
IMAGENET_SAMPLE = SHARED_DATA / "imagenet-sample"


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def imagenet_sample() -> Path:
    if not IMAGENET_SAMPLE.is_dir():
        pytest.skip(f"{IMAGENET_SAMPLE} is absent (reference data lives in ../shared/data)")
    return IMAGENET_SAMPLE
