"""One time-limited slice of a workflow's training (``vcrbench train-slice``; docs/cifar.md,
"Training in slices"): restore the epochs a previous slice packed, rebuild what they were
trained from, train until the time is nearly up, stopping between epochs, and pack every
finished epoch for the next slice.

Snakemake redoes a job whose input is rebuilt in the same call, so on a fresh host the inputs
of the restored epochs (indexes, prepared images; a REVa entry's PGD counterparts) are built
first by calls that leave training out (``--omit-from``), the restored files are then dated
after them (:func:`~vcrbench.training.slices.refresh_mtimes`), and only then does the training
call start. It is stopped with SIGTERM, on which Snakemake starts no new job and lets the
running epoch finish, early enough for the longest epoch seen to end before the deadline; an
epoch still running at the deadline is killed and, never packed, is redone by the next slice.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from vcrbench.errors import VcrbenchError
from vcrbench.training.slices import (
    MANIFEST,
    carried_files,
    entry_progress,
    incomplete_files,
    pack,
    refresh_mtimes,
    stop_time,
    unpack,
)
from vcrbench.training.spec import ADVERSARIAL_METHODS


def epoch_seconds(workdir: Path, results: str, names: Sequence[str]) -> list[float]:
    """The measured durations (s) of every finished epoch of ``names`` (their benchmark files)."""
    out = []
    for name in names:
        for path in (workdir / results / "benchmarks" / "train" / name).glob("epoch-*.tsv"):
            lines = path.read_text().splitlines()
            if len(lines) >= 2:
                out.append(float(lines[1].split("\t")[0]))
    return out


@dataclass
class SliceReport:
    """What a slice did: epochs finished per entry before and after, how it ended."""

    before: dict[str, int]
    after: dict[str, int] = field(default_factory=dict)
    done: list[str] = field(default_factory=list)
    stopped: str = "finished"
    returncode: int = 0
    packed: list[Path] = field(default_factory=list)


def _finished(workdir: Path, results: str, names: Sequence[str]) -> dict[str, int]:
    incomplete = incomplete_files(workdir)
    return {n: entry_progress(workdir, results, n, incomplete).epochs for n in names}


def _call(command: list[str], workdir: Path, until: float) -> int:
    """Run a preparing Snakemake call; past ``until`` it is stopped (returns -1)."""
    process = subprocess.Popen(command, cwd=workdir, start_new_session=True)
    try:
        return process.wait(timeout=max(1.0, until - time.monotonic()))
    except subprocess.TimeoutExpired:
        _kill(process)
        return -1


def _kill(process: subprocess.Popen, grace: float = 20.0) -> None:
    """SIGINT to Snakemake (it cancels its jobs), then SIGKILL to its process group."""
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def run_slice(configfiles: Sequence[str], config: dict, minutes: float, out: str | Path, *,
              carry: str | Path | None = None, targets: Sequence[str] = ("train",),
              cores: int = 1, snakemake_args: Sequence[str] = (), margin: float = 30.0,
              stop_after_epochs: int | None = None, workdir: str | Path = ".",
              snakefile: str | Path | None = None, poll: float = 0.5) -> SliceReport:
    """Train for at most ``minutes`` (packing included) and pack the finished epochs into
    ``out``; ``carry`` is a previous slice's pack (its folder), or ``None`` for a first slice.
    ``stop_after_epochs`` stops once that many epochs finished in this slice (the next one
    may still finish: Snakemake ends the epochs it has started). The workflow runs in
    ``workdir`` (default: here) from ``snakefile`` (default: ``workdir/Snakefile``); ``config``
    is the run's validated config (:func:`vcrbench.config.workflow_config` of ``configfiles``)."""
    start = time.monotonic()
    deadline = start + 60.0 * minutes
    workdir = Path(workdir).resolve()
    snakefile = Path(snakefile).resolve() if snakefile else workdir / "Snakefile"
    results = f"results/{config['run']}"
    names = [entry["name"] for entry in config["train"]]
    if not names:
        raise VcrbenchError("the config has no train entries: nothing to train in slices")
    base = [sys.executable, "-m", "snakemake", *targets, "--snakefile", str(snakefile),
            "--directory", str(workdir), "--cores", str(cores),
            "--configfile", *(str(Path(f).resolve()) for f in configfiles), *snakemake_args]
    restored: list[Path] = []
    if carry is not None and (Path(carry) / MANIFEST).is_file():
        restored = unpack(carry, workdir)
    report = SliceReport(before=_finished(workdir, results, names))
    if restored:
        # The inputs of training, built before the restored epochs are dated after them.
        if _call([*base, "--omit-from", "train_epoch"], workdir, deadline - margin) != 0:
            report.stopped = "preparing the inputs of training failed or ran out of time"
        refresh_mtimes(workdir, restored)
        resumed = {e["name"] for e in config["train"] if e["method"] in ADVERSARIAL_METHODS
                   and 0 < report.before[e["name"]]}
        if resumed and report.stopped == "finished":
            # A REVa entry's counterparts are crafted on a trained model: everything up to the
            # next epoch of each unfinished entry.
            progress = {n: entry_progress(workdir, results, n) for n in names}
            nexts = [f"{results}/models/{n}/epochs/state-{p.epochs + 1}.pt"
                     for n, p in progress.items() if not p.done]
            if _call([*base, "--omit-from", *nexts], workdir, deadline - margin) != 0:
                report.stopped = "preparing the PGD counterparts failed or ran out of time"
            refresh_mtimes(workdir, restored)
    if report.stopped == "finished":
        _train(base, workdir, results, names, deadline, margin, stop_after_epochs, poll, report)
    report.after = _finished(workdir, results, names)
    report.done = [n for n in names if entry_progress(workdir, results, n).done]
    report.packed = pack(workdir, carried_files(workdir, results, names), out)
    return report


def _train(base: list[str], workdir: Path, results: str, names: Sequence[str], deadline: float,
           margin: float, stop_after_epochs: int | None, poll: float,
           report: SliceReport) -> None:
    process = subprocess.Popen([*base, "--rerun-incomplete"], cwd=workdir,
                               start_new_session=True)
    asked = False
    while process.poll() is None:
        time.sleep(poll)
        now = time.monotonic()
        if now >= deadline - margin:
            report.stopped = "killed at the deadline (the running epoch is redone next slice)"
            _kill(process)
            break
        if asked:
            continue
        finished = sum(_finished(workdir, results, names).values()) - sum(report.before.values())
        if stop_after_epochs is not None and finished >= stop_after_epochs:
            report.stopped, asked = f"stopped after {finished} epochs", True
        elif now >= stop_time(deadline, margin, epoch_seconds(workdir, results, names)):
            report.stopped, asked = "stopped before the time limit", True
        if asked:
            process.send_signal(signal.SIGTERM)  # no new job; the running epoch finishes
    report.returncode = process.wait()
