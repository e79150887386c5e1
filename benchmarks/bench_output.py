"""What every benchmark prints with its figures: the machine they come from, and the report."""

from __future__ import annotations

import json
from pathlib import Path

from vcrbench.host import machine

__all__ = ["emit", "machine", "machine_line"]


def machine_line(device: str = "cpu") -> str:
    """``machine: {...}``: :func:`vcrbench.host.machine` as the one line a benchmark prints with
    its figures."""
    return f"machine: {json.dumps(machine(device))}"


def emit(text: str, out: Path | None) -> None:
    """Print a benchmark's Markdown report and, with ``out``, write it there too."""
    print(text)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n")
