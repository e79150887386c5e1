"""A run killed mid-job resumes to the same bytes.

That two uninterrupted runs from scratch give identical tables is checked by
``test_workflow.py::test_tiny_run_is_byte_identical_from_scratch``. Here a run is SIGKILLed
(Snakemake and its jobs, the whole process group) while a scoring job is working, then unlocked
and re-run with ``--rerun-incomplete``, and its tables are compared with an uninterrupted run.
To stay cheap, the killed run starts from a copy of the shared reference run with one scoring
shard and everything downstream of it removed, i.e. from where a first run would have been.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from helpers.workflow import (
    REPO,
    TINY_ARGS,
    TINY_RESULTS,
    snakemake,
    snakemake_command,
    table_digests,
)

#: The job killed in flight (the scoring job of gaussian_noise, one job per corruption) and the
#: shard it has not written yet (relative to the run's results folder).
KILLED_OUTPUT = Path("scored/gaussian_noise/shard-1.parquet")
KILLED_LOG = Path("logs/score/gaussian_noise.log")
#: The killed shard's downstream outputs: absent when a first run is killed at that point.
#: (Snakemake does not rerun jobs whose outputs exist just because an intermediate input is
#: missing, so these must go too; one this list misses is still redone, its inputs being newer.)
DOWNSTREAM = [
    "predictions/*/gaussian_noise/shard-1.parquet",
    "outcomes/*/gaussian_noise.parquet",
    "rates/*/gaussian_noise.parquet",
    "curves/*/gaussian_noise*.parquet",
    "metrics/*/gaussian_noise*.parquet",
    "metrics/summary.*",
    "metrics/coverage.*",
    "figures/curves/gaussian_noise.*",
    "figures/r-vs-imagenet-c.*",
    "figures/dv-histograms.*",
    "figures/robustness.*",
]


def _wait_for(condition, timeout: float, what: str, process: subprocess.Popen | None = None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        if process is not None and process.poll() is not None:
            pytest.fail(f"snakemake exited ({process.returncode}) before {what}")
        time.sleep(0.1)
    pytest.fail(f"timed out after {timeout} s waiting for {what}")


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.workflow
def test_run_killed_during_scoring_resumes_to_identical_tables(tiny_run, tmp_path):
    # The reference run, taken back to the moment before one scoring shard was computed.
    workdir = tmp_path / "resumed"
    shutil.copytree(tiny_run, workdir, symlinks=True)
    results = workdir / TINY_RESULTS
    removed = [results / KILLED_OUTPUT, results / KILLED_LOG]
    removed += [p for pattern in DOWNSTREAM for p in results.glob(pattern)]
    assert len(removed) >= 2 + len(DOWNSTREAM), sorted(map(str, removed))
    for path in removed:
        path.unlink()
    started = time.time()

    console = (tmp_path / "killed-run.txt").open("w")
    command = snakemake_command("--cores", "2", *TINY_ARGS, workdir=workdir)
    process = subprocess.Popen(
        command, cwd=REPO, stdout=console, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        log = results / KILLED_LOG
        _wait_for(
            lambda: log.is_file() and "start (threads" in log.read_text(),
            timeout=300,
            what="the scoring job to start working",
            process=process,
        )
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        _wait_for(lambda: not _group_alive(process.pid), 30, "the killed jobs to disappear")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
        console.close()

    assert not (results / KILLED_OUTPUT).exists(), "the scoring job finished before the kill"
    markers = list((workdir / ".snakemake" / "incomplete").iterdir())
    assert markers, "snakemake left no incomplete marker for the killed job"

    unlock = snakemake("--unlock", *TINY_ARGS, workdir=workdir)
    assert unlock.returncode == 0, unlock.stdout + unlock.stderr
    resumed = snakemake("--cores", "2", "--rerun-incomplete", *TINY_ARGS, workdir=workdir)
    assert resumed.returncode == 0, resumed.stdout[-5000:] + resumed.stderr[-5000:]

    for path in removed:
        assert path.stat().st_mtime >= started, f"{path} was not written again"
    assert not list((workdir / ".snakemake" / "incomplete").iterdir())
    expected = table_digests(tiny_run / TINY_RESULTS)
    actual = table_digests(results)
    assert "metrics/summary.parquet" in expected
    differing = sorted(
        n for n in expected.keys() | actual.keys() if expected.get(n) != actual.get(n)
    )
    assert not differing, f"tables that differ after the resumed run: {differing}"
