"""The workflow checks the host's torch / torchvision before anything else (vcrbench.host)."""

from __future__ import annotations

import os
import subprocess

import pytest
from helpers.workflow import TEST_CONFIG, snakemake_command

pytestmark = pytest.mark.workflow


def test_an_old_host_torch_stops_the_workflow_with_the_versions(tmp_path):
    # distribution metadata of an older torch / torchvision ahead of the real ones on sys.path:
    # what a cluster node with its own PyTorch 2.10 looks like to the check
    fake = tmp_path / "host-site"
    for name, version in (("torch", "2.10.0"), ("torchvision", "0.25.0")):
        info = fake / f"{name}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(fake), os.environ.get("PYTHONPATH", "")) if p)}
    command = snakemake_command("-n", "--configfile", str(TEST_CONFIG), workdir=tmp_path / "run")
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "torch 2.10.0 (needs >= 2.11), torchvision 0.25.0 (needs >= 0.26)" in output, output
    # and the same run passes with the check skipped (the real torch is imported after it)
    env["VCRBENCH_SKIP_TORCH_CHECK"] = "1"
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
