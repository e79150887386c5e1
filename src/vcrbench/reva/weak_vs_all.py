"""R on the weak-robust validation set against R on all (evaluation) images, per corruption and
property, with a paired interval for the difference.

Both curves come from the run's curve estimation (:mod:`vcrbench.vcr.estimation`, run on each
set): ``metrics/<m>/<c>.parquet`` and its ``-replicates`` on the evaluation set,
``reva/weak/metrics/<m>/<c>.parquet`` and its replicates on the weak set. Replicate b of either
curve weighs every image by its keyed Poisson weight of replicate b
(:mod:`vcrbench.curves.resampling`), so the replicate areas are paired by index: the difference
of replicate b's areas is one bootstrap draw of the difference (independent draws where the sets
are disjoint, shared weights where the weak set is part of the evaluation set).

Schema of ``reva/r-weak-vs-all.parquet`` (one row per corruption × property, properties in
:func:`vcrbench.core.properties.table_properties` order: the data set's own label space,
then ImageNet's 16 classes): ``model``, ``corruption``, ``metric``
(strings), ``classes`` (int16), ``R_weak``, ``R_weak_lo``, ``R_weak_hi``, ``R_all``,
``R_all_lo``, ``R_all_hi`` (float64, fractions: the two metrics rows), ``difference``
(``R_weak − R_all``), ``difference_lo``, ``difference_hi`` (95 % percentile interval of the
replicate-wise difference of areas), ``lower_on_weak`` (bool: ``difference_hi < 0``; null when
there is no interval), ``note`` (string: the metrics' notes, prefixed ``weak:`` / ``all:``, and
why a value is null; null when nothing to say).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pyarrow as pa

from vcrbench.core.properties import table_properties
from vcrbench.curves.bootstrap import metric_interval
from vcrbench.curves.tables import finite_or_none, replicate_areas

SCHEMA = pa.schema([
    ("model", pa.string()), ("corruption", pa.string()), ("metric", pa.string()),
    ("classes", pa.int16()), ("R_weak", pa.float64()), ("R_weak_lo", pa.float64()),
    ("R_weak_hi", pa.float64()), ("R_all", pa.float64()), ("R_all_lo", pa.float64()),
    ("R_all_hi", pa.float64()), ("difference", pa.float64()), ("difference_lo", pa.float64()),
    ("difference_hi", pa.float64()), ("lower_on_weak", pa.bool_()), ("note", pa.string()),
])
#: The two sets, as named in notes.
_NAMES = {"weak": "weak", "evaluation": "all"}
#: The two sets' columns.
_COLUMNS = {"weak": "R_weak", "evaluation": "R_all"}


def _metrics(table: pa.Table) -> dict[tuple[str, int], dict]:
    return {(r["metric"], int(r["classes"])): r for r in table.to_pylist()}


def _paired(row: dict) -> bool:
    """Whether a curve's replicates resample images (and so are paired with other curves)."""
    resampled = row.get("resampled")
    return resampled is None or str(resampled).startswith("images")


def weak_vs_all_rows(model: str, corruption: str, weak: tuple[pa.Table, pa.Table],
                     evaluation: tuple[pa.Table, pa.Table]) -> list[dict]:
    """Rows of one corruption (module docstring); ``weak`` and ``evaluation`` are each set's
    (metrics, replicates) tables."""
    found = {"weak": _metrics(weak[0]), "evaluation": _metrics(evaluation[0])}
    replicates = {"weak": weak[1], "evaluation": evaluation[1]}
    rows = []
    for key in table_properties(weak[0], evaluation[0]):
        metric, classes = key
        w, a = found["weak"].get(key), found["evaluation"].get(key)
        row = {"model": model, "corruption": corruption, "metric": metric, "classes": classes,
               "R_weak": None, "R_weak_lo": None, "R_weak_hi": None,
               "R_all": None, "R_all_lo": None, "R_all_hi": None,
               "difference": None, "difference_lo": None, "difference_hi": None,
               "lower_on_weak": None, "note": None}
        notes = []
        for set_name, r in (("weak", w), ("evaluation", a)):
            name, column = _NAMES[set_name], _COLUMNS[set_name]
            if r is None:
                notes.append(f"{name}: no {metric}-{classes} curve")
                continue
            row.update({column: r["R"], f"{column}_lo": r["R_lo"], f"{column}_hi": r["R_hi"]})
            if r["note"]:
                notes.append(f"{name}: {r['note']}")
            elif r["R"] is None:
                notes.append(f"{name}: R not reported")
        if row["R_weak"] is not None and row["R_all"] is not None:
            row["difference"] = row["R_weak"] - row["R_all"]
            notes += _interval(row, replicates, metric, classes, w, a)
        row["note"] = "; ".join(notes) or None
        rows.append(row)
    return rows


def _interval(row: dict, replicates: Mapping[str, pa.Table], metric: str, classes: int,
              weak: dict, every: dict) -> list[str]:
    """Fill the difference's interval into ``row``; the notes it needs."""
    if row["R_weak_lo"] is None or row["R_all_lo"] is None:
        return ["no interval for the difference: an R has none"]
    areas = {s: replicate_areas(replicates[s], metric, classes) for s in replicates}
    n = min(a.size for a in areas.values())
    difference = areas["weak"][:n] - areas["evaluation"][:n]
    if np.sum(np.isfinite(difference)) < 2:
        return ["no interval for the difference: fewer than 2 replicates with data"]
    lo, hi = metric_interval(difference)
    row.update(difference_lo=finite_or_none(lo), difference_hi=finite_or_none(hi),
               lower_on_weak=bool(hi < 0))
    notes = []
    if areas["weak"].size != areas["evaluation"].size:
        notes.append(f"replicates paired over the first {n} (weak {areas['weak'].size}, all "
                     f"{areas['evaluation'].size})")
    if not (_paired(weak) and _paired(every)):
        notes.append("a curve's replicates resample samples, not images: the difference's "
                     "replicates are not paired")
    return notes


def weak_vs_all_table(model: str, curves: Mapping[str, Mapping[str, tuple[pa.Table, pa.Table]]]
                      ) -> pa.Table:
    """Every corruption's rows; ``curves[c]["weak" | "evaluation"]`` = (metrics, replicates)."""
    rows = [row for c, by_set in curves.items()
            for row in weak_vs_all_rows(model, c, by_set["weak"], by_set["evaluation"])]
    return pa.Table.from_pylist(rows, schema=SCHEMA)
