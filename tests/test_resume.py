"""A run killed mid-job resumes to the same bytes; tables and figures are written atomically.

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
import sys
import textwrap
import time
from pathlib import Path

import pyarrow as pa
import pytest
from workflow_helpers import (
    REPO,
    TEST_CONFIG,
    TINY_RESULTS,
    snakemake,
    snakemake_command,
    table_digests,
    tiny_reference_run,
)

from vcrbench import tables

#: The job killed in flight, and what it writes (relative to the run's results folder).
KILLED_OUTPUT = Path("scored/gaussian_noise/shard-1.parquet")
KILLED_LOG = Path("logs/score/gaussian_noise/shard-1.log")
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


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory):
    return tiny_reference_run(tmp_path_factory.getbasetemp())


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
def test_run_killed_during_scoring_resumes_to_identical_tables(reference_run, tmp_path):
    # The reference run, taken back to the moment before one scoring shard was computed.
    workdir = tmp_path / "resumed"
    shutil.copytree(reference_run, workdir, symlinks=True)
    results = workdir / TINY_RESULTS
    removed = [results / KILLED_OUTPUT, results / KILLED_LOG]
    removed += [p for pattern in DOWNSTREAM for p in results.glob(pattern)]
    assert len(removed) >= 2 + len(DOWNSTREAM), sorted(map(str, removed))
    for path in removed:
        path.unlink()
    started = time.time()

    console = (tmp_path / "killed-run.txt").open("w")
    command = snakemake_command("--cores", "2", "--configfile", str(TEST_CONFIG), workdir=workdir)
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

    unlock = snakemake("--unlock", "--configfile", str(TEST_CONFIG), workdir=workdir)
    assert unlock.returncode == 0, unlock.stdout + unlock.stderr
    resumed = snakemake(
        "--cores", "2", "--rerun-incomplete", "--configfile", str(TEST_CONFIG), workdir=workdir
    )
    assert resumed.returncode == 0, resumed.stdout[-5000:] + resumed.stderr[-5000:]

    for path in removed:
        assert path.stat().st_mtime >= started, f"{path} was not written again"
    assert not list((workdir / ".snakemake" / "incomplete").iterdir())
    expected = table_digests(reference_run / TINY_RESULTS)
    actual = table_digests(results)
    assert "metrics/summary.parquet" in expected
    differing = sorted(
        n for n in expected.keys() | actual.keys() if expected.get(n) != actual.get(n)
    )
    assert not differing, f"tables that differ after the resumed run: {differing}"


# --------------------------------------------------------------------------- atomic writes

KILL_BEFORE_RENAME = """
import os, signal, sys
sys.path.insert(0, {src!r})
import {module} as target
def killed(tmp, path):  # the process dies after the temporary file is complete
    assert os.path.getsize(tmp) > 0
    os.kill(os.getpid(), signal.SIGKILL)
target.replace_atomically = killed
{write}
"""


def _killed_while_writing(module: str, write: str) -> subprocess.CompletedProcess:
    script = KILL_BEFORE_RENAME.format(src=str(REPO / "src"), module=module, write=write)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    ("module", "name", "write"),
    [
        (
            "vcrbench.tables",
            "shard-0.parquet",
            "import pyarrow as pa\ntarget.write_table(pa.table({{'x': [1, 2, 3]}}), {path!r})",
        ),
        (
            "vcrbench.figures",
            "curves.png",
            "import matplotlib.pyplot as plt\ntarget.save_figure(plt.figure(), [{path!r}])",
        ),
    ],
    ids=["table", "figure"],
)
def test_output_killed_before_rename_leaves_no_file_under_its_name(module, name, write, tmp_path):
    path = tmp_path / name
    result = _killed_while_writing(module, write.format(path=str(path)))
    assert result.returncode == -signal.SIGKILL, result.stderr
    assert not path.exists()
    left = [p.name for p in tmp_path.iterdir()]
    assert left and all(n.startswith(f".{name}.tmp-") for n in left), left


def test_failed_table_write_keeps_the_previous_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "summary.parquet"
    tables.write_table(pa.table({"x": [1]}), path)
    before = path.read_bytes()

    def broken(table, where, **kwargs):
        Path(where).write_bytes(b"PAR1 half a file")
        raise OSError("disk full")

    monkeypatch.setattr(tables.pq, "write_table", broken)
    with pytest.raises(OSError, match="disk full"):
        tables.write_table(pa.table({"x": [2]}), path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_failed_figure_write_leaves_nothing(tmp_path):
    import matplotlib.pyplot as plt

    from vcrbench import figures

    def broken(where, **kwargs):
        Path(where).write_bytes(b"\x89PNG half a file")
        raise OSError("disk full")

    fig = plt.figure()
    fig.savefig = broken
    path = tmp_path / "robustness.png"
    with pytest.raises(OSError, match="disk full"):
        figures.save_figure(fig, [path])
    assert list(tmp_path.iterdir()) == []
