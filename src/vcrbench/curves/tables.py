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
  interval), ``anchor`` (s(0), null where free), ``right_anchor`` (s(1) where the last bin is
  missing and the curve was anchored there), ``coverage`` and ``bins_present`` (of this
  property's own samples), ``dv_min``, ``dv_max`` (the Δv range its data support), ``n_samples``,
  ``lam`` (the spline's penalty), ``resampled`` (what the interval resamples), ``note`` (why a
  value is null or weaker than it looks; null when nothing needs saying).

**Support.** A curve resting on fewer than ``binning.min_coverage`` of the M bins has R (and
every index computed from it) null, with the reason in ``note`` (:func:`support_note`); its
curve is still tabulated, for figures that grey it out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from vcrbench.core.properties import select
from vcrbench.curves.areas import GRID, tabulated_areas
from vcrbench.curves.binning import BinnedRates
from vcrbench.errors import VcrbenchError

if TYPE_CHECKING:  # annotations only: the rates job writes rates without scipy's start-up cost
    from vcrbench.curves.bootstrap import CurveEstimate

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
        ("right_anchor", pa.float64()),
        ("coverage", pa.float64()),
        ("n_samples", pa.int64()),
        ("bins_present", pa.int32()),
        ("dv_min", pa.float64()),
        ("dv_max", pa.float64()),
        ("lam", pa.float64()),
        ("resampled", pa.string()),
        ("note", pa.string()),
    ]
)
#: Default share of the M bins a curve must rest on for R to be reported.
DEFAULT_MIN_COVERAGE = 0.5
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


def support_note(binned: BinnedRates, min_coverage: float) -> str | None:
    """Why a curve's R is not reported (too few present bins), or None when it is."""
    present = int(binned.present.sum())
    if present >= min_coverage * binned.bins:
        return None
    return (f"R not reported: {present} of {binned.bins} Δv bins have ≥ L={binned.min_count} "
            f"samples, fewer than binning.min_coverage = {min_coverage:g} of them")


def metrics_row(key: dict, estimate: CurveEstimate | None, binned: BinnedRates | None, *,
                min_coverage: float, note: str | None = None) -> dict:
    """One metrics row: ``key`` (model, corruption, metric, classes) plus the estimate's values,
    with R and its interval null where the support is too thin (:func:`support_note`) or there
    is no estimate (``note`` says why)."""
    row = {**key, "R": None, "R_lo": None, "R_hi": None, "anchor": None, "right_anchor": None,
           "coverage": 0.0, "n_samples": 0, "bins_present": 0, "dv_min": None, "dv_max": None,
           "lam": None, "resampled": None, "note": note}
    if binned is not None:
        row.update(coverage=float(binned.present.mean()), bins_present=int(binned.present.sum()),
                   n_samples=int(binned.counts.sum()))
    if estimate is None:
        return row
    free_start = (f"s(0) free: no data below Δv = {estimate.dv_min:g}, R includes the curve "
                  "extrapolated there" if estimate.dv_min > 0 else None)
    notes = [n for n in (note, support_note(estimate.rates, min_coverage), free_start,
                         estimate.interval_note) if n]
    row.update(anchor=estimate.anchor, right_anchor=estimate.right_anchor,
               dv_min=estimate.dv_min, dv_max=estimate.dv_max, lam=float(estimate.spline.lam),
               resampled=estimate.resampled, note="; ".join(notes) or None)
    if support_note(estimate.rates, min_coverage) is None:
        row.update(R=float(estimate.area))
        if not estimate.interval_degenerate:
            row.update(R_lo=finite_or_none(estimate.area_lo),
                       R_hi=finite_or_none(estimate.area_hi))
    return row


def finite_or_none(x: float) -> float | None:
    """``x`` as a float, or None (a null in a table) where it is not finite."""
    return float(x) if np.isfinite(x) else None


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


def replicate_curves(replicates: pa.Table, metric: str, classes: int) -> np.ndarray:
    """The bootstrap curves of one property, in replicate order: ``(B, G)`` on
    :data:`~vcrbench.curves.areas.GRID` (``(0, G)`` when there are none; NaN rows: replicates
    that drew no data)."""
    rows = select(replicates, metric, classes)
    if rows.num_rows == 0:
        return np.empty((0, GRID.size))
    order = np.argsort(rows.column("replicate").to_numpy(), kind="stable")
    values = np.array(rows.column("values").to_pylist(), np.float64)[order]
    if values.shape[1] != GRID.size:
        raise VcrbenchError(f"replicate curves have {values.shape[1]} points, not {GRID.size}")
    return values


def replicate_areas(replicates: pa.Table, metric: str, classes: int) -> np.ndarray:
    """R of every bootstrap replicate of one property, in replicate order: ``(B,)`` exact areas
    of the tabulated curves (:func:`~vcrbench.curves.areas.tabulated_areas`)."""
    values = replicate_curves(replicates, metric, classes)
    return tabulated_areas(values) if values.shape[0] else np.empty(0)
