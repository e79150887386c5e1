"""Fixtures of the results tests: results folders written in ``tmp_path``."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.results_folder import make_run


@pytest.fixture

def two_runs(tmp_path) -> tuple[Path, Path]:
    """Two results folders, ``old`` (with stored pixels) and ``new``, of different values."""
    return (make_run(tmp_path / "results" / "old", seed=1, pixels=True),
            make_run(tmp_path / "results" / "new", seed=2))
