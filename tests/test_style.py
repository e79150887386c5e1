"""The code base stays formatted: ruff-clean Python, snakefmt-clean workflow files, and every
line of the workflow within the project's limit (configuration in pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess
import tomllib

import pytest
from helpers.paths import REPO

PYTHON = ["src", "tests", "benchmarks", "calibration", "workflow_scripts"]
WORKFLOW = ["Snakefile", "rules"]


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return path


def test_ruff_is_clean():
    result = subprocess.run(
        [_tool("ruff"), "check", *PYTHON], cwd=REPO, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_snakefmt_is_clean():
    result = subprocess.run(
        [_tool("snakefmt"), "--check", *WORKFLOW], cwd=REPO, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_workflow_lines_are_within_the_project_limit():
    limit = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["ruff"]["line-length"]
    files = [REPO / "Snakefile", *sorted((REPO / "rules").rglob("*.smk"))]
    long = [
        f"{path.relative_to(REPO)}:{number}"
        for path in files
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if len(line) > limit
    ]
    assert not long, f"lines longer than {limit} characters: {long}"
