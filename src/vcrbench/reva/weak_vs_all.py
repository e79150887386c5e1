"""R on the weak-robust validation set against R on all (evaluation) images, per corruption and
property, with an interval for the difference.

Both curves come from the run's curve estimation (``metrics`` and ``-replicates`` tables of the
two sets); replicate b of both weights images by their keyed weights of replicate b
(:mod:`vcrbench.curves.resampling`), so the difference of replicate areas is paired by index
(independent draws of disjoint image sets, shared weights where the weak set is part of the
evaluation set). Schema of ``reva/r-weak-vs-all.parquet``: ``model``, ``corruption``,
``metric``, ``classes`` (int16), ``R_weak``, ``R_weak_lo``, ``R_weak_hi``, ``R_all``,
``R_all_lo``, ``R_all_hi``, ``difference`` (R_weak − R_all), ``difference_lo``,
``difference_hi``, ``lower_on_weak`` (bool: the whole interval below 0; null without one),
``note``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pyarrow as pa

from vcrbench.curves.tables import finite_or_none, replicate_areas

SCHEMA = pa.schema([
    ("model", pa.string()), ("corruption", pa.string()), ("metric", pa.string()),
    ("classes", pa.int16()), ("R_weak", pa.float64()), ("R_weak_lo", pa.float64()),
    ("R_weak_hi", pa.float64()), ("R_all", pa.float64()), ("R_all_lo", pa.float64()),
    ("R_all_hi", pa.float64()), ("difference", pa.float64()), ("difference_lo", pa.float64()),
    ("difference_hi", pa.float64()), ("lower_on_weak", pa.bool_()), ("note", pa.string()),
])


def _metrics(table: pa.Table) -> dict[tuple[str, int], dict]:
    return {(r["metric"], int(r["classes"])): r for r in table.to_pylist()}


def weak_vs_all_rows(model: str, corruption: str, weak: tuple[pa.Table, pa.Table],
                     evaluation: tuple[pa.Table, pa.Table]) -> list[dict]:
    """Rows of one corruption: ``weak`` and ``evaluation`` are (metrics, replicates)."""
    weak_rows, all_rows = _metrics(weak[0]), _metrics(evaluation[0])
    rows = []
    for key in [k for k in weak_rows if k in all_rows]:
        w, a = weak_rows[key], all_rows[key]
        row = {"model": model, "corruption": corruption, "metric": key[0], "classes": key[1],
               "R_weak": w["R"], "R_weak_lo": w["R_lo"], "R_weak_hi": w["R_hi"],
               "R_all": a["R"], "R_all_lo": a["R_lo"], "R_all_hi": a["R_hi"],
               "difference": None, "difference_lo": None, "difference_hi": None,
               "lower_on_weak": None, "note": None}
        notes = [f"{name}: {r['note']}" for name, r in (("weak", w), ("all", a)) if r["note"]]
        if w["R"] is None or a["R"] is None:
            row["note"] = "; ".join(notes) or "R not reported"
            rows.append(row)
            continue
        row["difference"] = w["R"] - a["R"]
        diff = replicate_areas(weak[1], *key)
        other = replicate_areas(evaluation[1], *key)
        n = min(diff.size, other.size)
        valid = (diff[:n] - other[:n])[np.isfinite(diff[:n] - other[:n])]
        if valid.size >= 2 and w["R_lo"] is not None and a["R_lo"] is not None:
            lo, hi = np.percentile(valid, [2.5, 97.5])
            row["difference_lo"], row["difference_hi"] = finite_or_none(lo), finite_or_none(hi)
            row["lower_on_weak"] = bool(hi < 0)
        else:
            notes.append("no interval for the difference (an R has none)")
        row["note"] = "; ".join(notes) or None
        rows.append(row)
    return rows


def weak_vs_all_table(model: str, curves: Mapping[str, Mapping[str, tuple]]) -> pa.Table:
    """Every corruption's rows; ``curves[c]["weak" | "evaluation"]`` = (metrics, replicates)."""
    rows = [row for c, by_set in curves.items()
            for row in weak_vs_all_rows(model, c, by_set["weak"], by_set["evaluation"])]
    return pa.Table.from_pylist(rows, schema=SCHEMA)
