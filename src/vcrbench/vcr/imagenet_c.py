"""The ImageNet-C comparison: a model's accuracy on the five fixed severities, next to its VCR.

ImageNet-C reports a corruption's robustness as the mean accuracy over its five severities
(Hendrycks & Dietterich 2019); the VCR paper (Fig. 5, Table 2) sets that against R_a and the Δv
coverage of the two test sets. The ImageNet-C sample of a run (``sampling.imagenet_c_n``: each
image at severities 1–5, see :mod:`vcrbench.evaluation.samples`) is scored and classified like
the uniform one; this module reduces its outcomes.

Schema of ``metrics/<m>/<c>-imagenet-c.parquet`` (one row per property that has samples):
``model``, ``corruption``, ``metric``, ``classes`` (as the VCR metrics), ``imagenet_c_mean``
(mean over the five severities of the per-severity rate), ``imagenet_c_mean_lo`` /
``imagenet_c_mean_hi`` (its 95 % percentile bootstrap interval), ``imagenet_c_resampled`` (what
that interval resamples: the images, each with all its severities, with the keyed image weights
of the run's curves (:mod:`vcrbench.curves.resampling`); the samples, conditional on the images,
below ``bootstrap.min_units`` images), ``rate_s1`` … ``rate_s5`` (rate at each severity; null
where a severity has no sample), ``imagenet_c_coverage`` (Δv coverage of the ImageNet-C sample
with the run's M and L), ``imagenet_c_n`` (samples with the property).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from vcrbench.core.properties import IMAGENET_CLASSES, properties
from vcrbench.core.seeding import curve_bootstrap_seed
from vcrbench.curves.binning import coverage
from vcrbench.curves.bootstrap import metric_interval
from vcrbench.curves.resampling import DEFAULT_MIN_UNITS, cluster_resampling
from vcrbench.errors import VcrbenchError
from vcrbench.evaluation.outcomes import outcome_columns
from vcrbench.evaluation.samples import IMAGENET_C_LEVELS

SEVERITY_COLUMNS = tuple(f"rate_s{s}" for s in range(1, IMAGENET_C_LEVELS + 1))
SCHEMA = pa.schema(
    [
        ("model", pa.string()),
        ("corruption", pa.string()),
        ("metric", pa.string()),
        ("classes", pa.int16()),
        ("imagenet_c_mean", pa.float64()),
        ("imagenet_c_mean_lo", pa.float64()),
        ("imagenet_c_mean_hi", pa.float64()),
        ("imagenet_c_resampled", pa.string()),
        *[(name, pa.float64()) for name in SEVERITY_COLUMNS],
        ("imagenet_c_coverage", pa.float64()),
        ("imagenet_c_n", pa.int64()),
    ]
)


def severity_metrics(
    outcomes: pa.Table,
    severities: pa.Table,
    *,
    model: str,
    corruption: str,
    bins: int,
    min_count: int,
    n_boot: int = 200,
    seed: int = 0,
    min_units: int = DEFAULT_MIN_UNITS,
    label_classes: int = IMAGENET_CLASSES,
) -> pa.Table:
    """Per-severity rates and their mean, with its bootstrap interval, for every property
    (module docstring; ``label_classes``: the size of the data set's label space).

    Args:
        outcomes: per-sample outcomes (:func:`vcrbench.evaluation.outcomes.sample_outcomes`) of the
            ImageNet-C sample.
        severities: its samples table(s): ``sample_id``, ``severity`` (1–5).
        n_boot, seed, min_units: the run's ``bootstrap.replicates``, ``seed`` and
            ``bootstrap.min_units`` (the same image weights as the curves of the run).
    """
    level = dict(
        zip(
            severities.column("sample_id").to_pylist(),
            severities.column("severity").to_pylist(),
            strict=True,
        )
    )
    try:
        severity = np.array([level[i] for i in outcomes.column("sample_id").to_pylist()])
    except KeyError as error:
        raise VcrbenchError(f"sample {error} has outcomes but no severity") from None
    if severity.size and not np.isin(severity, range(1, IMAGENET_C_LEVELS + 1)).all():
        raise VcrbenchError("ImageNet-C samples must have severities 1 to 5 (is this sample "
                            "uniform?)")
    image_ids = np.asarray(outcomes.column("image_id").to_pylist(), dtype=str)
    dv_all = outcomes.column("dv").to_numpy()
    cover = float(coverage(dv_all, bins=bins, min_count=min_count)) if dv_all.size else 0.0
    rows = []
    for metric, classes in properties(label_classes):
        column, _ = outcome_columns(metric, classes)
        success = outcomes.column(column).to_numpy(zero_copy_only=False)
        known = np.array([v is not None for v in success])
        if not known.any():
            continue
        ok = success[known].astype(bool)
        levels = severity[known]
        rates = {
            name: (float(ok[levels == s].mean()) if (levels == s).any() else None)
            for s, name in enumerate(SEVERITY_COLUMNS, start=1)
        }
        present = [r for r in rates.values() if r is not None]
        resampling = cluster_resampling(
            {"images": image_ids[known]}, n_boot=n_boot, seed=seed, min_units=min_units,
            fallback_seed=curve_bootstrap_seed(seed, model, corruption, "imagenet-c", metric,
                                               str(classes)),
        )
        replicates = _replicate_means(resampling.totals(_severity_columns(ok, levels)))
        lo, hi = metric_interval(replicates)
        rows.append(
            {
                "model": model,
                "corruption": corruption,
                "metric": metric,
                "classes": classes,
                "imagenet_c_mean": float(np.mean(present)),
                "imagenet_c_mean_lo": None if np.isnan(lo) else lo,
                "imagenet_c_mean_hi": None if np.isnan(hi) else hi,
                "imagenet_c_resampled": resampling.description,
                **rates,
                "imagenet_c_coverage": cover,
                "imagenet_c_n": int(ok.size),
            }
        )
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def _severity_columns(ok: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """``(N, 2 · 5)`` per-sample values: successes then membership of each severity."""
    member = (levels[:, None] == np.arange(1, IMAGENET_C_LEVELS + 1)[None, :]).astype(float)
    return np.hstack([member * ok[:, None], member])


def _replicate_means(totals: np.ndarray) -> np.ndarray:
    """``(B,)`` mean over the severities present in a replicate of its per-severity rates (NaN:
    a replicate without any sample); ``totals`` ``(B, 2 · 5)`` as :func:`_severity_columns`."""
    successes, counts = np.split(totals, 2, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = np.where(counts > 0, successes / np.where(counts > 0, counts, 1.0), np.nan)
    present = np.isfinite(rates).any(axis=1)
    means = np.full(totals.shape[0], np.nan)
    means[present] = np.nanmean(rates[present], axis=1)
    return means
