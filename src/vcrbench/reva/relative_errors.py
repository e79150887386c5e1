"""REVa's errors and relative errors (Eq. 3–8), with image-level bootstrap intervals.

On a set of images (``weak`` or ``evaluation``), top-1 errors (fractions in [0, 1]):

    Err           clean error of the set's labelled images
    E_{c,s}       error at ImageNet-C severity s of corruption c
    uCE_c         (1/5) Σ_{s=1..5} E_{c,s}                       (Eq. 7)
    mCE           mean of uCE_c over the corruptions              (Eq. 8)
    E_adv,a       error on the adversarial images of attack a     (Eq. 5)
    mean adv.     mean of E_adv,a over the attacks                (Eq. 6)

and, per perturbation p, relative errors (unitless; 1 = as bad as the clean evaluation error):

    severity      error of p on the weak set / Err(evaluation)    (Eq. 3 attacks, Eq. 4 uCE)
    continuous    (1 − R_a(weak)) / Err(evaluation)               (corruptions; R_a = the area
                  under the weak set's 1000-class accuracy curve, :mod:`vcrbench.vcr.estimation`)

Samples whose ``correct`` is null (images without a label) are missing, not wrong.

**Intervals.** Replicate b of every statistic weighs each image by its Poisson(1) weight of
replicate b (:func:`vcrbench.curves.resampling.cluster_resampling`, factor ``images``, keyed by
the run seed and the image id): the weights of every curve of the run. A sample weighs as its
image, and a rate's replicate is Σ w·wrong / Σ w over its samples, so a ratio's numerator and
denominator, and the curve replicates behind R_a, are paired replicate by replicate. A
replicate that draws no sample of a rate (or a clean error of 0 in a denominator) has no value
and is left out; 95 % percentile intervals over the rest, null with fewer than 2. With fewer
than ``bootstrap.min_units`` images the samples are resampled instead, conditional on the images
and unpaired; ``note`` says so.

Schemas (:data:`SCHEMA_ERRORS`, :data:`SCHEMA_RELATIVE`; float64 unless said):

- ``reva/errors.parquet`` (every model; one row per set × perturbation, then the means): ``model``,
  ``set`` (``weak`` | ``evaluation``), ``kind`` (``clean`` | ``corruption`` | ``attack`` |
  ``mean``), ``perturbation`` (``clean``, a corruption, an attack, ``mCE``,
  ``mean_adversarial``), ``category`` (REVa category, :mod:`vcrbench.reva.categories`; ``""``
  for clean and means), ``error`` (clean error, uCE or adversarial error; null with a note when
  undefined), ``error_lo``, ``error_hi``, ``n_images``, ``n_samples`` (int64: the labelled
  images and samples it rests on), ``dv_median`` (median Δv of those perturbed samples; null for
  clean and means), ``resampled`` (what the interval redraws: ``images (N)``, or samples
  conditional on the images), ``note`` (string, null when nothing to say).
- ``reva/relative-errors.parquet`` (every model; one row per perturbation × measure): ``model``,
  ``kind`` (``corruption`` | ``attack``), ``perturbation``, ``category``, ``measure``
  (``severity`` | ``continuous``), ``value``, ``lo``, ``hi``, ``baseline_error`` (the clean
  error on the evaluation set), ``resampled``, ``note``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vcrbench.core.seeding import curve_bootstrap_seed
from vcrbench.curves.bootstrap import metric_interval
from vcrbench.curves.resampling import ClusterResampling, cluster_resampling
from vcrbench.curves.tables import finite_or_none, replicate_areas
from vcrbench.errors import VcrbenchError

#: The two sets, in table order.
SETS = ("weak", "evaluation")
#: ImageNet-C's severities (Eq. 7 averages over them).
SEVERITIES = (1, 2, 3, 4, 5)
#: Relative-error measures.
MEASURES = ("severity", "continuous")

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
    """A statistic: its point value (None: undefined), its ``(B,)`` bootstrap replicates (NaN:
    a replicate without a value), what it rests on and what needs saying."""

    value: float | None
    replicates: np.ndarray
    note: str | None = None
    images: frozenset[str] = field(default_factory=frozenset)
    n_samples: int = 0
    dv_median: float | None = None
    #: Whether replicate b weighs images by their keyed weights (False: too few images, the
    #: samples were resampled, conditional on the images).
    paired: bool = True

    @property
    def n_images(self) -> int:
        return len(self.images)

    def resampled(self) -> str | None:
        """What a replicate redraws: ``images (N)``, or the samples conditional on the images;
        None without a value."""
        if self.value is None:
            return None
        if self.paired:
            return f"images ({self.n_images})" if self.n_images else "images"
        return f"samples (conditional on {self.n_images} images)"

    def interval(self) -> tuple[float | None, float | None]:
        """95 % percentile interval of the replicates that have a value; (None, None) without
        a point value or with fewer than 2 of them."""
        if self.value is None or np.sum(np.isfinite(self.replicates)) < 2:
            return None, None
        lo, hi = metric_interval(self.replicates)
        return finite_or_none(lo), finite_or_none(hi)


def undefined(n_boot: int, note: str, **counts) -> Estimate:
    """A statistic without a value (``note`` says why)."""
    return Estimate(None, np.full(int(n_boot), np.nan), note, **counts)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _join(*notes: str | None) -> str | None:
    return "; ".join(n for n in notes if n) or None


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Elementwise ratio, NaN where the denominator is not positive."""
    positive = denominator > 0
    return np.where(positive, numerator / np.where(positive, denominator, 1.0), np.nan)


def _resampled_totals(image_ids: np.ndarray, values: np.ndarray, *, seed: int, n_boot: int,
                      min_units: int, key: tuple[str, ...]) -> tuple[np.ndarray, bool]:
    """``(B, K)`` replicate totals of per-sample ``values`` ``(N, K)`` whose samples belong to
    images ``image_ids`` ``(N,)``, and whether they are the images' keyed weights (False: fewer
    than ``min_units`` images, the samples were resampled; ``key`` names that bootstrap)."""
    resampling = cluster_resampling(
        {"images": image_ids}, n_boot=n_boot, seed=seed, min_units=min_units,
        fallback_seed=curve_bootstrap_seed(seed, "reva", *key),
    )
    return resampling.totals(values), isinstance(resampling, ClusterResampling)


def _fallback_note(images: frozenset[str], min_units: int) -> str:
    return (f"interval conditional on the {len(images)} images (fewer than "
            f"bootstrap.min_units = {min_units}): it resamples samples, unpaired")


@dataclass(frozen=True)
class _Samples:
    """The labelled samples of a per-sample table."""

    image_id: np.ndarray
    wrong: np.ndarray
    rows: pa.Table
    unlabelled: int

    def dv_median(self) -> float | None:
        if "dv" not in self.rows.column_names or self.rows.num_rows == 0:
            return None
        return float(np.median(self.rows.column("dv").to_numpy()))

    def note(self) -> str | None:
        return (f"{_count(self.unlabelled, 'sample')} of unlabelled images left out"
                if self.unlabelled else None)


def _labelled(table: pa.Table) -> _Samples:
    """The samples of ``table`` whose ``correct`` is known (null: no label, missing)."""
    known = pc.is_valid(table.column("correct")).to_numpy(zero_copy_only=False)
    rows = table.filter(pa.array(known, pa.bool_()))
    image_id = np.asarray(rows.column("image_id").to_pylist(), dtype=str)
    wrong = ~rows.column("correct").to_numpy(zero_copy_only=False).astype(bool)
    return _Samples(image_id, wrong, rows, int(table.num_rows - rows.num_rows))


def error_rate(image_ids: np.ndarray, wrong: np.ndarray, *, seed: int, n_boot: int,
               min_units: int, key: tuple[str, ...], note: str | None = None,
               dv_median: float | None = None) -> Estimate:
    """The error rate of per-sample mistakes ``wrong`` ``(N,)`` (sample i shows image
    ``image_ids[i]``): the mean, and replicates Σ w·wrong / Σ w (w: the image's weight);
    null with a note without samples. ``note`` is added to the estimate's."""
    image_ids, wrong = np.asarray(image_ids, dtype=str), np.asarray(wrong, bool)
    images = frozenset(image_ids.tolist())
    if wrong.size == 0:
        return undefined(n_boot, _join("no labelled sample", note))
    totals, paired = _resampled_totals(image_ids, np.column_stack([wrong, np.ones(wrong.size)]),
                                       seed=seed, n_boot=n_boot, min_units=min_units, key=key)
    return Estimate(float(wrong.mean()), _ratio(totals[:, 0], totals[:, 1]),
                    _join(None if paired else _fallback_note(images, min_units), note), images,
                    int(wrong.size), dv_median, paired)


def clean_error(index: pa.Table, clean: pa.Table, *, seed: int, n_boot: int, min_units: int,
                key: tuple[str, ...] = ("clean",)) -> Estimate:
    """Err: the clean top-1 error of a set's labelled images.

    Args:
        index: the set's index (``image_id``, ``label``; −1: no label).
        clean: the model's clean predictions (``image_id``, ``top1``), one row per image of
            the index at least.
        key: names that key the sample bootstrap of the fallback (set, perturbation).
    """
    label = dict(zip(index.column("image_id").to_pylist(),
                     index.column("label").to_numpy().astype(np.int64).tolist(), strict=True))
    top1 = dict(zip(clean.column("image_id").to_pylist(),
                    clean.column("top1").to_numpy().astype(np.int64).tolist(), strict=True))
    ids = sorted(i for i, y in label.items() if y >= 0)
    missing = [i for i in ids if i not in top1]
    if missing:
        raise VcrbenchError(f"no clean prediction for {len(missing)} images of the set, e.g. "
                            f"{missing[:3]}; re-run predict_clean")
    wrong = np.array([top1[i] != label[i] for i in ids], bool)
    unlabelled = len(label) - len(ids)
    return error_rate(np.array(ids, dtype=str), wrong, seed=seed, n_boot=n_boot,
                      min_units=min_units, key=key,
                      note=f"{_count(unlabelled, 'unlabelled image')} left out" if unlabelled
                      else None)


def adversarial_error(table: pa.Table, *, seed: int, n_boot: int, min_units: int,
                      key: tuple[str, ...]) -> Estimate:
    """E_adv (Eq. 5): the error on a set's adversarial images (``image_id``, ``correct``
    (bool, null: unlabelled), ``dv``: one row per adversarial image)."""
    samples = _labelled(table)
    return error_rate(samples.image_id, samples.wrong, seed=seed, n_boot=n_boot,
                      min_units=min_units, key=key, note=samples.note(),
                      dv_median=samples.dv_median())


def unnormalised_corruption_error(table: pa.Table, *, seed: int, n_boot: int, min_units: int,
                                  key: tuple[str, ...]) -> Estimate:
    """uCE (Eq. 7): the mean over severities 1–5 of the error at each severity, from
    ``image_id``, ``severity`` (1..5), ``correct`` (bool, null: unlabelled), ``dv`` (one row
    per sample). Null with a note when a severity has no labelled sample. Replicate b is the
    mean of the five replicate-b errors (none where one has no sample in replicate b)."""
    samples = _labelled(table)
    severity = samples.rows.column("severity").to_numpy().astype(np.int64)
    stray = sorted(set(severity.tolist()) - set(SEVERITIES))
    if stray:
        raise VcrbenchError(f"uCE needs ImageNet-C severities 1-5; got severities {stray}")
    images = frozenset(samples.image_id.tolist())
    counts = {"images": images, "n_samples": int(samples.wrong.size),
              "dv_median": samples.dv_median()}
    missing = [s for s in SEVERITIES if not (severity == s).any()]
    if missing:
        return undefined(n_boot, _join(f"no labelled sample at severities {missing}: uCE "
                                       "undefined", samples.note()), **counts)
    columns = []
    for s in SEVERITIES:
        at = severity == s
        columns += [samples.wrong & at, at]
    totals, paired = _resampled_totals(samples.image_id,
                                       np.column_stack(columns).astype(np.float64), seed=seed,
                                       n_boot=n_boot, min_units=min_units, key=key)
    per_level = np.column_stack([_ratio(totals[:, 2 * k], totals[:, 2 * k + 1])
                                 for k in range(len(SEVERITIES))])
    value = float(np.mean([samples.wrong[severity == s].mean() for s in SEVERITIES]))
    note = _join(None if paired else _fallback_note(images, min_units), samples.note())
    return Estimate(value, per_level.mean(axis=1), note, paired=paired, **counts)


def mean_error(terms: Mapping[str, Estimate], what: str, n_boot: int) -> Estimate:
    """The mean of several errors (mCE, Eq. 8, over the uCEs; the mean adversarial error,
    Eq. 6), replicate by replicate; null with a note naming the terms that are undefined."""
    if not terms:
        return undefined(n_boot, f"no {what} to average")
    images = frozenset().union(*(t.images for t in terms.values()))
    n_samples = sum(t.n_samples for t in terms.values())
    undefined_terms = [name for name, t in terms.items() if t.value is None]
    if undefined_terms:
        return undefined(n_boot, f"{what} undefined for {', '.join(undefined_terms)}",
                         images=images, n_samples=n_samples)
    unpaired = [name for name, t in terms.items() if not t.paired]
    note = (f"the intervals of {', '.join(unpaired)} resample samples, conditional on their "
            "images" if unpaired else None)
    return Estimate(float(np.mean([t.value for t in terms.values()])),
                    np.mean([t.replicates for t in terms.values()], axis=0), note, images,
                    n_samples, paired=not unpaired)


def relative_error(numerator: Estimate, baseline: Estimate) -> Estimate:
    """``numerator / baseline`` (Eq. 3, Eq. 4, and the continuous measure), replicate b by
    replicate b; null with a note when the numerator is undefined or the clean error is 0 or
    undefined. Replicates whose clean error is 0 are left out of the interval (noted)."""
    n = numerator.replicates.size
    if baseline.replicates.size != n:
        raise VcrbenchError(f"{n} and {baseline.replicates.size} replicates cannot be paired")
    if numerator.value is None:
        return undefined(n, numerator.note or "the error is undefined")
    if baseline.value is None:
        return undefined(n, f"clean error undefined ({baseline.note}): relative error "
                            "undefined")
    if baseline.value == 0:
        return undefined(n, "clean error 0: relative error undefined")
    zero = int(np.sum(np.isfinite(numerator.replicates) & (baseline.replicates == 0)))
    return Estimate(
        numerator.value / baseline.value, _ratio(numerator.replicates, baseline.replicates),
        _join(numerator.note,
              None if baseline.paired else f"clean error: {baseline.note}",
              f"{zero} of {n} replicates drew a clean error of 0 and are left out of the "
              "interval" if zero else None),
        paired=numerator.paired and baseline.paired,
    )


def continuous_error(metrics: pa.Table, replicates: pa.Table, n_boot: int) -> Estimate:
    """``1 − R_a`` of the weak set's accuracy curve in the data set's own label space (1000
    classes for ImageNet, 10 for CIFAR-10: :func:`own_classes`; ``metrics`` row's R, and the
    exact areas of its ``replicates``, replicate b paired with replicate b of every image-level
    statistic); null with the metrics' note when R is."""
    rows = [r for r in metrics.to_pylist() if r["metric"] == "accuracy"]
    classes = own_classes(rows)
    rows = [r for r in rows if r["classes"] == classes]
    if not rows:
        return undefined(n_boot, "no accuracy curve on the weak set")
    row = rows[0]
    if row["R"] is None:
        return undefined(n_boot, f"R_a on the weak set not reported: {row['note'] or 'no R'}")
    notes = [f"R_a on the weak set: {row['note']}" if row["note"] else None]
    reps = np.full(int(n_boot), np.nan)
    resampled = row.get("resampled")
    paired = resampled is None or str(resampled).startswith("images")
    if row["R_lo"] is None:
        notes.append("R_a on the weak set has no interval")
    else:
        areas = replicate_areas(replicates, "accuracy", classes)
        m = min(int(n_boot), areas.size)
        reps[:m] = 1.0 - areas[:m]
        if areas.size != n_boot:
            notes.append(f"the weak set's curve has {areas.size} replicates, not {n_boot}")
        if not paired:
            notes.append("the weak set's curve resamples samples: its replicates are unpaired")
    return Estimate(1.0 - float(row["R"]), reps, _join(*notes), paired=paired)


def own_classes(rows: list[dict]) -> int | None:
    """The data set's own label space among curve or metrics rows (``classes`` column): the
    largest count present (ImageNet's 1000 beside its 16-class coarsening; CIFAR-10's 10);
    None without rows."""
    return max((int(r["classes"]) for r in rows), default=None)


def error_row(model: str, set_name: str, kind: str, perturbation: str, category: str,
              estimate: Estimate) -> dict:
    """One row of the errors table (module docstring)."""
    lo, hi = estimate.interval()
    return {"model": model, "set": set_name, "kind": kind, "perturbation": perturbation,
            "category": category, "error": estimate.value, "error_lo": lo, "error_hi": hi,
            "n_images": estimate.n_images, "n_samples": estimate.n_samples,
            "dv_median": None if kind in ("clean", "mean") else estimate.dv_median,
            "resampled": estimate.resampled(), "note": estimate.note}


def relative_row(model: str, kind: str, perturbation: str, category: str, measure: str,
                 estimate: Estimate, baseline: Estimate) -> dict:
    """One row of the relative-errors table (module docstring)."""
    if measure not in MEASURES:
        raise VcrbenchError(f"measure must be one of {MEASURES}, got {measure!r}")
    lo, hi = estimate.interval()
    return {"model": model, "kind": kind, "perturbation": perturbation, "category": category,
            "measure": measure, "value": estimate.value, "lo": lo, "hi": hi,
            "baseline_error": baseline.value, "resampled": estimate.resampled(),
            "note": estimate.note}


def errors_table(rows: list[dict]) -> pa.Table:
    """The errors table of :func:`error_row` rows."""
    return pa.Table.from_pylist(rows, schema=SCHEMA_ERRORS)


def relative_errors_table(rows: list[dict]) -> pa.Table:
    """The relative-errors table of :func:`relative_row` rows."""
    return pa.Table.from_pylist(rows, schema=SCHEMA_RELATIVE)


def set_errors(model: str, set_name: str, *, index: pa.Table, clean: pa.Table,
               severities: Mapping[str, pa.Table], attacks: Mapping[str, pa.Table],
               categories: Mapping[str, str], seed: int, n_boot: int, min_units: int
               ) -> tuple[list[dict], dict[tuple[str, str], Estimate]]:
    """Every error of one set: clean, uCE per corruption, adversarial error per attack, mCE
    and the mean adversarial error (rows of the errors table, in that order), and the
    estimates by (kind, perturbation): ``("clean", "clean")``, ``("corruption", c)``,
    ``("attack", a)``.

    Args:
        severities: corruption -> per-sample table (``image_id``, ``severity``, ``correct``,
            ``dv``) of the set's ImageNet-C sample.
        attacks: attack -> per-image table (``image_id``, ``correct``, ``dv``).
        categories: corruption -> REVa category.
    """
    common = {"seed": seed, "n_boot": n_boot, "min_units": min_units}
    base = clean_error(index, clean, key=(set_name, "clean"), **common)
    rows = [error_row(model, set_name, "clean", "clean", "", base)]
    uces, advs = {}, {}
    for corruption, table in severities.items():
        uces[corruption] = unnormalised_corruption_error(table, key=(set_name, corruption),
                                                         **common)
        rows.append(error_row(model, set_name, "corruption", corruption,
                              categories[corruption], uces[corruption]))
    for attack, table in attacks.items():
        advs[attack] = adversarial_error(table, key=(set_name, attack), **common)
        rows.append(error_row(model, set_name, "attack", attack, "adversarial", advs[attack]))
    for name, terms, what in (("mCE", uces, "uCE"), ("mean_adversarial", advs,
                                                      "adversarial error")):
        if terms:
            rows.append(error_row(model, set_name, "mean", name, "",
                                  mean_error(terms, what, n_boot)))
    estimates = {("clean", "clean"): base}
    estimates.update({("corruption", c): e for c, e in uces.items()})
    estimates.update({("attack", a): e for a, e in advs.items()})
    return rows, estimates
