"""Human trial data: two readers, one normalised trial table, per-condition rates.

Formats (``human[].format`` in the config):

- ``model-vs-human``: the raw CSVs of Geirhos et al. (2018, 2021) as published in
  bethgelab/model-vs-human (``raw-data/<experiment>/<experiment>_subject-<k>_session_<s>.csv``),
  one row per trial with the columns ``subj, Session, trial, rt, object_response, category,
  condition, imagename``: ``category`` is the true one of the 16 entry-level categories,
  ``object_response`` the answer (``na``: no answer in time, counted as wrong), ``condition``
  the corruption level of the experiment (noise width, blur σ, …). The experiment's name is the
  file-name prefix before ``_subject-``. A trial's ``image_id`` is its *source* image, the
  ImageNet name at the end of ``imagename`` (``…_elephant_10_n02504458_7209.png`` →
  ``n02504458_7209``): every subject sees every source image once, at some condition, so
  images and subjects are crossed factors for the bootstrap (:func:`source_image`). The
  stimuli are not part of the data, so trials have no Δv of their own:
  :mod:`vcrbench.human.stimuli` maps each condition to a Δv distribution.
- ``trials``: a generic per-trial table (CSV or Parquet) for data like the VCR paper's own, with
  the columns ``subject`` (string), ``image_id`` (string), ``dv`` (Δv of the stimulus, in
  [0, 1]), ``response`` and ``label`` (category names of the 16 categories; an empty response
  is no answer), and optionally ``clean_response`` (the same subject's answer on the clean
  image, for prediction consistency) and ``corruption`` (then only the rows of the data set's
  configured corruption are used, so one table can hold every corruption of an experiment).

Both are read into :data:`TRIALS_SCHEMA`: ``subject, image_id, condition`` (float64, null for
``trials``), ``dv`` (float64, null until assigned for ``model-vs-human``), ``response``
(string, null: no answer), ``label`` (string), ``clean_response`` (string, nullable), ``order``
(int64: the trial's position in the files as read, for deterministic processing). A file that
is empty, lacks a column or has an unknown category or a bad number stops with a
``VcrbenchError`` naming the file and the line.
"""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from vcrbench.data.imagenet16 import CATEGORIES16
from vcrbench.errors import VcrbenchError

FORMATS = ("model-vs-human", "trials")
MVH_COLUMNS = ("subj", "Session", "trial", "rt", "object_response", "category", "condition",
               "imagename")
TRIALS_COLUMNS = ("subject", "image_id", "dv", "response", "label")
NO_ANSWER = ("na", "")

TRIALS_SCHEMA = pa.schema(
    [
        ("subject", pa.string()),
        ("image_id", pa.string()),
        ("condition", pa.float64()),
        ("dv", pa.float64()),
        ("response", pa.string()),
        ("label", pa.string()),
        ("clean_response", pa.string()),
        ("order", pa.int64()),
    ]
)


def _files(path: str | Path, suffixes: tuple[str, ...]) -> list[Path]:
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise VcrbenchError(f"human data: {path} is neither a file nor a folder")
    files = sorted(p for p in path.iterdir() if p.suffix.lower() in suffixes and p.is_file())
    if not files:
        raise VcrbenchError(f"human data: no {'/'.join(suffixes)} files in {path}")
    return files


def experiment_name(path: str | Path) -> str:
    """The model-vs-human experiment of a raw-data file or folder (``uniform-noise``, …)."""
    names = {p.name.split("_subject-")[0] for p in _files(path, (".csv",))
             if "_subject-" in p.name}
    if len(names) != 1:
        raise VcrbenchError(
            f"human data: {path}: model-vs-human files are named "
            f"<experiment>_subject-<k>_session_<s>.csv, one experiment per data set; found "
            f"{sorted(names) or 'none'}"
        )
    return names.pop()


def _category(value: str, file: Path, line: int, column: str, allow_none: bool) -> str | None:
    value = value.strip()
    if allow_none and value.lower() in NO_ANSWER:
        return None
    if value not in CATEGORIES16:
        raise VcrbenchError(
            f"human data: {file}: line {line}: {column} {value!r} is not one of the 16 "
            f"categories ({', '.join(CATEGORIES16)})"
        )
    return value


def _number(value: str, file: Path, line: int, column: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise VcrbenchError(f"human data: {file}: line {line}: {column} {value!r} is not a number")
    return number


def _rows(file: Path, required: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:
    with file.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        header = reader.fieldnames or []
        missing = [c for c in required if c not in header]
        if missing:
            raise VcrbenchError(
                f"human data: {file}: line 1: missing column(s) {', '.join(missing)} "
                f"(has: {', '.join(header) or 'nothing'})"
            )
        rows = [(reader.line_num, row) for row in reader]
        end = reader.line_num
    if not rows:
        raise VcrbenchError(f"human data: {file}: line {end + 1}: no trials after the header")
    for line, row in rows:
        if None in row or any(row.get(c) is None for c in required):
            raise VcrbenchError(f"human data: {file}: line {line}: wrong number of fields")
    return rows


_SOURCE_IMAGE = re.compile(r"(n\d{8}_\d+)(?:\.[A-Za-z]+)?$")


def source_image(imagename: str) -> str:
    """The ImageNet source image of a model-vs-human stimulus file name (the whole name when it
    does not end in ``n<8 digits>_<number>``)."""
    name = imagename.strip()
    found = _SOURCE_IMAGE.search(name)
    return found.group(1) if found else name


def read_model_vs_human(path: str | Path) -> pa.Table:
    """Trials of a model-vs-human raw-data file or folder as :data:`TRIALS_SCHEMA`."""
    experiment_name(path)
    records: list[dict] = []
    for file in _files(path, (".csv",)):
        for line, row in _rows(file, MVH_COLUMNS):
            records.append(
                {
                    "subject": row["subj"].strip(),
                    "image_id": source_image(row["imagename"]),
                    "condition": _number(row["condition"], file, line, "condition"),
                    "dv": None,
                    "response": _category(row["object_response"], file, line,
                                          "object_response", True),
                    "label": _category(row["category"], file, line, "category", False),
                    "clean_response": None,
                    "order": len(records),
                }
            )
    return pa.Table.from_pylist(records, schema=TRIALS_SCHEMA)


def read_trials(path: str | Path, corruption: str | None = None) -> pa.Table:
    """Trials of the generic ``trials`` format (CSV or Parquet file, or a folder of them).

    With ``corruption``, files that have a ``corruption`` column contribute only that
    corruption's rows (one table may hold an experiment's every corruption).
    """
    records: list[dict] = []
    seen: set[str] = set()
    for file in _files(path, (".csv", ".parquet")):
        if file.suffix.lower() == ".parquet":
            table = pq.read_table(file)
            missing = [c for c in TRIALS_COLUMNS if c not in table.column_names]
            if missing:
                raise VcrbenchError(f"human data: {file}: missing column(s) {', '.join(missing)}")
            if table.num_rows == 0:
                raise VcrbenchError(f"human data: {file}: row 1: no trials")
            rows = [
                (i + 1, {k: "" if v is None else str(v) for k, v in row.items()})
                for i, row in enumerate(table.to_pylist())
            ]
        else:
            rows = _rows(file, TRIALS_COLUMNS)
        for line, row in rows:
            if corruption is not None and row.get("corruption") is not None:
                seen.add(row["corruption"].strip())
                if row["corruption"].strip() != corruption:
                    continue
            dv = _number(row["dv"], file, line, "dv")
            if not 0.0 <= dv <= 1.0:
                raise VcrbenchError(f"human data: {file}: line {line}: dv {dv} is outside [0, 1]")
            clean = row.get("clean_response")
            records.append(
                {
                    "subject": row["subject"].strip(),
                    "image_id": row["image_id"].strip(),
                    "condition": None,
                    "dv": dv,
                    "response": _category(row["response"], file, line, "response", True),
                    "label": _category(row["label"], file, line, "label", False),
                    "clean_response": None if clean is None else _category(
                        clean, file, line, "clean_response", True),
                    "order": len(records),
                }
            )
    if not records:
        raise VcrbenchError(
            f"human data: {path}: no trials of corruption {corruption!r} (the corruption column "
            f"has: {', '.join(sorted(seen))})"
        )
    return pa.Table.from_pylist(records, schema=TRIALS_SCHEMA)


def read_human(fmt: str, path: str | Path, corruption: str | None = None) -> pa.Table:
    """Read a human data set of the given format (module docstring); ``corruption`` selects
    that corruption's rows of a ``trials`` table with a ``corruption`` column."""
    if fmt == "model-vs-human":
        return read_model_vs_human(path)
    if fmt == "trials":
        return read_trials(path, corruption)
    raise VcrbenchError(f"human data: unknown format {fmt!r}; use one of {', '.join(FORMATS)}")


def correct(trials: pa.Table) -> np.ndarray:
    """``(N,)`` bool: the answer equals the label (no answer is wrong)."""
    return pc.fill_null(pc.equal(trials.column("response"), trials.column("label")),
                        False).to_numpy(zero_copy_only=False).astype(bool)


def condition_accuracy(trials: pa.Table) -> pa.Table:
    """Per condition (ascending): ``condition, n_trials, n_correct, n_no_answer, accuracy``."""
    conditions = trials.column("condition").to_numpy(zero_copy_only=False).astype(np.float64)
    if np.isnan(conditions).any():
        raise VcrbenchError("human data: per-condition accuracy needs a condition per trial")
    ok = correct(trials)
    no_answer = pc.is_null(trials.column("response")).to_numpy(zero_copy_only=False)
    levels = np.unique(conditions)
    rows = []
    for level in levels:
        at = conditions == level
        rows.append(
            {
                "condition": float(level),
                "n_trials": int(at.sum()),
                "n_correct": int(ok[at].sum()),
                "n_no_answer": int(no_answer[at].sum()),
                "accuracy": float(ok[at].mean()),
            }
        )
    return pa.Table.from_pylist(
        rows,
        schema=pa.schema([("condition", pa.float64()), ("n_trials", pa.int64()),
                          ("n_correct", pa.int64()), ("n_no_answer", pa.int64()),
                          ("accuracy", pa.float64())]),
    )
