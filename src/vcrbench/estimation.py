"""Algorithm 1 as tables: per-bin rates, fitted curves with bootstrap bands, and R per property.

Schemas:

- ``rates/<m>/<c>.parquet``: ``metric`` ("accuracy" | "consistency"), ``classes`` (1000 | 16),
  ``bin`` (0..M−1), ``lo``, ``hi``, ``center`` (Δv), ``count``, ``successes``, ``rate`` (null
  where the bin is empty), ``present`` (count ≥ L).
- ``curves/<m>/<c>.parquet``: ``metric``, ``classes``, ``v`` (Δv grid), ``s`` (fitted curve),
  ``lo83``, ``hi83``, ``lo95``, ``hi95`` (pointwise bootstrap bands).
- ``curves/<m>/<c>-replicates.parquet``: ``metric``, ``classes``, ``replicate``, ``values``
  (the bootstrap curve on the same grid), kept for paired intervals against human curves.
- ``metrics/<m>/<c>.parquet``: ``model``, ``corruption``, ``metric``, ``classes``, ``R``,
  ``R_lo``, ``R_hi`` (95 % bootstrap interval), ``anchor`` (s(0)), ``coverage``,
  ``n_samples``, ``bins_present``, ``lam`` (the spline's penalty).

A property without any sample (accuracy on unlabelled images) has no rows; a property whose
samples fill no bin up to L gets a metrics row with null R and a warning in the log.
"""

from __future__ import annotations

import logging

import numpy as np
import pyarrow as pa

from vcrbench.binning import bin_rates, coverage
from vcrbench.bootstrap import estimate_curve
from vcrbench.errors import VcrbenchError
from vcrbench.outcomes import PROPERTIES, property_samples
from vcrbench.seeding import name_words

log = logging.getLogger(__name__)

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


def rate_rows(metric: str, classes: int, binned) -> list[dict]:
    """Rows of the rates table for one property's :class:`~vcrbench.binning.BinnedRates`."""
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


def curve_rows(metric: str, classes: int, estimate) -> tuple[list[dict], list[dict]]:
    """Rows of the curves and replicates tables for one property's CurveEstimate."""
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


def property_seed(seed: int, *names: str) -> int:
    """A bootstrap seed keyed by the run seed and names (model, corruption, property)."""
    words = [int(seed) & 0xFFFFFFFF]
    for name in names:
        words.extend(name_words(name))
    return int(np.random.SeedSequence(words).generate_state(1, np.uint32)[0])


def rates_table(outcomes: pa.Table, *, bins: int, min_count: int) -> pa.Table:
    """Per-bin counts and rates of every property that has samples."""
    rows = []
    for metric, classes in PROPERTIES:
        dv, ok, _ = property_samples(outcomes, metric, classes)
        if dv.size == 0:
            continue
        rows.extend(rate_rows(metric, classes, bin_rates(dv, ok, bins=bins, min_count=min_count)))
    return pa.Table.from_pylist(rows, schema=RATES_SCHEMA)


def fit_curves(
    outcomes: pa.Table,
    *,
    model: str,
    corruption: str,
    bins: int,
    min_count: int,
    n_boot: int,
    seed: int,
) -> tuple[pa.Table, pa.Table, pa.Table]:
    """Fit every property's curve: (curves, replicates, metrics) tables (module docstring)."""
    all_dv = outcomes.column("dv").to_numpy()
    cover = float(coverage(all_dv, bins=bins, min_count=min_count)) if all_dv.size else 0.0
    all_curves, all_replicates, metric_rows = [], [], []
    for metric, classes in PROPERTIES:
        dv, ok, clean_ok = property_samples(outcomes, metric, classes)
        if dv.size == 0:
            continue
        anchor = float(clean_ok.mean()) if clean_ok is not None else 1.0
        row = {
            "model": model,
            "corruption": corruption,
            "metric": metric,
            "classes": classes,
            "R": None,
            "R_lo": None,
            "R_hi": None,
            "anchor": anchor,
            "coverage": cover,
            "n_samples": int(dv.size),
            "bins_present": 0,
            "lam": None,
        }
        try:
            estimate = estimate_curve(
                dv,
                ok,
                bins=bins,
                min_count=min_count,
                anchor=anchor,
                n_boot=n_boot,
                seed=property_seed(seed, model, corruption, metric, str(classes)),
            )
        except VcrbenchError as error:
            log.warning("%s %s-%d: no curve: %s", corruption, metric, classes, error)
            metric_rows.append(row)
            continue
        row.update(
            R=float(estimate.area),
            R_lo=float(estimate.area_lo),
            R_hi=float(estimate.area_hi),
            bins_present=int(estimate.rates.present.sum()),
            lam=float(estimate.spline.lam),
        )
        metric_rows.append(row)
        curves, replicates = curve_rows(metric, classes, estimate)
        all_curves.extend(curves)
        all_replicates.extend(replicates)
    return (
        pa.Table.from_pylist(all_curves, schema=CURVES_SCHEMA),
        pa.Table.from_pylist(all_replicates, schema=REPLICATES_SCHEMA),
        pa.Table.from_pylist(metric_rows, schema=METRICS_SCHEMA),
    )
