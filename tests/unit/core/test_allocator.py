"""The jobs' allocator settings: set where the user has not, and read by a restarted program."""

from __future__ import annotations

import subprocess
import sys

from vcrbench.core.allocator import JOB_ALLOCATOR, set_job_allocator

PROGRAM = """
import os, sys
from vcrbench.core.allocator import restart_with_job_allocator
print("start", os.environ.get("MALLOC_MMAP_THRESHOLD_"), flush=True)
restart_with_job_allocator()
print("running", os.environ["MALLOC_MMAP_THRESHOLD_"], os.environ["MALLOC_TRIM_THRESHOLD_"],
      sys.argv[1:])
"""


def test_set_where_the_user_has_not():
    environ = {"MALLOC_TRIM_THRESHOLD_": "123"}
    set_job_allocator(environ)
    assert environ == {"MALLOC_TRIM_THRESHOLD_": "123",
                       "MALLOC_MMAP_THRESHOLD_": JOB_ALLOCATOR["MALLOC_MMAP_THRESHOLD_"]}


def test_a_program_restarts_once_with_the_settings_and_its_arguments(tmp_path):
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    environ = {k: v for k, v in __import__("os").environ.items() if k not in JOB_ALLOCATOR}
    out = subprocess.run([sys.executable, str(script), "--flag", "x"], env=environ,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["start None", f"start {JOB_ALLOCATOR['MALLOC_MMAP_THRESHOLD_']}",
                   f"running {JOB_ALLOCATOR['MALLOC_MMAP_THRESHOLD_']} "
                   f"{JOB_ALLOCATOR['MALLOC_TRIM_THRESHOLD_']} ['--flag', 'x']"]
