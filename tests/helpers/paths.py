"""Where things are: the repository and the optional ../shared reference data."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
SHARED_DATA = SHARED / "data"
IMAGENET_SAMPLE = SHARED_DATA / "imagenet-sample"
HUMAN_DATA = SHARED_DATA / "human" / "model-vs-human"
ASSETS = REPO / "tests" / "assets"
