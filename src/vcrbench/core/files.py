"""The one atomic write behind every output file (tables, text, figures, checkpoints).

A file is written to ``.<name>.tmp-<pid>`` in its own folder, flushed to disk and renamed over
its final name (atomic on POSIX file systems), so a killed or failing job never leaves a file
under its final name that looks complete, and a failed rewrite keeps the previous file.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path


def temporary_sibling(path: str | Path) -> Path:
    """The temporary file a writer fills before it is renamed to ``path``."""
    path = Path(path)
    return path.with_name(f".{path.name}.tmp-{os.getpid()}")


def replace_atomically(tmp: Path, path: str | Path) -> None:
    """fsync ``tmp`` and rename it to ``path``."""
    with open(tmp, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(tmp, path)


@contextlib.contextmanager
def atomic_write(path: str | Path) -> Iterator[Path]:
    """Yield the temporary path to write ``path``'s content to; on success it replaces ``path``.

    The parent folder is created. The temporary file is removed whatever happens, so an
    exception inside the block leaves ``path`` as it was (absent, or the previous file).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_sibling(path)
    try:
        yield tmp
        replace_atomically(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def as_paths(files: str | os.PathLike | list) -> list[str]:
    """A Snakemake named input or output (one path, or a list of them) as a list of paths."""
    if isinstance(files, (str, os.PathLike)):
        return [str(files)]
    return [str(f) for f in files]
