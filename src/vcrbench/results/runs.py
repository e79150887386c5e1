"""Open results folders and get their tables as polars frames, one ``run`` column naming the
folder each row came from.

>>> runs = open_runs(["results/tiny", "results/tiny-cifar"])
>>> runs.table("summary")                        # DataFrame: run, model, corruption, …
>>> runs.scan("outcomes", corruption="gaussian_noise").filter(pl.col("dv") < 0.1).collect()

Per-sample tables (:data:`~vcrbench.results.catalogue.TABLES` with ``lazy``) are scanned
(:func:`polars.scan_parquet`), and ``run`` / ``model`` / ``corruption`` given to
:meth:`Runs.scan` choose the files before anything is read, so a filter on them reads only
those files; other filters are pushed into the scan by polars.

**Schemas across runs.** The tables of every run (and every file of a table) must have the same
columns with the same types, in any order (the first run's order is kept). A difference, e.g. a
column that a newer version added, is an error that names the runs and the columns;
``diagonal=True`` asks for the union of the columns instead (columns that the first run lacks
come last), null where a run lacks one; never for a type difference.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from vcrbench.errors import VcrbenchError
from vcrbench.results.catalogue import TableSpec, table_spec

#: Sub-folders of which a results folder has at least one.
RUN_FOLDERS = ("metrics", "samples", "scored", "predictions", "outcomes", "rates", "curves",
               "overlap", "reva", "models")
#: The columns that name where a row came from, added in front of a table's own.
ORIGIN = ("run", "model", "corruption")

Selection = str | Sequence[str] | None


@dataclass
class Run:
    """One results folder ``path`` under the name ``name`` (by default the folder's name)."""

    name: str
    path: Path

    @cached_property
    def model_names(self) -> dict[str, str]:
        """Model folder -> the model's name (``trained-fastnet`` -> ``trained:fastnet``), from
        the ``model`` column of its metrics tables; the folder name where it has none."""
        names = {}
        for folder in sorted((self.path / "metrics").glob("*/")):
            tables = sorted(folder.glob("*.parquet"))
            if tables:
                column = pq.read_table(tables[0], columns=["model"]).column("model")
                if len(column) and column[0].is_valid:
                    names[folder.name] = column[0].as_py()
        return names

    def files(self, spec: TableSpec) -> list[tuple[dict[str, str], list[Path]]]:
        """The files of a table: ``(path parts, files)`` per model × corruption (one group for
        a one-file table), shards in shard order. The parts are ``model`` (its name,
        :attr:`model_names`), ``folder`` (the model's folder) and ``corruption``."""
        if not spec.parts:
            path = self.path / spec.pattern
            return [({}, [path])] if path.is_file() else []
        regex = re.escape(spec.pattern)
        for part in spec.parts:
            regex = regex.replace(re.escape("{" + part + "}"), f"(?P<{part}>[^/]+)")
        pattern = re.compile(regex + "$")
        glob = re.sub(r"\{\w+\}", "*", spec.pattern)
        groups: dict[tuple[str, str], list[tuple[int, Path]]] = {}
        for path in self.path.glob(glob):
            found = pattern.match(path.relative_to(self.path).as_posix())
            if not found or any(found.group(0).endswith(s + ".parquet") for s in spec.exclude):
                continue
            parts = found.groupdict()
            shard = int(parts.pop("shard")) if parts.get("shard", "").isdigit() else 0
            key = tuple(sorted(parts.items()))
            groups.setdefault(key, []).append((shard, path))
        out = []
        for key in sorted(groups):
            parts = dict(key)
            if "model" in parts:
                parts["folder"] = parts["model"]
                parts["model"] = self.model_names.get(parts["model"], parts["model"])
            out.append((parts, [p for _, p in sorted(groups[key])]))
        return out

    def missing(self, spec: TableSpec) -> VcrbenchError:
        """The error for a table this run does not have."""
        command = "snakemake --cores N" + ("" if spec.target == "all" else f" {spec.target}")
        return VcrbenchError(
            f"run {self.name!r} ({self.path}) has no {spec.name} table ({spec.pattern}); rule "
            f"{spec.rule} makes it: run `{command}` with that run's config"
            + (f" (it needs {spec.needs} in the config)" if spec.needs else "")
        )


def _chosen(values: Selection) -> set[str] | None:
    if values is None:
        return None
    return {values} if isinstance(values, str) else set(values)


def _schema_of(spec: TableSpec, files: list[Path]) -> pl.Schema:
    if spec.csv:
        return _csv_schema(spec)
    schema = pl.read_parquet_schema(files[0])
    for path in files[1:]:
        other = pl.read_parquet_schema(path)
        if other != schema:
            raise VcrbenchError(f"{path}: columns {_describe(other)} differ from {files[0]}'s "
                                f"{_describe(schema)}; the table was written by two versions, "
                                "rerun its rule")
    return pl.Schema({k: v for k, v in schema.items() if k not in spec.drop})


def _csv_schema(spec: TableSpec) -> pl.Schema:
    """The schema of a table kept only as CSV (the coverage table), from the module that
    writes it (imported only here: it brings scipy)."""
    from vcrbench.vcr.coverage import SCHEMA

    return pl.from_arrow(SCHEMA.empty_table()).schema


def _describe(schema: Mapping[str, pl.DataType]) -> str:
    return ", ".join(f"{k} ({v})" for k, v in schema.items())


class Runs:
    """Several results folders, opened together (:func:`open_runs`)."""

    def __init__(self, runs: Iterable[Run]):
        self.runs = list(runs)

    @property
    def names(self) -> list[str]:
        return [r.name for r in self.runs]

    def scan(self, table: str, *, run: Selection = None, model: Selection = None,
             corruption: Selection = None, diagonal: bool = False) -> pl.LazyFrame:
        """A table of every run as one lazy frame: ``run`` first, then ``model`` /
        ``corruption`` where the path carries them, then the file's columns.

        Args:
            table: a name of :data:`~vcrbench.results.catalogue.TABLES`.
            run, model, corruption: keep only these (a name or several); for tables with one
                file per model / corruption, the other files are never opened.
            diagonal: take the union of the columns where runs differ (module docstring).
        """
        spec = table_spec(table)
        runs, models, corruptions = _chosen(run), _chosen(model), _chosen(corruption)
        if runs is not None and runs - set(self.names):
            raise VcrbenchError(f"no run {', '.join(sorted(runs - set(self.names)))}; runs: "
                                f"{', '.join(self.names)}")
        pieces: list[tuple[str, pl.Schema, pl.LazyFrame]] = []
        for r in self.runs:
            if runs is not None and r.name not in runs:
                continue
            groups = r.files(spec)
            if not groups:
                raise r.missing(spec)
            for parts, files in groups:
                if (models is not None and "model" in parts
                        and not {parts["model"], parts["folder"]} & models) or (
                        corruptions is not None and "corruption" in parts
                        and parts["corruption"] not in corruptions):
                    continue
                schema = _schema_of(spec, files)
                frame = (pl.scan_csv(files[0], schema=schema) if spec.csv else
                         pl.scan_parquet(files).select(list(schema)))
                origin = {"run": r.name, **{k: parts[k] for k in ORIGIN
                                             if k in parts and k not in schema}}
                frame = frame.select(
                    *[pl.lit(v, pl.String).alias(k) for k, v in origin.items()],
                    pl.all(),
                )
                where = f"run {r.name!r}" + "".join(f", {k} {parts[k]!r}" for k in
                                                   ("model", "corruption") if k in parts)
                pieces.append((where, pl.Schema({**{k: pl.String for k in origin}, **schema}),
                               frame))
        if not pieces:
            return pl.LazyFrame(schema=self._empty_schema(spec))
        frame = _concat(spec, pieces, diagonal)
        for column, chosen in (("model", models), ("corruption", corruptions)):
            if chosen is not None and column not in spec.parts:
                if column not in frame.collect_schema():
                    raise VcrbenchError(f"the {spec.name} table has no {column} column")
                frame = frame.filter(pl.col(column).is_in(sorted(chosen)))
        return frame

    def table(self, table: str, **selection) -> pl.DataFrame:
        """:meth:`scan`, read (same arguments)."""
        return self.scan(table, **selection).collect()

    def _empty_schema(self, spec: TableSpec) -> pl.Schema:
        for r in self.runs:
            for parts, files in r.files(spec):
                schema = _schema_of(spec, files)
                origin = [k for k in ORIGIN if k == "run" or (k in parts and k not in schema)]
                return pl.Schema({**{k: pl.String for k in origin}, **schema})
        return pl.Schema({"run": pl.String})


def _concat(spec: TableSpec, pieces: list[tuple[str, pl.Schema, pl.LazyFrame]],
            diagonal: bool) -> pl.LazyFrame:
    """One frame of every piece, after the schema check of the module docstring."""
    first_where, first, _ = pieces[0]
    columns = dict(first)
    for where, schema, _ in pieces[1:]:
        types = [f"{k}: {columns[k]} in {first_where}, {v} in {where}"
                 for k, v in schema.items() if k in columns and columns[k] != v]
        if types:
            raise VcrbenchError(f"the {spec.name} tables have columns of different types ("
                                + "; ".join(types) + "); rerun the older run's rule "
                                f"{spec.rule} to bring it to one version")
        lacking = [k for k in columns if k not in schema]
        extra = [k for k in schema if k not in columns]
        if (lacking or extra) and not diagonal:
            raise VcrbenchError(
                f"the {spec.name} tables differ in columns: {where} "
                + (f"lacks {', '.join(lacking)}" if lacking else "")
                + (" and " if lacking and extra else "")
                + (f"has {', '.join(extra)}" if extra else "")
                + f" against {first_where} (written by two versions of vcrbench); rerun the "
                f"older run's rule {spec.rule}, or ask for the union of the columns (null where "
                "a run lacks one) with diagonal=True / --diagonal"
            )
        columns.update({k: v for k, v in schema.items() if k not in columns})
    frames = [
        frame.select([pl.col(k) if k in schema else pl.lit(None, v).alias(k)
                      for k, v in columns.items()])
        for _, schema, frame in pieces
    ]
    return pl.concat(frames, how="vertical")


def open_runs(paths: Iterable[str | Path] | Mapping[str, str | Path]) -> Runs:
    """Results folders ``results/<run>/`` as :class:`Runs`, each named after its folder, or by
    the keys of a mapping ``name -> path`` (for two folders of the same name).

    Raises a :class:`~vcrbench.errors.VcrbenchError` for a path that is no results folder or two
    runs of the same name.
    """
    items = (list(paths.items()) if isinstance(paths, Mapping)
             else [(Path(p).resolve().name, p) for p in paths])
    runs = []
    for name, path in items:
        folder = Path(path)
        if not folder.is_dir():
            raise VcrbenchError(f"{path}: no such results folder")
        if not any((folder / sub).is_dir() for sub in RUN_FOLDERS):
            raise VcrbenchError(f"{path}: not a results folder (none of {', '.join(RUN_FOLDERS)}"
                                "); give results/<run>/ of a workflow run")
        runs.append(Run(str(name), folder))
    seen: dict[str, Path] = {}
    for r in runs:
        if r.name in seen:
            raise VcrbenchError(
                f"two runs are called {r.name!r} ({seen[r.name]} and {r.path}); name them: "
                f"open_runs({{'old': ..., 'new': ...}}) or, on the command line, NAME=PATH"
            )
        seen[r.name] = r.path
    if not runs:
        raise VcrbenchError("no results folder given")
    return Runs(runs)
