"""Parse documented command lines with their programs' own parsers, running nothing else.

Run as ``python parse_only.py`` with a JSON list of argvs on stdin; prints a JSON list of
``null`` (parsed) or an error message, one per argv. ``vcrbench …`` goes to
:func:`vcrbench.cli.build_parser`, ``snakemake …`` to Snakemake's own argument parser, and
``python SCRIPT …`` runs the script as ``__main__`` until its ``ArgumentParser.parse_args``
returns, then stops it: a script that ends without parsing arguments, or fails before, is an
error; a script without a parser passes only where it is given no arguments. One process
checks them all (the scripts' imports are paid once).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import runpy
import sys
from pathlib import Path

from vcrbench.core.allocator import set_job_allocator

REPO = Path(__file__).resolve().parents[2]


class _Parsed(Exception):
    """Raised right after a script's arguments parsed, to stop it there."""


def _parse_script(argv: list[str]) -> None:
    script = REPO / argv[0]
    if not script.is_file():
        raise FileNotFoundError(f"{argv[0]} is not a file of the repository")
    if "parse_args(" not in script.read_text(encoding="utf-8"):  # it would run, not parse
        if len(argv) > 1:
            raise RuntimeError(f"{argv[0]} takes no arguments (it has no argparse parser)")
        return
    original = argparse.ArgumentParser.parse_args

    def parse_then_stop(self, args=None, namespace=None):
        original(self, args, namespace)
        raise _Parsed

    argparse.ArgumentParser.parse_args = parse_then_stop
    # benchmarks restart themselves with the jobs' allocator settings unless these are set:
    # here that would start this checker again (vcrbench.core.allocator)
    set_job_allocator()
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv, sys.path[:0] = [str(script), *argv[1:]], [str(script.parent)]
    try:
        runpy.run_path(str(script), run_name="__main__")
    except _Parsed:
        return
    finally:
        argparse.ArgumentParser.parse_args = original
        sys.argv, sys.path[:] = saved_argv, saved_path
    raise RuntimeError(f"{argv[0]} ended without parsing its arguments with argparse")


def check(argv: list[str]) -> str | None:
    """None where ``argv`` parses, else what went wrong."""
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            if argv[0] == "vcrbench":
                from vcrbench.cli import build_parser

                build_parser().parse_args(argv[1:])
            elif argv[0] == "snakemake":
                from snakemake.cli import get_argument_parser

                get_argument_parser().parse_args(argv[1:])
            elif argv[1:2] == ["-c"]:
                compile(argv[2], "<python -c>", "exec")  # its Python must at least compile
            else:
                _parse_script(argv[1:])
    except SystemExit as stop:
        if stop.code not in (0, None):
            return f"exit {stop.code}: {stderr.getvalue().strip()}"
    except Exception as error:  # noqa: BLE001 - reported to the test, which fails on it
        return f"{type(error).__name__}: {error}"
    return None


if __name__ == "__main__":
    print(json.dumps([check(argv) for argv in json.load(sys.stdin)]))
