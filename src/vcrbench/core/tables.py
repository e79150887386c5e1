"""Tables on disk: Parquet (the interchange format) and the CSV and Markdown derived from it.

Parquet is written reproducibly (zstd, fixed row-group size, no timestamps: the same table
always gives the same bytes) and atomically (:func:`vcrbench.core.files.atomic_write`). CSV and
Markdown are views of a Parquet table for people, never read back by the pipeline.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from vcrbench.core.files import atomic_write

COMPRESSION = "zstd"
ROW_GROUP_SIZE = 4096


def write_table(table: pa.Table, path: str | Path) -> None:
    """Write a Parquet file atomically and reproducibly."""
    with atomic_write(path) as tmp:
        pq.write_table(
            table,
            tmp,
            compression=COMPRESSION,
            row_group_size=ROW_GROUP_SIZE,
            write_statistics=True,
            store_schema=True,
        )


def read_table(path: str | Path, columns: list[str] | None = None) -> pa.Table:
    """Read one Parquet file."""
    return pq.read_table(path, columns=columns)


def read_tables(paths: Iterable[str | Path], columns: list[str] | None = None) -> pa.Table:
    """Read and concatenate Parquet files that share a schema, in the given order."""
    tables = [read_table(p, columns) for p in paths]
    return pa.concat_tables(tables) if tables else pa.table({})


def read_nested_tables(paths: dict[str, dict[str, str | Path]]) -> dict[tuple[str, str], pa.Table]:
    """Read the tables of a nested mapping ``a -> b -> path`` (e.g. model -> corruption -> path)
    into ``(a, b) -> table``."""
    return {(a, b): read_table(path) for a, by in paths.items() for b, path in by.items()}


def write_text(text: str, path: str | Path) -> None:
    """Write a text file (CSV, Markdown) atomically, UTF-8."""
    with atomic_write(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def csv_text(table: pa.Table) -> str:
    """A table as CSV text: a header row, then one row per record; null is an empty cell and a
    float is written as its shortest round-tripping repr."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(table.column_names)
    for row in table.to_pylist():
        writer.writerow(
            ["" if v is None else repr(v) if isinstance(v, float) else v for v in row.values()]
        )
    return buffer.getvalue()


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """The lines of a Markdown table: header, separator, one line per row of cell texts."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    return lines
