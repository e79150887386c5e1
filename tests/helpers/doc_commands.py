"""The commands README.md and docs/*.md show, extracted so that tests can run or parse them.

A command is a ``snakemake``, ``vcrbench`` or ``python``/``python3`` line of a fenced ``bash``
block (continuation lines joined, ``# comments`` dropped, ``&&`` chains split) or an inline code
span that starts with one of those words. Synopses are instantiated the way a reader would
type them (an inline ``vcrbench`` or ``vcrbench results`` names a command and is not
one): an optional group ``[--json]`` is taken, the first of ``md|csv|json`` is chosen, a
placeholder ``<name>`` becomes ``name``, and elisions (``…``, ``...``) are dropped.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from helpers.paths import REPO

#: The documents whose commands are checked.
DOCUMENTS = (REPO / "README.md", *sorted((REPO / "docs").glob("*.md")))
#: Words that start a checked command.
PROGRAMS = ("snakemake", "vcrbench", "python", "python3")
FENCE = re.compile(r"^```(?P<lang>[\w-]*)\n(?P<body>.*?)^```", re.MULTILINE | re.DOTALL)
INLINE = re.compile(r"(?<!`)`(?P<code>[^`\n]+(?:\n[^`\n]+)?)`(?!`)")
#: ``[--flag …]`` or ``[REF DIST …]``: an optional part of a synopsis (not a YAML list).
OPTIONAL = re.compile(r"\[(?P<inner>(?:--?|[A-Z]{2,})[^\[\]]*)\]")
PLACEHOLDER = re.compile(r"<(?P<name>[\w -]+)>")
ELISION = re.compile(r",?(?:\.\.\.|…)")


@dataclass(frozen=True)
class DocCommand:
    """One documented command: where it is, as written, and the argv a reader would type."""

    where: str  # e.g. "docs/reva.md:120"
    text: str
    argv: tuple[str, ...]

    @property
    def program(self) -> str:
        return self.argv[0]


def instantiate(text: str) -> tuple[str, ...]:
    """The argv of a documented command line (see the module docstring for the rules)."""
    text = OPTIONAL.sub(lambda m: m["inner"], text)
    text = PLACEHOLDER.sub(lambda m: m["name"].replace(" ", "-"), text)
    argv = []
    for token in shlex.split(text, comments=True):
        token = ELISION.sub("", token)
        if "|" in token and not token.startswith(("{", "[")):
            token = token.split("|")[0]  # md|csv|json: the first choice
        if token:
            argv.append(token)
    return tuple(argv)


def _commands_of(line: str) -> list[str]:
    """The commands of one shell line: ``a && b`` and ``a; b`` are two."""
    parts = re.split(r"\s(?:&&|;)\s", line)
    return [p.strip() for p in parts if p.strip().split(" ", 1)[0] in PROGRAMS]


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def extract(path: Path) -> list[DocCommand]:
    """Every checked command of one Markdown file, in order."""
    text = path.read_text(encoding="utf-8")
    name = str(path.relative_to(REPO))
    found: list[tuple[int, str]] = []
    for fence in FENCE.finditer(text):
        if fence["lang"] not in ("bash", "sh", "shell", "console"):
            continue
        first = _line_of(text, fence.start("body"))
        lines = fence["body"].split("\n")
        number, pending = first, ""
        for i, line in enumerate(lines):
            if not pending:
                number = first + i
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            for command in _commands_of(pending + line):
                found.append((number, command))
            pending = ""
    prose = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    for span in INLINE.finditer(prose):
        code = " ".join(span["code"].split())
        if re.fullmatch(r"vcrbench(?: [a-z-]+)?|snakemake|python3?", code):
            continue  # the name of a program or command in a sentence, not a command line
        for command in _commands_of(code):
            found.append((_line_of(prose, span.start()), command))
    commands = []
    for number, command in sorted(found):
        argv = instantiate(command)
        if argv[0].startswith("python") and argv[1:2] == ("-m",) and argv[2:3] != ("vcrbench",):
            continue  # python -m pip / venv: not this project's arguments
        commands.append(DocCommand(f"{name}:{number}", command, argv))
    return commands


def documented_commands() -> list[DocCommand]:
    """Every checked command of README.md and docs/*.md."""
    return [command for path in DOCUMENTS for command in extract(path)]
