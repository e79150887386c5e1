"""Every command README.md and docs/*.md show still works: no documented command goes stale.

Each ``vcrbench``, ``python`` and ``snakemake`` command is parsed by its program's own argument
parser (one process for all: :mod:`helpers.parse_only`), and each ``snakemake`` command is
dry-run as a reader would type it, in a copy of the checkout (links to its files) with
``../shared`` beside it. A command that is only a config the dry runs of
``test_dry_run_of_every_config`` already cover is that run, not a second one; a command that
needs a reader's own data (``/data/imagenet``), a finished run (``--report``), conda, or makes
something outside a dry run (``--conda-create-envs-only``, ``--unlock``) is parsed only.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.doc_commands import DocCommand, documented_commands
from helpers.paths import REPO, SHARED
from helpers.workflow import DRY_RUN_CONFIGS

pytestmark = pytest.mark.workflow

COMMANDS = documented_commands()
SNAKEMAKE_COMMANDS = [command for command in COMMANDS if command.program == "snakemake"]
PARSE_ONLY = Path(__file__).resolve().parents[1] / "helpers" / "parse_only.py"
#: Flags whose effect a dry run does not show, or that do more than plan jobs.
PARSE_ONLY_FLAGS = {
    "--lint": "linted by test_lint_has_no_findings",
    "--report": "a report needs a finished run (the tiny run's report is tested)",
    "--unlock": "unlocks a working folder; nothing to plan",
    "--conda-create-envs-only": "creates conda environments",
}
#: An absolute path a reader supplies (their ImageNet folder), not one a test has.
USER_PATH = re.compile(r"(?:^|[=\s{,])/(?!tmp/)[\w.-]+/")


def test_the_documents_have_commands():
    programs = {command.program for command in COMMANDS}
    assert {"snakemake", "vcrbench", "python"} <= programs, programs
    assert any(command.argv == ("snakemake", "--cores", "2") for command in COMMANDS)


@pytest.fixture(scope="module")
def parse_errors() -> dict[tuple[str, ...], str | None]:
    """argv -> None where it parses, else the parser's message (all commands, one process)."""
    argvs = sorted({command.argv for command in COMMANDS})
    result = subprocess.run([sys.executable, str(PARSE_ONLY)], input=json.dumps(argvs),
                            cwd=REPO, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    return dict(zip(argvs, json.loads(result.stdout.splitlines()[-1]), strict=True))


@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: command.where)
def test_documented_command_parses(command: DocCommand, parse_errors):
    error = parse_errors[command.argv]
    assert error is None, f"{command.where}: `{command.text}` does not parse: {error}"


def _without_cores(argv: tuple[str, ...]) -> tuple[str, ...]:
    out, skip = [], False
    for token in argv:
        if skip:
            skip = False
        elif token in ("--cores", "-c", "--jobs", "-j"):
            skip = True
        else:
            out.append(token)
    return tuple(out)


def _configfile_values(argv: tuple[str, ...]) -> list[str]:
    """Every value of ``--configfile`` (it takes several)."""
    values, taking = [], False
    for token in argv:
        taking = token == "--configfile" or (taking and not token.startswith("-"))
        if taking and token != "--configfile":
            values.append(token)
    return values


def _configfiles(argv: tuple[str, ...]) -> tuple[str, ...] | None:
    """The ``--configfile`` values of a command that has nothing else (None otherwise)."""
    rest = _without_cores(argv)[1:]
    if not rest:
        return ("config.yaml",)
    if rest[0] != "--configfile" or any(token.startswith("-") for token in rest[1:]):
        return None
    return rest[1:]


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """A copy of the checkout (a link to each of its files and folders but ``results``) with
    ``../shared`` beside it where the reference data are."""
    base = tmp_path_factory.mktemp("documented")
    folder = base / "checkout"
    folder.mkdir()
    for entry in REPO.iterdir():
        if not entry.name.startswith(".") and entry.name != "results":
            (folder / entry.name).symlink_to(entry)
    if SHARED.is_dir():
        (base / "shared").symlink_to(SHARED)
    return folder


_DRY_RUNS: dict[tuple[str, ...], subprocess.CompletedProcess] = {}


def _dry_run(argv: tuple[str, ...], checkout: Path) -> subprocess.CompletedProcess:
    """``snakemake -n`` of ``argv`` in ``checkout``, once per distinct command."""
    key = _without_cores(argv)
    if key not in _DRY_RUNS:
        args = list(argv[1:])
        if "--directory" in args:  # a reader's folder: one of the test's instead
            where = args.index("--directory") + 1
            args[where] = str(checkout.parent / f"directory-{len(_DRY_RUNS)}")
        _DRY_RUNS[key] = subprocess.run([sys.executable, "-m", "snakemake", *args, "-n"],
                                        cwd=checkout, capture_output=True, text=True,
                                        timeout=600)
    return _DRY_RUNS[key]


@pytest.mark.parametrize("command", SNAKEMAKE_COMMANDS, ids=lambda command: command.where)
def test_documented_snakemake_command_dry_runs(command: DocCommand, checkout):
    reasons = [why for flag, why in PARSE_ONLY_FLAGS.items() if flag in command.argv]
    if reasons:
        pytest.skip(f"parsed only: {reasons[0]}")
    if USER_PATH.search(" ".join(command.argv)):
        pytest.skip("parsed only: a reader's own data folder")
    if {"--sdm", "--use-conda"} & set(command.argv) and shutil.which("conda") is None:
        pytest.skip("parsed only: conda is not installed here")
    configs = _configfiles(command.argv)
    if configs is not None and " ".join(configs) in DRY_RUN_CONFIGS:
        return  # the dry run of test_dry_run_of_every_config[<these configs>]
    files = [REPO / name for name in _configfile_values(command.argv)]
    if not SHARED.is_dir() and any("../shared" in f.read_text() for f in files if f.is_file()):
        pytest.skip(f"{SHARED} is absent (reference data lives in ../shared/data)")
    result = _dry_run(command.argv, checkout)
    assert result.returncode == 0, (
        f"{command.where}: `{command.text}` fails its dry run:\n{result.stdout}{result.stderr}")
