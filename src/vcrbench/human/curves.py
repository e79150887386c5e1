"""Human curves: the trials' rates per Δv bin and the same monotone spline as for models.

Human answers are 16-way forced choices, so the human properties are 16-class accuracy
(answer = label) and, where the data has the answer on the clean image, 16-class consistency
(answer = clean answer). The estimator is the models' (:func:`vcrbench.curves.bootstrap.
estimate_curve`: M bins, L, monotone spline).

**Anchor s(0)** — only what the same observers were measured on, never invented:

* accuracy: the clean accuracy where the data has the answer on the clean image
  (``clean_response``; a missing clean answer counts as wrong), else the accuracy of the trials
  shown at Δv = 0 exactly (e.g. low-pass condition 0) when there are at least L of them, else
  **free** (the uniform-noise experiment: its weakest condition is already at Δv ≈ 0.38, from the
  30 % contrast, so there is no human data near Δv = 0);
* consistency: the consistency of the Δv = 0 trials (a test–retest rate) when there are at
  least L, else free — humans are not deterministic, so it is not pinned at 1.

A measured anchor is re-estimated in every bootstrap replicate. s(1) is chance (1/16) where the
last bin is missing and ``right_anchor`` is ``"chance"``.

**Intervals** resample subjects and images (a crossed design: each trial weighs the product of
its subject's and its image's weights; :mod:`vcrbench.curves.resampling`), each factor only when
it has at least ``min_units`` levels (the model-vs-human experiments have 4 subjects: their
intervals resample images and are conditional on those 4 observers, as ``resampled`` says).
Units are keyed by ``human/<corruption>``, so the replicates of two human data sets are
independent (as the similarity test assumes).

**Supported range** ``[dv_min, dv_max]``: from 0 where s(0) is measured (else the lower edge of
the first present bin) to the upper edge of the last present bin; HMRI / MRSI are computed over
it (:mod:`vcrbench.human.indices`).

Tables (schemas of :mod:`vcrbench.curves.tables`, ``classes`` = 16): ``human/<c>.parquet`` (curves
with 83 % / 95 % bands), ``human/<c>-replicates.parquet``, ``human/<c>-rates.parquet``
(per-bin rates) and ``human/<c>-metrics.parquet`` (R with its interval, anchors, coverage,
supported range, n_samples = trials, bins_present, lam, resampled, note; ``model`` holds the data
set's ``source`` string).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vcrbench.core.properties import HUMAN_CLASSES, chance_level
from vcrbench.core.seeding import curve_bootstrap_seed
from vcrbench.curves.binning import bin_rates
from vcrbench.curves.bootstrap import estimate_curve
from vcrbench.curves.resampling import DEFAULT_MIN_UNITS, cluster_resampling
from vcrbench.curves.tables import DEFAULT_MIN_COVERAGE, CurveTables, metrics_row
from vcrbench.errors import VcrbenchError
from vcrbench.human.conditions import assign_dv, condition_summary
from vcrbench.human.trials import condition_accuracy, correct, experiment_name, read_human

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HumanProperty:
    """One human property's trials: ``(N,)`` success and anchor outcomes (NaN: the trial does
    not measure s(0); None: s(0) is free) and where the anchor comes from."""

    ok: np.ndarray
    anchor_outcomes: np.ndarray | None
    anchor_source: str


def _at_zero(outcome: np.ndarray, dv: np.ndarray, min_count: int) -> np.ndarray | None:
    """``outcome`` on the Δv = 0 trials (NaN elsewhere), or None with fewer than L of them."""
    zero = dv == 0.0
    if int(zero.sum()) < min_count:
        return None
    return np.where(zero, outcome.astype(np.float64), np.nan)


def human_properties(trials: pa.Table, min_count: int) -> dict[str, HumanProperty]:
    """metric -> :class:`HumanProperty` for the properties the trials support (module
    docstring)."""
    dv = trials.column("dv").to_numpy(zero_copy_only=False).astype(np.float64)
    if np.isnan(dv).any():
        raise VcrbenchError("human trials need a Δv each (assign_dv for model-vs-human data)")
    ok = correct(trials)
    clean = trials.column("clean_response")
    properties: dict[str, HumanProperty] = {}
    if pc.is_valid(clean).to_numpy(zero_copy_only=False).any():
        clean_ok = pc.fill_null(pc.equal(clean, trials.column("label")), False)
        properties["accuracy"] = HumanProperty(
            ok, clean_ok.to_numpy(zero_copy_only=False).astype(np.float64),
            "clean answers of the same trials")
        consistent = pc.fill_null(pc.equal(trials.column("response"), clean), False)
        consistent = consistent.to_numpy(zero_copy_only=False).astype(bool)
        at_zero = _at_zero(consistent, dv, min_count)
        properties["consistency"] = HumanProperty(
            consistent, at_zero, "free" if at_zero is None else "Δv = 0 trials")
        return properties
    at_zero = _at_zero(ok, dv, min_count)
    properties["accuracy"] = HumanProperty(ok, at_zero,
                                           "free" if at_zero is None else "Δv = 0 trials")
    return properties


def human_curves(
    trials: pa.Table,
    *,
    corruption: str,
    source: str,
    bins: int,
    min_count: int,
    n_boot: int,
    seed: int,
    min_coverage: float = DEFAULT_MIN_COVERAGE,
    min_units: int = DEFAULT_MIN_UNITS,
    right_anchor: str = "chance",
) -> tuple[pa.Table, pa.Table, pa.Table, pa.Table]:
    """(rates, curves, replicates, metrics) of the human data (module docstring)."""
    dv = trials.column("dv").to_numpy(zero_copy_only=False).astype(np.float64)
    factors = {"subjects": np.asarray(trials.column("subject").to_pylist(), dtype=str),
               "images": np.asarray(trials.column("image_id").to_pylist(), dtype=str)}
    tables = CurveTables()
    for metric, prop in human_properties(trials, min_count).items():
        log.info("human %s: s(0) from %s", metric, prop.anchor_source)
        binned = bin_rates(dv, prop.ok, bins=bins, min_count=min_count)
        tables.add_rates(metric, HUMAN_CLASSES, binned)
        resampling = cluster_resampling(
            factors, n_boot=n_boot, seed=seed, min_units=min_units, namespace=f"human/{corruption}",
            fallback_seed=curve_bootstrap_seed(seed, "human", corruption, metric),
            sample_name="trials",
        )
        estimate = estimate_curve(
            dv, prop.ok, bins=bins, min_count=min_count, anchor_outcomes=prop.anchor_outcomes,
            right_anchor=chance_level(HUMAN_CLASSES) if right_anchor == "chance" else None,
            n_boot=n_boot, resampling=resampling,
        )
        key = {"model": source, "corruption": corruption, "metric": metric,
               "classes": HUMAN_CLASSES}
        tables.add_metrics(metrics_row(key, estimate, binned, min_coverage=min_coverage))
        tables.add_curve(metric, HUMAN_CLASSES, estimate)
    return tuple(tables.table(name) for name in ("rates", "curves", "replicates", "metrics"))


def human_tables(
    fmt: str,
    path: str,
    stimuli: pa.Table | None,
    *,
    corruption: str,
    source: str,
    bins: int,
    min_count: int,
    n_boot: int,
    seed: int,
    min_coverage: float = DEFAULT_MIN_COVERAGE,
    min_units: int = DEFAULT_MIN_UNITS,
    right_anchor: str = "chance",
) -> dict[str, pa.Table]:
    """Read a human data set and estimate its curves: tables ``rates, curves, replicates,
    metrics, conditions`` (``conditions``: per-condition accuracy and Δv quartiles,
    model-vs-human only; empty for the ``trials`` format)."""
    trials = read_human(fmt, path, corruption)
    if fmt == "model-vs-human":
        if stimuli is None:
            raise VcrbenchError("model-vs-human data need the stimuli table of their conditions")
        trials = assign_dv(trials, stimuli, seed=seed, experiment=experiment_name(path))
        conditions = condition_summary(stimuli, condition_accuracy(trials))
    else:
        conditions = condition_summary(_NO_STIMULI, condition_accuracy(trials.slice(0, 0)))
    rates, curves, replicates, metrics = human_curves(
        trials, corruption=corruption, source=source, bins=bins, min_count=min_count,
        n_boot=n_boot, seed=seed, min_coverage=min_coverage, min_units=min_units,
        right_anchor=right_anchor,
    )
    return {"rates": rates, "curves": curves, "replicates": replicates, "metrics": metrics,
            "conditions": conditions}


_NO_STIMULI = pa.table({"condition": pa.array([], pa.float64()), "image_id": pa.array(
    [], pa.string()), "dv": pa.array([], pa.float64())})
