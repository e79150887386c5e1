"""benchmarks/precision_agreement.py (the GPU check's bf16 step) on the tiny run's shards, which
are stored without pixels: the images are made again and compared on the CPU (fp32 with fp32)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers.workflow import TINY_RESULTS

pytestmark = pytest.mark.workflow


def test_agreement_regenerates_a_scored_shard_and_classifies_it(tiny_run, repo):
    results = tiny_run / TINY_RESULTS
    script = repo / "benchmarks" / "precision_agreement.py"
    result = subprocess.run(
        [sys.executable, str(script), str(results), "gaussian_noise", "--model",
         "efficientnet-lite0", "--other", "fp32", "--batch", "16"],
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "top-1 agreement fp32 / fp32 on gaussian_noise shard 0" in result.stdout
    assert ": 1.0000 (0 of " in result.stdout

