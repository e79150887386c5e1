"""Parquet interchange: deterministic, atomic writes and plain reads.

A table is written to ``<name>.tmp-<pid>`` in the same folder, flushed, and renamed over the
final name, so a killed job never leaves a file that looks complete. The same table always gives
the same bytes (no timestamps; fixed compression and row-group size).
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

COMPRESSION = "zstd"
ROW_GROUP_SIZE = 4096


def atomic_path(path: str | Path) -> Path:
    """The temporary sibling a writer fills before renaming it to ``path``."""
    path = Path(path)
    return path.with_name(f".{path.name}.tmp-{os.getpid()}")


def replace_atomically(tmp: Path, path: str | Path) -> None:
    """fsync ``tmp`` and rename it to ``path`` (atomic on POSIX file systems)."""
    with open(tmp, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def write_table(table: pa.Table, path: str | Path) -> None:
    """Write a Parquet file atomically and reproducibly."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = atomic_path(path)
    try:
        pq.write_table(
            table,
            tmp,
            compression=COMPRESSION,
            row_group_size=ROW_GROUP_SIZE,
            write_statistics=True,
            store_schema=True,
        )
        replace_atomically(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def read_table(path: str | Path, columns: list[str] | None = None) -> pa.Table:
    """Read one Parquet file."""
    return pq.read_table(path, columns=columns)


def read_tables(paths: list[str | Path], columns: list[str] | None = None) -> pa.Table:
    """Read and concatenate Parquet files that share a schema, in the given order."""
    tables = [read_table(p, columns) for p in paths]
    return pa.concat_tables(tables) if tables else pa.table({})


def write_text(text: str, path: str | Path) -> None:
    """Write a text file (CSV, Markdown) atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = atomic_path(path)
    try:
        tmp.write_text(text, encoding="utf-8")
        replace_atomically(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
