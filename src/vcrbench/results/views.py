"""Views of a results table for people and other programs: runs or models side by side
(:func:`side_by_side`), and the table as Markdown, CSV, JSON or Parquet (:func:`render`,
:func:`write`).

In Markdown a value is shown with its 95 % interval, ``0.507 [0.373, 0.545]``, wherever the
table has ``X``, ``X_lo`` and ``X_hi`` (or ``value``, ``lo``, ``hi``); a null is ``–``. Floats
have three decimals (three significant digits below 0.001 or from 1000 on). CSV writes
floats as polars does (shortest round-trip) and list cells joined by ``;``; JSON is a list of
row objects; Parquet is written as the pipeline writes its tables
(:func:`vcrbench.core.tables.write_table`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from vcrbench.core.tables import markdown_table, write_table, write_text
from vcrbench.errors import VcrbenchError

FORMATS = ("md", "csv", "json", "parquet")


def interval_of(column: str, columns: Sequence[str]) -> tuple[str, str] | None:
    """The ``(lo, hi)`` columns of ``column``'s interval among ``columns``, or None."""
    lo, hi = (("lo", "hi") if column == "value" else (f"{column}_lo", f"{column}_hi"))
    return (lo, hi) if lo in columns and hi in columns else None


def side_by_side(frame: pl.DataFrame, *, by: str, values: Sequence[str],
                 keys: Sequence[str]) -> pl.DataFrame:
    """One row per key, one group of columns per value of ``by`` (e.g. per run): ``"<by
    value>: <column>"`` for each of ``values`` and its interval columns.

    Args:
        frame: a table of :meth:`~vcrbench.results.runs.Runs.scan`.
        by: the column whose values become column groups (``run``, ``model``, …).
        values: the columns shown in each group (``R``: also ``R_lo``, ``R_hi``).
        keys: the columns that identify a row (``run`` is added where ``by`` is another).
    """
    for column in (by, *values):
        if column not in frame.columns:
            raise VcrbenchError(f"--pivot/--values: no column {column!r}; columns: "
                                f"{', '.join(frame.columns)}")
    index = [k for k in ("run", *keys) if k in frame.columns and k != by and k not in values]
    index = list(dict.fromkeys(index))
    shown = [c for v in values for c in (v, *(interval_of(v, frame.columns) or ()))]
    out = frame.select(index).unique(maintain_order=True)
    for group in frame.get_column(by).unique(maintain_order=True).to_list():
        part = frame.filter(pl.col(by).eq_missing(group))
        if part.select(index).is_duplicated().any():
            raise VcrbenchError(
                f"--pivot {by}: {group!r} has several rows per {', '.join(index)}; narrow the "
                "table with --where (e.g. metric=accuracy) or pivot on another column")
        part = part.select(*index, *[pl.col(c).alias(f"{group}: {c}") for c in shown])
        out = out.join(part, on=index, how="left", nulls_equal=True, maintain_order="left")
    return out


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if value == 0 or 0.001 <= abs(value) < 1000:
        return f"{value:.3f}"
    return f"{value:.3g}"


def _cell(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value)
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown(frame: pl.DataFrame) -> str:
    """The table as Markdown, values with their intervals (module docstring)."""
    header, parts = [], []
    hidden = {c for col in frame.columns for c in (interval_of(col, frame.columns) or ())}
    for column in frame.columns:
        if column in hidden:
            continue
        interval = interval_of(column, frame.columns)
        header.append(f"{column} [95 % interval]" if interval else column)
        parts.append((column, interval))
    rows = []
    for row in frame.iter_rows(named=True):
        cells = []
        for column, interval in parts:
            text = _cell(row[column])
            if interval and row[interval[0]] is not None and row[interval[1]] is not None:
                text += f" [{_cell(row[interval[0]])}, {_cell(row[interval[1]])}]"
            cells.append(text)
        rows.append(cells)
    return "\n".join(markdown_table(header, rows)) + "\n"


def _flat(frame: pl.DataFrame) -> pl.DataFrame:
    """List columns as text joined by ``;`` (CSV has no lists)."""
    return frame.with_columns(
        pl.col(c).cast(pl.List(pl.String)).list.join(";")
        for c, t in frame.schema.items() if isinstance(t, pl.List)
    )


def render(frame: pl.DataFrame, fmt: str) -> str:
    """The table as text in ``fmt`` (md, csv or json)."""
    if fmt == "md":
        return markdown(frame)
    if fmt == "csv":
        return _flat(frame).write_csv()
    if fmt == "json":
        return json.dumps(frame.to_dicts(), indent=1, ensure_ascii=False) + "\n"
    raise VcrbenchError(f"format {fmt!r} is not text; use one of {', '.join(FORMATS)}")


def write(frame: pl.DataFrame, fmt: str, path: str | Path) -> None:
    """Write the table to ``path`` in ``fmt`` (atomically; Parquet as the pipeline writes)."""
    if fmt not in FORMATS:
        raise VcrbenchError(f"format {fmt!r}: use one of {', '.join(FORMATS)}")
    if fmt == "parquet":
        write_table(frame.to_arrow(), path)
    else:
        write_text(render(frame, fmt), path)
