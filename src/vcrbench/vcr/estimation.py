"""Algorithm 1 for one model on one corruption: per-bin rates, fitted curves with bootstrap
bands, and R per property, from the per-sample outcomes.

Tables (schemas in :mod:`vcrbench.curves.tables`): ``rates/<m>/<c>.parquet``,
``curves/<m>/<c>.parquet``, ``curves/<m>/<c>-replicates.parquet`` and
``metrics/<m>/<c>.parquet``. The anchor s(0) is the clean accuracy of the sampled images for
accuracy and 1 for consistency; each property's bootstrap is keyed by (seed, model,
corruption, metric, classes).

A property without any sample (accuracy on unlabelled images) has no rows; a property whose
samples fill no bin up to L gets a metrics row with null R and a warning in the log.
"""

from __future__ import annotations

import logging

import pyarrow as pa

from vcrbench.core.properties import PROPERTIES
from vcrbench.core.seeding import curve_bootstrap_seed
from vcrbench.curves.binning import bin_rates, coverage
from vcrbench.curves.bootstrap import estimate_curve
from vcrbench.curves.tables import CurveTables
from vcrbench.errors import VcrbenchError
from vcrbench.evaluation.outcomes import property_samples

log = logging.getLogger(__name__)


def rates_table(outcomes: pa.Table, *, bins: int, min_count: int) -> pa.Table:
    """Per-bin counts and rates of every property that has samples."""
    tables = CurveTables()
    for metric, classes in PROPERTIES:
        dv, ok, _ = property_samples(outcomes, metric, classes)
        if dv.size == 0:
            continue
        tables.add_rates(metric, classes, bin_rates(dv, ok, bins=bins, min_count=min_count))
    return tables.table("rates")


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
    tables = CurveTables()
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
                seed=curve_bootstrap_seed(seed, model, corruption, metric, str(classes)),
            )
        except VcrbenchError as error:
            log.warning("%s %s-%d: no curve: %s", corruption, metric, classes, error)
            tables.add_metrics(row)
            continue
        row.update(
            R=float(estimate.area),
            R_lo=float(estimate.area_lo),
            R_hi=float(estimate.area_hi),
            bins_present=int(estimate.rates.present.sum()),
            lam=float(estimate.spline.lam),
        )
        tables.add_metrics(row)
        tables.add_curve(metric, classes, estimate)
    return tables.table("curves"), tables.table("replicates"), tables.table("metrics")
