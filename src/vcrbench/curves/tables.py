"""The tables of a fitted curve, shared by models and humans: per-bin rates, the curve with its
bands, its bootstrap replicates and its scalar metrics.

Schemas (one row per property × bin / grid point / replicate / property):

- rates (``rates/<m>/<c>.parquet``, ``human/<c>-rates.parquet``): ``metric``
  ("accuracy" | "consistency"), ``classes`` (1000 | 16), ``bin`` (0..M−1), ``lo``, ``hi``,
  ``center`` (Δv), ``count``, ``successes``, ``rate`` (null where the bin is empty),
  ``present`` (count ≥ L).
- curves (``curves/<m>/<c>.parquet``, ``human/<c>.parquet``): ``metric``, ``classes``, ``v``
  (Δv on :data:`~vcrbench.curves.areas.GRID`), ``s`` (fitted curve), ``lo83``, ``hi83``,
  ``lo95``, ``hi95`` (pointwise bootstrap bands).
- replicates (``…-replicates.parquet``): ``metric``, ``classes``, ``replicate``, ``values``
  (the bootstrap curve on the same grid), kept for paired intervals.
- metrics (``metrics/<m>/<c>.parquet``, ``human/<c>-metrics.parquet``): ``model``,
  ``corruption``, ``metric``, ``classes``, ``R``, ``R_lo``, ``R_hi`` (95 % bootstrap
  interval), ``anchor`` (s(0)), ``coverage``, ``n_samples``, ``bins_present``, ``lam`` (the
  spline's penalty).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from vcrbench.core.properties import select
from vcrbench.curves.areas import GRID, tabulated_areas
from vcrbench.curves.binning import BinnedRates
from vcrbench.curves.bootstrap import CurveEstimate
from vcrbench.errors import VcrbenchError

METRICS_SCHEMA = pa.schema(
    [
        ("model", pa.string()),
        ("corruption", pa.string()),
        ("metric", pa.string()),
        ("classes", pa.int16()),
        ("R", pa.float64()),
        ("R_lo", pa.float64()),
        ("R_hi", pa.float64()),
        ("anchor", pa.float64()),
        ("coverage", pa.float64()),
        ("n_samples", pa.int64()),
        ("bins_present", pa.int32()),
        ("lam", pa.float64()),
    ]
)
CURVES_SCHEMA = pa.schema(
    [
        ("metric", pa.string()),
        ("classes", pa.int16()),
        ("v", pa.float64()),
        ("s", pa.float64()),
        ("lo83", pa.float64()),
        ("hi83", pa.float64()),
        ("lo95", pa.float64()),
        ("hi95", pa.float64()),
    ]
)
REPLICATES_SCHEMA = pa.schema(
    [
        ("metric", pa.string()),
        ("classes", pa.int16()),
        ("replicate", pa.int32()),
        ("values", pa.list_(pa.float64())),
    ]
)
RATES_SCHEMA = pa.schema(
    [
        ("metric", pa.string()),
        ("classes", pa.int16()),
        ("bin", pa.int32()),
        ("lo", pa.float64()),
        ("hi", pa.float64()),
        ("center", pa.float64()),
        ("count", pa.int64()),
        ("successes", pa.int64()),
        ("rate", pa.float64()),
        ("present", pa.bool_()),
    ]
)


def rate_rows(metric: str, classes: int, binned: BinnedRates) -> list[dict]:
    """Rows of the rates table for one property's binned rates."""
    rows = []
    for b in range(binned.counts.size):
        rate = float(binned.rates[b])
        rows.append(
            {
                "metric": metric,
                "classes": classes,
                "bin": b,
                "lo": float(binned.edges[b]),
                "hi": float(binned.edges[b + 1]),
                "center": float(binned.centers[b]),
                "count": int(binned.counts[b]),
                "successes": int(binned.successes[b]),
                "rate": None if np.isnan(rate) else rate,
                "present": bool(binned.present[b]),
            }
        )
    return rows


def curve_rows(metric: str, classes: int, estimate: CurveEstimate) -> tuple[list[dict], list[dict]]:
    """Rows of the curves and replicates tables for one property's curve estimate."""
    curves = [
        {
            "metric": metric,
            "classes": classes,
            "v": float(v),
            "s": float(estimate.curve[i]),
            "lo83": float(estimate.band83[0][i]),
            "hi83": float(estimate.band83[1][i]),
            "lo95": float(estimate.band95[0][i]),
            "hi95": float(estimate.band95[1][i]),
        }
        for i, v in enumerate(estimate.grid)
    ]
    replicates = [
        {"metric": metric, "classes": classes, "replicate": b, "values": [float(x) for x in row]}
        for b, row in enumerate(estimate.replicates)
    ]
    return curves, replicates


SCHEMAS = {
    "rates": RATES_SCHEMA,
    "curves": CURVES_SCHEMA,
    "replicates": REPLICATES_SCHEMA,
    "metrics": METRICS_SCHEMA,
}


@dataclass
class CurveTables:
    """The rows of one stage's rates, curves, replicates and metrics tables, added property by
    property (:meth:`add_rates`, :meth:`add_curve`, :meth:`add_metrics`); :meth:`table` gives
    a table with its schema (:data:`SCHEMAS`)."""

    rows: dict[str, list[dict]] = field(default_factory=lambda: {name: [] for name in SCHEMAS})

    def add_rates(self, metric: str, classes: int, binned: BinnedRates) -> None:
        self.rows["rates"].extend(rate_rows(metric, classes, binned))

    def add_curve(self, metric: str, classes: int, estimate: CurveEstimate) -> None:
        curves, replicates = curve_rows(metric, classes, estimate)
        self.rows["curves"].extend(curves)
        self.rows["replicates"].extend(replicates)

    def add_metrics(self, row: dict) -> None:
        self.rows["metrics"].append(row)

    def table(self, name: str) -> pa.Table:
        return pa.Table.from_pylist(self.rows[name], schema=SCHEMAS[name])


def replicate_areas(replicates: pa.Table, metric: str, classes: int) -> np.ndarray:
    """R of every bootstrap replicate of one property, in replicate order: ``(B,)`` exact areas
    of the tabulated curves (:func:`~vcrbench.curves.areas.tabulated_areas`)."""
    rows = select(replicates, metric, classes)
    if rows.num_rows == 0:
        return np.empty(0)
    order = np.argsort(rows.column("replicate").to_numpy(), kind="stable")
    values = np.array(rows.column("values").to_pylist(), np.float64)[order]
    if values.shape[1] != GRID.size:
        raise VcrbenchError(f"replicate curves have {values.shape[1]} points, not {GRID.size}")
    return tabulated_areas(values)
