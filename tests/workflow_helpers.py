"""Running Snakemake on the repository's workflow from tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def snakemake(
    *args: str, workdir: Path | None = None, timeout: int = 1200
) -> subprocess.CompletedProcess:
    """Run snakemake on the repository's Snakefile (in ``workdir`` when given)."""
    command = [*SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), *args]
    if workdir is not None:
        command += ["--directory", str(workdir)]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=timeout)
