"""Human curves: the trials' rates per Δv bin and the same monotone spline as for models.

Human answers are 16-way forced choices, so the human properties are 16-class accuracy
(answer = label) and, where the data has the answer on the clean image, 16-class consistency
(answer = clean answer). The estimator is the models' (:func:`vcrbench.curves.bootstrap.
estimate_curve`: M bins, L, monotone spline, bootstrap over trials). Anchor ``s(0)``:
accuracy on the clean images where known (``clean_response``; a missing clean answer counts
as wrong and as inconsistent, like any no-answer), else the accuracy of the
least-changed condition (model-vs-human data; its median Δv is recorded), else a free start;
consistency is anchored at 1.

Tables (schemas of :mod:`vcrbench.curves.tables`, ``classes`` = 16): ``human/<c>.parquet`` (curves
with 83 % / 95 % bands), ``human/<c>-replicates.parquet``, ``human/<c>-rates.parquet``
(per-bin rates) and ``human/<c>-metrics.parquet`` (R with its interval, anchor, coverage,
n_samples = trials, bins_present, lam; ``model`` holds the data set's ``source`` string).
"""

from __future__ import annotations

import logging

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vcrbench.core.seeding import curve_bootstrap_seed
from vcrbench.curves.binning import bin_rates, coverage
from vcrbench.curves.bootstrap import estimate_curve
from vcrbench.curves.tables import CurveTables
from vcrbench.errors import VcrbenchError
from vcrbench.human.conditions import assign_dv, condition_summary
from vcrbench.human.trials import condition_accuracy, correct, experiment_name, read_human

log = logging.getLogger(__name__)


def human_properties(trials: pa.Table) -> dict[str, tuple[np.ndarray, float | None]]:
    """metric -> (per-trial success, anchor) for the properties the trials support."""
    dv = trials.column("dv").to_numpy(zero_copy_only=False).astype(np.float64)
    if np.isnan(dv).any():
        raise VcrbenchError("human trials need a Δv each (assign_dv for model-vs-human data)")
    ok = correct(trials)
    clean = trials.column("clean_response")
    has_clean = pc.is_valid(clean).to_numpy(zero_copy_only=False)
    properties: dict[str, tuple[np.ndarray, float | None]] = {}
    if has_clean.any():
        clean_ok = pc.fill_null(pc.equal(clean, trials.column("label")), False)
        anchor = float(clean_ok.to_numpy(zero_copy_only=False).mean())
        consistent = pc.fill_null(pc.equal(trials.column("response"), clean), False)
        properties["accuracy"] = (ok, anchor)
        properties["consistency"] = (consistent.to_numpy(zero_copy_only=False).astype(bool), 1.0)
        return properties
    conditions = trials.column("condition").to_numpy(zero_copy_only=False).astype(np.float64)
    if np.isnan(conditions).any():
        log.info("no clean answers and no conditions: the human accuracy curve starts free")
        properties["accuracy"] = (ok, None)
        return properties
    levels = np.unique(conditions)
    medians = [np.median(dv[conditions == c]) for c in levels]
    mildest = levels[int(np.argmin(medians))]
    anchor = float(ok[conditions == mildest].mean())
    log.info("anchor: accuracy %.4f of condition %g (median Δv %.3f)", anchor, mildest,
             min(medians))
    properties["accuracy"] = (ok, anchor)
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
) -> tuple[pa.Table, pa.Table, pa.Table, pa.Table]:
    """(rates, curves, replicates, metrics) of the human data (module docstring)."""
    dv = trials.column("dv").to_numpy(zero_copy_only=False).astype(np.float64)
    tables = CurveTables()
    for metric, (ok, anchor) in human_properties(trials).items():
        binned = bin_rates(dv, ok, bins=bins, min_count=min_count)
        tables.add_rates(metric, 16, binned)
        estimate = estimate_curve(
            dv, ok, bins=bins, min_count=min_count, anchor=anchor, n_boot=n_boot,
            seed=curve_bootstrap_seed(seed, "human", corruption, metric),
        )
        tables.add_metrics({
            "model": source, "corruption": corruption, "metric": metric, "classes": 16,
            "R": float(estimate.area), "R_lo": float(estimate.area_lo),
            "R_hi": float(estimate.area_hi), "anchor": float(estimate.curve[0]),
            "coverage": coverage(dv, bins, min_count), "n_samples": int(dv.size),
            "bins_present": int(binned.present.sum()), "lam": float(estimate.spline.lam),
        })
        tables.add_curve(metric, 16, estimate)
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
        n_boot=n_boot, seed=seed,
    )
    return {"rates": rates, "curves": curves, "replicates": replicates, "metrics": metrics,
            "conditions": conditions}


_NO_STIMULI = pa.table({"condition": pa.array([], pa.float64()), "image_id": pa.array(
    [], pa.string()), "dv": pa.array([], pa.float64())})
