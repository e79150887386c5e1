"""The code base stays ruff-clean (configuration in pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import REPO


def test_ruff_is_clean():
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    result = subprocess.run(
        [ruff, "check", "src", "tests", "benchmarks", "workflow_scripts"],
        cwd=REPO, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
