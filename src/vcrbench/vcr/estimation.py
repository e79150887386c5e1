"""Algorithm 1 for one model on one corruption: fitted curves with bootstrap bands, and R per
property, from the per-sample outcomes (its per-bin rates table: :mod:`vcrbench.vcr.rates`).

Tables (schemas in :mod:`vcrbench.curves.tables`): ``curves/<m>/<c>.parquet``,
``curves/<m>/<c>-replicates.parquet`` and ``metrics/<m>/<c>.parquet``.

* **Anchors.** s(0) is the clean accuracy of the property's samples' images for accuracy
  (re-estimated in every bootstrap replicate) and 1 for consistency (a deterministic model);
  s(1) is chance level (1/classes) where the last bin is missing and ``right_anchor`` is
  ``"chance"`` (:mod:`vcrbench.curves.bootstrap`).
* **Intervals** resample the property's images (every sample of a drawn image comes along;
  :mod:`vcrbench.curves.resampling`), keyed by the run seed and the image id only, so replicate
  ``b`` is paired across models and corruptions. With fewer than ``min_units`` images the
  samples are resampled instead (labelled in ``resampled``), keyed by (seed, model, corruption,
  metric, classes).
* **Support.** coverage and bins_present count the property's own samples; below
  ``min_coverage`` R is null with a ``note``.

A property without any sample (accuracy on unlabelled images) has no rows; a property whose
samples fill no bin up to L gets a metrics row with null R and a note.
"""

from __future__ import annotations

import logging

import pyarrow as pa

from vcrbench.core.properties import IMAGENET_CLASSES, chance_level, properties
from vcrbench.core.seeding import curve_bootstrap_seed
from vcrbench.curves.binning import bin_rates
from vcrbench.curves.bootstrap import estimate_curve
from vcrbench.curves.resampling import DEFAULT_MIN_UNITS, cluster_resampling
from vcrbench.curves.tables import DEFAULT_MIN_COVERAGE, CurveTables, metrics_row
from vcrbench.errors import VcrbenchError
from vcrbench.evaluation.outcomes import property_samples

log = logging.getLogger(__name__)

#: Values of ``binning.right_anchor``.
RIGHT_ANCHORS = ("chance", "none")


def fit_curves(
    outcomes: pa.Table,
    *,
    model: str,
    corruption: str,
    bins: int,
    min_count: int,
    n_boot: int,
    seed: int,
    min_coverage: float = DEFAULT_MIN_COVERAGE,
    min_units: int = DEFAULT_MIN_UNITS,
    right_anchor: str = "chance",
    label_classes: int = IMAGENET_CLASSES,
) -> tuple[pa.Table, pa.Table, pa.Table]:
    """Fit every property's curve: (curves, replicates, metrics) tables (module docstring);
    ``label_classes`` as in :func:`vcrbench.vcr.rates.rates_table` (the chance anchor of its
    properties is ``1 / label_classes``)."""
    if right_anchor not in RIGHT_ANCHORS:
        raise VcrbenchError(f"binning.right_anchor must be one of {RIGHT_ANCHORS}, got "
                            f"{right_anchor!r}")
    tables = CurveTables()
    for metric, classes in properties(label_classes):
        samples = property_samples(outcomes, metric, classes)
        if samples.dv.size == 0:
            continue
        key = {"model": model, "corruption": corruption, "metric": metric, "classes": classes}
        binned = bin_rates(samples.dv, samples.ok, bins=bins, min_count=min_count)
        resampling = cluster_resampling(
            {"images": samples.image_id}, n_boot=n_boot, seed=seed, min_units=min_units,
            fallback_seed=curve_bootstrap_seed(seed, model, corruption, metric, str(classes)),
        )
        try:
            estimate = estimate_curve(
                samples.dv, samples.ok, bins=bins, min_count=min_count,
                anchor=1.0 if samples.clean_ok is None else None,
                anchor_outcomes=None if samples.clean_ok is None else samples.clean_ok,
                right_anchor=chance_level(classes) if right_anchor == "chance" else None,
                n_boot=n_boot, resampling=resampling,
            )
        except VcrbenchError as error:
            log.warning("%s %s-%d: no curve: %s", corruption, metric, classes, error)
            tables.add_metrics(metrics_row(key, None, binned, min_coverage=min_coverage,
                                           note=f"no curve: {error}"))
            continue
        tables.add_metrics(metrics_row(key, estimate, binned, min_coverage=min_coverage))
        tables.add_curve(metric, classes, estimate)
    return tables.table("curves"), tables.table("replicates"), tables.table("metrics")


def fit_curves_configured(outcomes: pa.Table, *, model: str, corruption: str,
                          binning: dict, bootstrap: dict, seed: int, label_classes: int
                          ) -> tuple[pa.Table, pa.Table, pa.Table]:
    """:func:`fit_curves` with a run's ``binning`` and ``bootstrap`` config sections and seed,
    as the curves job calls it (so a refit elsewhere uses the run's settings by construction)."""
    return fit_curves(
        outcomes, model=model, corruption=corruption, bins=binning["bins"],
        min_count=binning["min_count"], n_boot=bootstrap["replicates"], seed=seed,
        min_coverage=binning["min_coverage"], min_units=bootstrap["min_units"],
        right_anchor=binning["right_anchor"], label_classes=label_classes,
    )
