"""Checks of image files written by the pipeline."""

from __future__ import annotations

from pathlib import Path

from PIL import Image


def assert_png(path: Path) -> tuple[int, int]:
    """``path`` is a readable PNG of more than 200 × 200 px; returns its (width, height)."""
    assert path.is_file() and path.stat().st_size > 0, path
    with Image.open(path) as image:
        image.verify()
    with Image.open(path) as image:
        assert image.format == "PNG"
        assert image.width > 200 and image.height > 200
        return image.size
