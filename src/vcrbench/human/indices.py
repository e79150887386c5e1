"""HMRI and MRSI: how a model's curve compares with the human curve (VCR paper, Definitions 1–2).

* ``HMRI = 1 − A^{h>m} / A^h`` (Human-Relative Model Robustness Index): the share of the human
  area that the model keeps, 1 when the model is never below the humans.
* ``MRSI = A^{m>h} / A^m`` (Model Robustness Superiority Index): the share of the model's area
  above the humans, 0 when the model is never above.

``A^h``, ``A^m`` are the areas under the human and model curves and ``A^{h>m} = ∫ (s_h −
s_m)^+``, ``A^{m>h} = ∫ (s_m − s_h)^+`` the leads (:mod:`vcrbench.curves.areas`: exact positive
parts of the piecewise-linear interpolant on a grid). For callables the grid is
:data:`~vcrbench.curves.areas.DENSE_GRID` and the areas are exact for fitted splines; for the
cached curve tables it is their :data:`~vcrbench.curves.areas.GRID` (step 0.001) with
trapezoid areas, which for these quadratic splines agrees with the exact integrals far below
the 4th decimal. Degenerate curves: ``HMRI = 1`` when ``A^h = 0`` (a human curve that is 0
everywhere has no lead to lose), ``MRSI = 0`` when ``A^m = 0``.

A model property is compared with the human curve of the same metric (humans answer 16-way,
so only the model's 16-class rows get human-relative values). Intervals (95 %) pair bootstrap
replicate ``b`` of the human curve with replicate ``b`` of the model curve: the two resample
different units (the humans' subjects and images, the run's images), so this is a draw from
the product of two independent bootstraps, as the two data sets are independent.

**Range.** With ``human_range: supported`` (default) every area is taken over the Δv range the
human data support, ``[dv_min, dv_max]`` of the human metrics (:mod:`vcrbench.human.curves`), and
the row says which range: where the human data start above Δv = 0 (the uniform-noise experiment
starts at ≈ 0.33) an extrapolated human curve is not compared with a measured model curve.
Over ``[0, 1]`` these are the paper's indices. ``human_range: full`` always uses [0, 1] (the
paper's definition, with the human curve extrapolated where it has no data). Where the model's
or the humans' curve has too little support (``note`` of their metrics) HMRI and MRSI are null.

Schema of ``metrics/<m>/<c>-human.parquet``: ``model, corruption, metric, classes, HMRI,
HMRI_lo, HMRI_hi, MRSI, MRSI_lo, MRSI_hi, A_h, A_m`` (areas over the compared range),
``human_dv_min, human_dv_max`` (the compared range), ``human_source`` (whose data and, for a
transferred curve, from which corruption), ``note`` (why values are null or restricted).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from vcrbench.core.properties import HUMAN_CLASSES, select
from vcrbench.curves.areas import (
    DENSE_GRID,
    Curve,
    area,
    curve_values,
    positive_area,
    trapezoid_area,
)
from vcrbench.curves.bootstrap import metric_interval
from vcrbench.curves.tables import finite_or_none, replicate_curves
from vcrbench.errors import VcrbenchError

#: Areas at most this are treated as 0 by the index conventions.
ZERO_AREA = 1e-12

SCHEMA = pa.schema(
    [
        ("model", pa.string()),
        ("corruption", pa.string()),
        ("metric", pa.string()),
        ("classes", pa.int16()),
        ("HMRI", pa.float64()),
        ("HMRI_lo", pa.float64()),
        ("HMRI_hi", pa.float64()),
        ("MRSI", pa.float64()),
        ("MRSI_lo", pa.float64()),
        ("MRSI_hi", pa.float64()),
        ("A_h", pa.float64()),
        ("A_m", pa.float64()),
        ("human_dv_min", pa.float64()),
        ("human_dv_max", pa.float64()),
        ("human_source", pa.string()),
        ("note", pa.string()),
    ]
)
#: Values of ``human_range``.
HUMAN_RANGES = ("supported", "full")
#: Grid points within this distance of a range end count as inside.
RANGE_TOL = 1e-9


def hmri_from_areas(a_h: np.ndarray, a_h_gt_m: np.ndarray) -> np.ndarray:
    """``1 − A^{h>m} / A^h`` in [0, 1] (1 where ``A^h = 0``); works elementwise."""
    a_h = np.asarray(a_h, dtype=np.float64)
    a_hm = np.asarray(a_h_gt_m, dtype=np.float64)
    safe = np.where(a_h > ZERO_AREA, a_h, 1.0)
    return np.clip(np.where(a_h > ZERO_AREA, 1.0 - a_hm / safe, 1.0), 0.0, 1.0)


def mrsi_from_areas(a_m: np.ndarray, a_m_gt_h: np.ndarray) -> np.ndarray:
    """``A^{m>h} / A^m`` in [0, 1] (0 where ``A^m = 0``); works elementwise."""
    a_m = np.asarray(a_m, dtype=np.float64)
    a_mh = np.asarray(a_m_gt_h, dtype=np.float64)
    safe = np.where(a_m > ZERO_AREA, a_m, 1.0)
    return np.clip(np.where(a_m > ZERO_AREA, a_mh / safe, 0.0), 0.0, 1.0)


def human_model_areas(human: Curve, model: Curve) -> dict[str, float]:
    """The four auxiliary areas of the paper's Table 2.

    Returns:
        ``{"A_h", "A_m", "A_h_gt_m", "A_m_gt_h"}``: areas under ``s_h`` and ``s_m`` and the
        leads ``∫ (s_h − s_m)^+`` and ``∫ (s_m − s_h)^+``, all in [0, 1].
    """
    d = curve_values(human, DENSE_GRID) - curve_values(model, DENSE_GRID)
    return {
        "A_h": area(human),
        "A_m": area(model),
        "A_h_gt_m": float(positive_area(d, DENSE_GRID)),
        "A_m_gt_h": float(positive_area(-d, DENSE_GRID)),
    }


def hmri(human: Curve, model: Curve) -> float:
    """Human-Relative Model Robustness Index ``1 − A^{h>m}/A^h`` in [0, 1] (1: model ≥ human)."""
    a = human_model_areas(human, model)
    return float(hmri_from_areas(a["A_h"], a["A_h_gt_m"]))


def mrsi(human: Curve, model: Curve) -> float:
    """Model Robustness Superiority Index ``A^{m>h}/A^m`` in [0, 1) (0: model never above)."""
    a = human_model_areas(human, model)
    return float(mrsi_from_areas(a["A_m"], a["A_m_gt_h"]))


def grid_indices(
    human_values: np.ndarray, model_values: np.ndarray, grid: np.ndarray
) -> dict[str, np.ndarray]:
    """Areas, HMRI and MRSI from curves tabulated on ``grid`` (e.g. bootstrap replicates).

    Args:
        human_values, model_values: ``(..., G)`` curve values (broadcast against each other).
        grid: ``(G,)`` increasing points covering [0, 1].

    Returns:
        Arrays ``(...)``: ``A_h, A_m, A_h_gt_m, A_m_gt_h, HMRI, MRSI`` (trapezoid areas,
        piecewise-linear positive parts).
    """
    h = np.asarray(human_values, dtype=np.float64)
    m = np.asarray(model_values, dtype=np.float64)
    d = h - m
    a_h = trapezoid_area(h, grid)
    a_m = trapezoid_area(m, grid)
    a_hm = positive_area(d, grid)
    a_mh = positive_area(-d, grid)
    return {
        "A_h": a_h,
        "A_m": a_m,
        "A_h_gt_m": a_hm,
        "A_m_gt_h": a_mh,
        "HMRI": hmri_from_areas(a_h, a_hm),
        "MRSI": mrsi_from_areas(a_m, a_mh),
    }


def _curve(curves: pa.Table, metric: str) -> tuple[np.ndarray, np.ndarray] | None:
    rows = select(curves, metric, HUMAN_CLASSES)
    if rows.num_rows == 0:
        return None
    return rows.column("v").to_numpy(), rows.column("s").to_numpy()


def _metrics_row(metrics: pa.Table | None, metric: str) -> dict | None:
    if metrics is None:
        return None
    rows = select(metrics, metric, HUMAN_CLASSES).to_pylist()
    return rows[0] if rows else None


def _comparison_range(human_row: dict | None, human_range: str) -> tuple[float, float]:
    if human_range == "full" or human_row is None or human_row.get("dv_min") is None:
        return 0.0, 1.0
    return float(human_row["dv_min"]), float(human_row["dv_max"])


def human_relative(
    model_curves: pa.Table,
    model_replicates: pa.Table,
    human_curves: pa.Table,
    human_replicates: pa.Table,
    *,
    model: str,
    corruption: str,
    source: str,
    model_metrics: pa.Table | None = None,
    human_metrics: pa.Table | None = None,
    human_range: str = "supported",
) -> pa.Table:
    """HMRI / MRSI rows for every metric both the model and the humans have (module docstring).

    ``model_metrics`` / ``human_metrics`` (the metrics tables of the two curves) give the human
    supported range and the support notes; without them the whole of [0, 1] is compared.
    """
    if human_range not in HUMAN_RANGES:
        raise VcrbenchError(f"human_range must be one of {HUMAN_RANGES}, got {human_range!r}")
    rows = []
    for metric in sorted(set(human_curves.column("metric").to_pylist())):
        human = _curve(human_curves, metric)
        mine = _curve(model_curves, metric)
        if human is None or mine is None:
            continue
        if human[0].shape != mine[0].shape or not np.allclose(human[0], mine[0]):
            raise VcrbenchError("human and model curves are not on the same Δv grid")
        human_row = _metrics_row(human_metrics, metric)
        model_row = _metrics_row(model_metrics, metric)
        lo_v, hi_v = _comparison_range(human_row, human_range)
        inside = (human[0] >= lo_v - RANGE_TOL) & (human[0] <= hi_v + RANGE_TOL)
        row = {"model": model, "corruption": corruption, "metric": metric,
               "classes": HUMAN_CLASSES, "HMRI": None, "HMRI_lo": None, "HMRI_hi": None,
               "MRSI": None, "MRSI_lo": None, "MRSI_hi": None, "A_h": None, "A_m": None,
               "human_dv_min": lo_v, "human_dv_max": hi_v, "human_source": source, "note": None}
        notes = []
        if (lo_v, hi_v) != (0.0, 1.0):
            notes.append(f"HMRI/MRSI over Δv [{lo_v:g}, {hi_v:g}] only, where the human data are")
        unsupported = []  # the model's own note is in the summary already
        if model_row is not None and model_row.get("R") is None:
            unsupported.append("not computed: the model curve's R is not reported")
        if human_row is not None and human_row.get("R") is None:
            unsupported.append(f"not computed: human curve: {human_row['note']}")
        if unsupported or int(inside.sum()) < 2:
            notes += unsupported or ["the compared Δv range holds fewer than 2 grid points"]
            row["note"] = "; ".join(notes)
            rows.append(row)
            continue
        grid = human[0][inside]
        point = grid_indices(human[1][inside], mine[1][inside], grid)
        h_reps = replicate_curves(human_replicates, metric, HUMAN_CLASSES)
        m_reps = replicate_curves(model_replicates, metric, HUMAN_CLASSES)
        b = min(len(h_reps), len(m_reps))
        if b < 1:
            raise VcrbenchError(f"{corruption} {metric}: no bootstrap replicates to pair")
        paired = grid_indices(h_reps[:b, inside], m_reps[:b, inside], grid)
        h_lo, h_hi = metric_interval(paired["HMRI"])
        m_lo, m_hi = metric_interval(paired["MRSI"])
        row.update(HMRI=float(point["HMRI"]), HMRI_lo=finite_or_none(h_lo),
                   HMRI_hi=finite_or_none(h_hi), MRSI=float(point["MRSI"]),
                   MRSI_lo=finite_or_none(m_lo), MRSI_hi=finite_or_none(m_hi),
                   A_h=float(point["A_h"]), A_m=float(point["A_m"]),
                   note="; ".join(notes) or None)
        rows.append(row)
    return pa.Table.from_pylist(rows, schema=SCHEMA)
