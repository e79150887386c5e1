"""Fixtures of the model tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def offline_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Empty torch-hub and Hugging Face caches."""
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    return tmp_path
