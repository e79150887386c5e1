"""REVa's errors and relative errors (Eq. 3–8), with image-level bootstrap intervals.

On a set of images (weak or evaluation), top-1 errors:

    Err           clean error
    E_{c,s}       error at ImageNet-C severity s of corruption c
    uCE_c         (1/5) Σ_s E_{c,s}                                (Eq. 7)
    mCE           mean of uCE_c over the corruptions               (Eq. 8)
    E_adv,a       error on the adversarial images of attack a      (Eq. 5)
    mean adv.     mean of E_adv,a over the attacks                 (Eq. 6)

and, for a perturbation p, its relative error = error on the weak set / Err(evaluation)
(Eq. 3 for attacks, Eq. 4 for corruptions), plus a continuous one, (1 − R_a(weak)) /
Err(evaluation) with R_a the 1000-class accuracy area of the weak set's curve.

Intervals: replicate b of every quantity weights each image by its Poisson(1) weight of
replicate b (:func:`vcrbench.curves.resampling.cluster_resampling`, factor ``images``, keyed by
the run seed and the image name), the weights of every curve of the run, so a ratio's numerator
and denominator, and the continuous measure's curve area, are paired replicate by replicate;
95 % percentile intervals over the replicates that drew data. Too few images
(``bootstrap.min_units``) fall back to resampling samples, conditional on the images (``note``).

Schemas (SCHEMA_ERRORS, SCHEMA_RELATIVE): ``reva/errors.parquet`` and
``reva/relative-errors.parquet`` as in docs/reva.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from vcrbench.core.seeding import curve_bootstrap_seed
from vcrbench.curves.resampling import DEFAULT_MIN_UNITS, cluster_resampling
from vcrbench.errors import VcrbenchError
from vcrbench.evaluation.samples import IMAGENET_C_LEVELS

SCHEMA_ERRORS = pa.schema([
    ("model", pa.string()), ("set", pa.string()), ("kind", pa.string()),
    ("perturbation", pa.string()), ("category", pa.string()), ("error", pa.float64()),
    ("error_lo", pa.float64()), ("error_hi", pa.float64()), ("n_images", pa.int64()),
    ("n_samples", pa.int64()), ("dv_median", pa.float64()), ("resampled", pa.string()),
    ("note", pa.string()),
])
SCHEMA_RELATIVE = pa.schema([
    ("model", pa.string()), ("kind", pa.string()), ("perturbation", pa.string()),
    ("category", pa.string()), ("measure", pa.string()), ("value", pa.float64()),
    ("lo", pa.float64()), ("hi", pa.float64()), ("baseline_error", pa.float64()),
    ("resampled", pa.string()), ("note", pa.string()),
])


@dataclass(frozen=True)
class Estimate:
    """A point value, its ``(B,)`` replicates (NaN: no data) and what they resample."""

    value: float | None
    replicates: np.ndarray
    resampled: str
    note: str | None = None

    def interval(self) -> tuple[float | None, float | None]:
        """95 % percentile interval of the valid replicates (null without two of them, or
        without a point value)."""
        valid = self.replicates[np.isfinite(self.replicates)]
        if self.value is None or valid.size < 2:
            return None, None
        lo, hi = np.percentile(valid, [2.5, 97.5])
        return float(lo), float(hi)


def _resampling(image_ids: np.ndarray, *, seed: int, n_boot: int, min_units: int, name: str):
    return cluster_resampling(
        {"images": np.asarray(image_ids, dtype=str)}, n_boot=n_boot, seed=seed,
        min_units=min_units, fallback_seed=curve_bootstrap_seed(seed, "reva", name),
    )


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def error_estimate(image_ids, wrong, *, seed: int, n_boot: int,
                   min_units: int = DEFAULT_MIN_UNITS, name: str = "error") -> Estimate:
    """The error rate of per-sample outcomes (``wrong``: bool, one per sample; samples of the
    same image are resampled together)."""
    wrong = np.asarray(wrong, bool)
    if wrong.size == 0:
        return Estimate(None, np.full(n_boot, np.nan), "", "no samples")
    resampling = _resampling(np.asarray(image_ids), seed=seed, n_boot=n_boot,
                             min_units=min_units, name=name)
    totals = resampling.totals(np.column_stack([wrong, np.ones(wrong.size)]))
    return Estimate(float(wrong.mean()), _ratio(totals[:, 0], totals[:, 1]),
                    resampling.description)


def uce_estimate(image_ids, severity, wrong, *, seed: int, n_boot: int,
                 min_units: int = DEFAULT_MIN_UNITS, name: str = "uce") -> Estimate:
    """uCE (Eq. 7): the mean over severities 1–5 of the error at each severity; null with a
    note when a severity has no sample."""
    severity, wrong = np.asarray(severity), np.asarray(wrong, bool)
    levels = range(1, IMAGENET_C_LEVELS + 1)
    missing = [s for s in levels if not (severity == s).any()]
    if missing:
        return Estimate(None, np.full(n_boot, np.nan), "",
                        f"no sample at severities {missing}: uCE undefined")
    resampling = _resampling(np.asarray(image_ids), seed=seed, n_boot=n_boot,
                             min_units=min_units, name=name)
    columns = []
    for s in levels:
        at = severity == s
        columns += [wrong & at, at]
    totals = resampling.totals(np.column_stack(columns).astype(np.float64))
    per_level = np.stack([_ratio(totals[:, 2 * k], totals[:, 2 * k + 1])
                          for k in range(len(levels))], axis=1)
    point = float(np.mean([wrong[severity == s].mean() for s in levels]))
    return Estimate(point, per_level.mean(axis=1), resampling.description)


def mean_estimate(estimates: list[Estimate]) -> Estimate:
    """The mean of several estimates (mCE, mean adversarial error), replicate by replicate;
    null when one of them is."""
    if not estimates:
        return Estimate(None, np.empty(0), "", "nothing to average")
    if any(e.value is None for e in estimates):
        return Estimate(None, np.full(estimates[0].replicates.size, np.nan), "",
                        "a term of the mean is undefined")
    return Estimate(float(np.mean([e.value for e in estimates])),
                    np.mean([e.replicates for e in estimates], axis=0), estimates[0].resampled)


def relative(numerator: Estimate, baseline: Estimate) -> Estimate:
    """``numerator / baseline`` per replicate (paired by index); null with a note when the
    baseline error is 0 or either is undefined."""
    n = numerator.replicates.size
    if numerator.value is None:
        return Estimate(None, np.full(n, np.nan), "", numerator.note)
    if baseline.value is None or baseline.value == 0:
        return Estimate(None, np.full(n, np.nan), "",
                        "clean evaluation error is 0: the relative error is undefined"
                        if baseline.value == 0 else baseline.note)
    if baseline.replicates.size != n:
        raise VcrbenchError(f"{n} and {baseline.replicates.size} replicates cannot be paired")
    zero = int(np.sum(baseline.replicates == 0))
    note = (f"{zero} of {n} replicates drew a clean error of 0 and are left out of the interval"
            if zero else None)
    return Estimate(numerator.value / baseline.value,
                    _ratio(numerator.replicates, baseline.replicates), numerator.resampled, note)


def clean_wrong(index: pa.Table, clean: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """Image ids and clean top-1 mistakes of the labelled images of a set."""
    label = dict(zip(index.column("image_id").to_pylist(), index.column("label").to_pylist(),
                     strict=True))
    ids, wrong = [], []
    for image_id, top1 in zip(clean.column("image_id").to_pylist(),
                              clean.column("top1").to_pylist(), strict=True):
        if image_id in label and label[image_id] >= 0:
            ids.append(image_id)
            wrong.append(top1 != label[image_id])
    return np.array(ids, dtype=str), np.array(wrong, bool)


def known(table: pa.Table) -> tuple[np.ndarray, np.ndarray, pa.Table]:
    """Image ids and mistakes of the samples whose ``correct`` is known, and those rows."""
    correct = table.column("correct").to_pylist()
    keep = np.array([c is not None for c in correct], bool)
    rows = table.filter(pa.array(keep))
    ids = np.asarray(rows.column("image_id").to_pylist(), dtype=str)
    wrong = ~np.asarray(rows.column("correct").to_pylist(), bool)
    return ids, wrong, rows
