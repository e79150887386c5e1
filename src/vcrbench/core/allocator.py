"""The C allocator settings of the workflow's jobs: batch-sized tensors from the heap, reused.

glibc's malloc serves an allocation above its mmap threshold (dynamic, at most 32 MB by default)
with fresh pages from the system and returns them when it is freed. A batch-sized float32
tensor is above it (64 images of 224 px: 38.5 MB), so every temporary of a batched corruption,
VIF pass or forward pass pays the page faults of new memory again, batch after batch; per-sample
code stayed below it. :data:`JOB_ALLOCATOR` raises the mmap threshold to 2 GB and the trim
threshold to 4 GB, so freed memory stays in the heap for the next batch: measured with
``benchmarks/bench_corruptions.py --threads 1`` (docs/corruptions.md, "Speed"), glass blur
14.1 -> 5.6 ms a sample, defocus blur 5.5 -> 2.0, frost 2.2 -> 0.8. A job's peak memory is
what it uses at its largest batch either way; the memory is kept until the job ends.

glibc reads these variables when a process starts: the Snakefile sets them (unless the user
has) before any job is started, so every job inherits them; benchmarks re-start themselves with
them (:func:`restart_with_job_allocator`). Other C libraries (musl, macOS) ignore them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping

#: Environment of a job's process: glibc's ``M_MMAP_THRESHOLD`` and ``M_TRIM_THRESHOLD`` (bytes).
JOB_ALLOCATOR = {"MALLOC_MMAP_THRESHOLD_": "2000000000", "MALLOC_TRIM_THRESHOLD_": "4000000000"}


def set_job_allocator(environ: MutableMapping[str, str] = os.environ) -> None:
    """Put :data:`JOB_ALLOCATOR` into ``environ`` where the user has not set the variables,
    for the processes started from it."""
    for name, value in JOB_ALLOCATOR.items():
        environ.setdefault(name, value)


def restart_with_job_allocator() -> None:
    """Start this Python program again with :data:`JOB_ALLOCATOR` in its environment unless
    it is there already (glibc reads it at start-up only); returns when it is there."""
    if all(name in os.environ for name in JOB_ALLOCATOR):
        return
    environ = dict(os.environ)
    set_job_allocator(environ)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], environ)
