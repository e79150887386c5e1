"""REVa's comparison of training methods (Standard, AugMix, REVa⁻, REVa; its Tables 2–5) on
the evaluation images, with image-level bootstrap intervals and Wilcoxon signed-rank tests, and
the VCR robustness of every compared model side by side.

For each method (a label and the model it names, e.g. ``REVa`` -> ``finetuned:reva``), on the
labelled evaluation images, top-1 errors (fractions in [0, 1]) by the functions of
:mod:`vcrbench.reva.relative_errors`:

    Err            the clean error
    E_adv,a        the error on attack a's adversarial images (Eq. 5), ``white-box`` (crafted on
                   the method's own model) and ``transfer`` (crafted on the model of
                   ``transfer_from``, the paper's protocol: the standard model)
    mean adv.      the mean of E_adv,a over the attacks (Eq. 6), each setting
    uCE_c          (1/5) Σ_{s=1..5} E_{c,s}, the unnormalised corruption error (Eq. 7)
    mCE            the mean uCE over the corruptions (Eq. 8)

**Intervals** resample images: replicate b weighs every image by its keyed Poisson(1) weight of
replicate b (:func:`vcrbench.curves.resampling.cluster_resampling`, keyed by the run seed and
the image id), and each sample (a severity sample, an adversarial image) weighs as its image, so
a cluster is one image with all its perturbed versions. The weights are those of every curve of
the run and do not depend on the model, so two methods' replicates are paired and the
difference ``method − baseline`` has a paired interval. 95 % percentile intervals; with fewer
than ``bootstrap.min_units`` images the samples are resampled instead (``resampled`` says so).

**Tests** (:mod:`vcrbench.reva.signed_rank`): per method, baseline and setting, the Wilcoxon
signed-rank test of the paired per-perturbation errors (one pair per attack, or per corruption's
uCE), as the paper's Table 5. The clean error is one number per method: no test, its paired
difference interval only.

Schemas (:data:`SCHEMA_ERRORS`, :data:`SCHEMA_TESTS`, :data:`SCHEMA_VCR`; float64 unless said):

- ``reva/comparison/errors.parquet``, one row per method × setting × perturbation: ``method``
  (the label), ``model``, ``kind`` (``clean`` | ``white-box`` | ``transfer`` |
  ``corruption``), ``perturbation`` (``clean``, an attack, ``mean_adversarial``, a corruption,
  ``mCE``), ``category`` (REVa category; ``adversarial`` for attacks, ``""`` for clean and
  means), ``crafted_on`` (the model the attack was crafted on; null for clean and corruptions),
  ``value`` (Err, E_adv, mean, uCE or mCE; null with a note when undefined), ``lo``, ``hi``,
  ``n_images``, ``n_samples`` (int64: labelled images and samples it rests on), ``resampled``
  (what the interval redraws), ``note``.
- ``reva/comparison/tests.parquet``, one row per method × baseline (≠ method) × measure
  (``clean``, ``white-box``, ``transfer``, ``corruption``): ``method``, ``baseline``,
  ``measure``, ``n_pairs``, ``n_lower``, ``n_higher``, ``n_zero`` (int64: perturbations whose
  error is lower, higher, equal for the method), ``statistic`` (scipy's Wilcoxon statistic),
  ``p_value``, ``test`` (``exact`` | ``exact permutation`` | ``normal approximation``; null:
  no test), ``alternative``, ``difference`` (method − baseline of Err, the mean adversarial error
  or mCE), ``difference_lo``, ``difference_hi`` (paired 95 % interval), ``resampled``, ``note``.
- ``reva/comparison/vcr.parquet``, one row per method × corruption × property, from
  ``metrics/summary.parquet``: ``method``, ``model``, ``corruption``, ``metric``, ``classes``
  (int16), ``R``, ``R_lo``, ``R_hi`` (R_a for accuracy, R_p for consistency), ``HMRI``,
  ``HMRI_lo``, ``HMRI_hi``, ``MRSI``, ``MRSI_lo``, ``MRSI_hi`` (null without human data),
  ``resampled``, ``note``.

The Markdown (``reva/comparison/report.md``) first says whether the fine-tuned methods'
training classes cover the evaluation images' classes (:func:`class_overlap_text`: when they
are disjoint, nothing the methods learn is about the evaluated classes, so the comparison
cannot show the paper's gains), then gives the Table 2–4 style summary (rows: methods;
columns: Err, mean adversarial error per setting, mCE), the per-attack and per-corruption
errors, the tests and R_a / R_p (HMRI / MRSI) per method.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from vcrbench.core.tables import markdown_table
from vcrbench.curves.bootstrap import metric_interval
from vcrbench.curves.tables import finite_or_none
from vcrbench.errors import VcrbenchError
from vcrbench.reva.categories import ADVERSARIAL, category_of
from vcrbench.reva.published import published_text
from vcrbench.reva.relative_errors import (
    Estimate,
    adversarial_error,
    clean_error,
    mean_error,
    own_classes,
    unnormalised_corruption_error,
)
from vcrbench.reva.report import interval_text
from vcrbench.reva.signed_rank import signed_rank_test

#: Settings of the errors table, in order; the means of each (``perturbation``).
KINDS = ("clean", "white-box", "transfer", "corruption")
MEANS = {"white-box": "mean_adversarial", "transfer": "mean_adversarial", "corruption": "mCE"}
#: The tables of :func:`comparison_tables` (``reva/comparison/<name>.parquet``).
TABLES = ("errors", "tests", "vcr")

SCHEMA_ERRORS = pa.schema([
    ("method", pa.string()), ("model", pa.string()), ("kind", pa.string()),
    ("perturbation", pa.string()), ("category", pa.string()), ("crafted_on", pa.string()),
    ("value", pa.float64()), ("lo", pa.float64()), ("hi", pa.float64()),
    ("n_images", pa.int64()), ("n_samples", pa.int64()), ("resampled", pa.string()),
    ("note", pa.string()),
])
SCHEMA_TESTS = pa.schema([
    ("method", pa.string()), ("baseline", pa.string()), ("measure", pa.string()),
    ("n_pairs", pa.int64()), ("n_lower", pa.int64()), ("n_higher", pa.int64()),
    ("n_zero", pa.int64()), ("statistic", pa.float64()), ("p_value", pa.float64()),
    ("test", pa.string()), ("alternative", pa.string()), ("difference", pa.float64()),
    ("difference_lo", pa.float64()), ("difference_hi", pa.float64()),
    ("resampled", pa.string()), ("note", pa.string()),
])
VCR_VALUES = ("R", "R_lo", "R_hi", "HMRI", "HMRI_lo", "HMRI_hi", "MRSI", "MRSI_lo", "MRSI_hi")
SCHEMA_VCR = pa.schema([
    ("method", pa.string()), ("model", pa.string()), ("corruption", pa.string()),
    ("metric", pa.string()), ("classes", pa.int16()),
    *((name, pa.float64()) for name in VCR_VALUES),
    ("resampled", pa.string()), ("note", pa.string()),
])


@dataclass(frozen=True)
class MethodInputs:
    """One method's per-sample tables on the evaluation images.

    Attributes:
        model: the model string the method names.
        clean: clean predictions (``image_id``, ``top1``).
        severities: corruption -> its ImageNet-C sample (``image_id``, ``severity`` 1..5,
            ``correct`` (bool, null: unlabelled), ``dv``).
        white_box: attack -> the images crafted on this model (``image_id``, ``correct``,
            ``dv``), as classified by it.
        transfer: attack -> the images crafted on the transfer source's model, as classified
            by this model.
    """

    model: str
    clean: pa.Table
    severities: Mapping[str, pa.Table] = field(default_factory=dict)
    white_box: Mapping[str, pa.Table] = field(default_factory=dict)
    transfer: Mapping[str, pa.Table] = field(default_factory=dict)


@dataclass(frozen=True)
class MethodErrors:
    """A method's estimates by setting: ``terms[kind][perturbation]`` and ``means[kind]``
    (no mean for ``clean``)."""

    terms: dict[str, dict[str, Estimate]]
    means: dict[str, Estimate]


def method_errors(inputs: MethodInputs, index: pa.Table, *, seed: int, n_boot: int,
                  min_units: int) -> MethodErrors:
    """Err, E_adv per attack (white-box and transferred), uCE per corruption and their means
    for one method (module docstring)."""
    common = {"seed": seed, "n_boot": n_boot, "min_units": min_units}
    terms = {
        "clean": {"clean": clean_error(index, inputs.clean, key=("evaluation", "clean"),
                                       **common)},
        "white-box": {a: adversarial_error(t, key=("evaluation", a), **common)
                      for a, t in inputs.white_box.items()},
        "transfer": {a: adversarial_error(t, key=("evaluation", "transfer", a), **common)
                     for a, t in inputs.transfer.items()},
        "corruption": {c: unnormalised_corruption_error(t, key=("evaluation", c), **common)
                       for c, t in inputs.severities.items()},
    }
    what = {"white-box": "adversarial error", "transfer": "adversarial error",
            "corruption": "uCE"}
    means = {kind: mean_error(terms[kind], what[kind], n_boot) for kind in MEANS if terms[kind]}
    return MethodErrors(terms, means)


def _error_row(method: str, model: str, kind: str, perturbation: str, category: str,
               crafted_on: str | None, estimate: Estimate) -> dict:
    lo, hi = estimate.interval()
    return {"method": method, "model": model, "kind": kind, "perturbation": perturbation,
            "category": category, "crafted_on": crafted_on, "value": estimate.value,
            "lo": lo, "hi": hi, "n_images": estimate.n_images,
            "n_samples": estimate.n_samples, "resampled": estimate.resampled(),
            "note": estimate.note}


def _difference(method: Estimate, baseline: Estimate) -> dict:
    """``method − baseline`` and its paired 95 % interval (replicate b minus replicate b)."""
    if method.value is None or baseline.value is None:
        return {"difference": None, "difference_lo": None, "difference_hi": None,
                "resampled": None}
    replicates = method.replicates - baseline.replicates
    lo = hi = None
    if np.sum(np.isfinite(replicates)) >= 2:
        lo, hi = (finite_or_none(x) for x in metric_interval(replicates))
    paired = method.paired and baseline.paired
    resampled = (f"images ({len(method.images | baseline.images)}), paired" if paired else
                 "samples, unpaired (too few images): the interval ignores the pairing")
    return {"difference": method.value - baseline.value, "difference_lo": lo,
            "difference_hi": hi, "resampled": resampled}


def _test_row(method: str, baseline: str, measure: str, mine: MethodErrors,
              theirs: MethodErrors, alternative: str) -> dict:
    """One row of the tests table (module docstring)."""
    row = {"method": method, "baseline": baseline, "measure": measure,
           "alternative": alternative}
    if measure == "clean":
        row.update(n_pairs=1, n_lower=None, n_higher=None, n_zero=None, statistic=None,
                   p_value=None, test=None,
                   note="one clean error per method: no signed-rank test; the paired "
                        "difference interval compares them")
        return {**row, **_difference(mine.terms["clean"]["clean"],
                                     theirs.terms["clean"]["clean"])}
    a, b = mine.terms[measure], theirs.terms[measure]
    shared = [p for p in a if p in b]
    undefined_pairs = [p for p in shared if a[p].value is None or b[p].value is None]
    pairs = [p for p in shared if p not in undefined_pairs]
    result = signed_rank_test([a[p].value - b[p].value for p in pairs], alternative)
    notes = [f"left out (undefined): {', '.join(undefined_pairs)}" if undefined_pairs else None,
             f"only one method has: {', '.join(sorted(set(a) ^ set(b)))}"
             if set(a) != set(b) else None, result.note]
    row.update(n_pairs=result.n_pairs, n_lower=result.n_lower, n_higher=result.n_higher,
               n_zero=result.n_zero, statistic=result.statistic, p_value=result.p_value,
               test=result.method, note="; ".join(n for n in notes if n) or None)
    return {**row, **_difference(mine.means[measure], theirs.means[measure])}


def vcr_rows(summary: pa.Table, methods: Mapping[str, str]) -> list[dict]:
    """The summary's rows of every method's model (``methods``: label -> model), in method
    order, as rows of the VCR table (module docstring)."""
    rows = summary.to_pylist()
    out = []
    for label, model in methods.items():
        for r in rows:
            if r["model"] == model:
                out.append({"method": label, "model": model, "corruption": r["corruption"],
                            "metric": r["metric"], "classes": r["classes"],
                            **{k: r.get(k) for k in VCR_VALUES},
                            "resampled": r.get("resampled"), "note": r.get("note")})
    return out


def comparison_tables(
    *,
    methods: Mapping[str, MethodInputs],
    baselines: Sequence[str],
    transfer_from: str | None,
    index: pa.Table,
    summary: pa.Table,
    seed: int,
    n_boot: int,
    min_units: int,
    alternative: str = "two-sided",
    categories: Mapping[str, str] | None = None,
    training_labels: Mapping[str, Sequence[int]] | None = None,
    published: str | None = None,
) -> tuple[dict[str, pa.Table], str]:
    """The comparison's tables and Markdown (module docstring).

    Args:
        methods: label -> the method's inputs, in table order.
        baselines: the labels every method is tested against (a method is not tested
            against itself).
        transfer_from: the label whose model crafted the transferred attacks (for the text
            and ``crafted_on``; None without attacks).
        index: the evaluation images' index (``image_id``, ``label``).
        summary: ``metrics/summary.parquet`` (its rows of the methods' models are used).
        seed, n_boot, min_units: the run seed, ``bootstrap.replicates``,
            ``bootstrap.min_units``.
        alternative: ``two-sided`` or ``less`` (``reva.comparison.alternative``).
        categories: corruption -> REVa category (default: :func:`category_of` of the name).
        training_labels: label -> the class labels of a fine-tuned method's training images
            (for :func:`class_overlap_text`; methods that were not fine-tuned are left out).
        published: a name of :data:`vcrbench.reva.published.PUBLISHED` whose rows the Markdown
            prints beside the summary (``reva.comparison.published``), or None.

    Returns:
        ({"errors", "tests", "vcr"} -> table, Markdown text).
    """
    unknown = [b for b in [*baselines, *([transfer_from] if transfer_from else [])]
               if b not in methods]
    if unknown:
        raise VcrbenchError(f"comparison: {unknown} are not among the methods {list(methods)}")
    categories = dict(categories or {})
    source = methods[transfer_from].model if transfer_from else None
    errors = {label: method_errors(inputs, index, seed=seed, n_boot=n_boot,
                                   min_units=min_units)
              for label, inputs in methods.items()}
    rows = []
    for label, found in errors.items():
        model = methods[label].model
        for kind in KINDS:
            crafted = {"white-box": model, "transfer": source}.get(kind)
            for name, estimate in found.terms[kind].items():
                category = (ADVERSARIAL if crafted else
                            "" if kind == "clean" else categories.get(name) or category_of(name))
                rows.append(_error_row(label, model, kind, name, category, crafted, estimate))
            if kind in found.means:
                rows.append(_error_row(label, model, kind, MEANS[kind], "", crafted,
                                       found.means[kind]))
    tests = []
    for label in methods:
        for baseline in baselines:
            if baseline == label:
                continue
            for measure in KINDS:
                if measure == "clean" or (measure in errors[label].means
                                          and measure in errors[baseline].means):
                    tests.append(_test_row(label, baseline, measure, errors[label],
                                           errors[baseline], alternative))
    tables = {
        "errors": pa.Table.from_pylist(rows, schema=SCHEMA_ERRORS),
        "tests": pa.Table.from_pylist(tests, schema=SCHEMA_TESTS),
        "vcr": pa.Table.from_pylist(vcr_rows(summary, {k: v.model for k, v in methods.items()}),
                                    schema=SCHEMA_VCR),
    }
    text = comparison_text(tables, methods={k: v.model for k, v in methods.items()},
                           baselines=baselines, transfer_from=transfer_from, n_boot=n_boot,
                           published=published)
    if training_labels:
        evaluated = np.asarray(index.column("label").to_numpy(zero_copy_only=False))
        overlap = class_overlap_text(training_labels, evaluated[evaluated >= 0].tolist())
        title, _, rest = text.partition("\n\n")
        text = "\n\n".join([title, *overlap, rest])
    return tables, text


def class_overlap_text(training_labels: Mapping[str, Sequence[int]],
                       evaluation_labels: Sequence[int]) -> list[str]:
    """Paragraphs on how the fine-tuned methods' training classes meet the evaluation images'
    classes (labels >= 0): a limitation heading when they are disjoint (no method can learn
    anything about the evaluated classes: differences are side effects of fine-tuning on other
    classes, not the paper's gains), a note when they cover only some, one sentence when they
    cover all. Empty without fine-tuned methods."""
    if not training_labels:
        return []
    trained = {label: {int(c) for c in classes if int(c) >= 0}
               for label, classes in training_labels.items()}
    union = set().union(*trained.values())
    evaluated = {int(c) for c in evaluation_labels if int(c) >= 0}
    shared = evaluated & union
    methods = ", ".join(trained)
    counts = (f"the fine-tuned methods ({methods}) were trained on images of {len(union)} "
              f"classes; the labelled evaluation images are of {len(evaluated)} classes")
    if not shared:
        return ["## Limitation: the training and evaluation classes are disjoint",
                f"Read this first: {counts}, and none of those is a training class. No method "
                "can learn anything about the evaluated classes from its fine-tuning, so the "
                "differences below are side effects of fine-tuning on other classes (typically "
                "a loss of clean and corruption accuracy), not tests of the paper's claim that "
                "REVa improves robustness. The paper fine-tunes and evaluates on the same "
                "classes (its training and test sets)."]
    if shared != evaluated:
        return ["## Note: the training classes cover only part of the evaluation classes",
                f"{counts}; {len(shared)} of the {len(evaluated)} evaluation classes are among "
                "the training classes. Gains can only come from those; the paper fine-tunes and "
                "evaluates on the same classes."]
    return [f"Classes: {counts}, all of them among the training classes (as in the paper)."]


def _signed(value: float | None, lo: float | None, hi: float | None) -> str:
    if value is None:
        return "–"
    interval = "" if lo is None or hi is None else f" [{lo:+.3f}, {hi:+.3f}]"
    return f"{value:+.3f}{interval}"


def _cell(text: str | None) -> str:
    return (text or "").replace("|", "\\|")


def comparison_text(tables: Mapping[str, pa.Table], *, methods: Mapping[str, str],
                    baselines: Sequence[str], transfer_from: str | None, n_boot: int,
                    published: str | None = None) -> str:
    """The Markdown of the comparison (module docstring); with ``published``, the paper's rows
    of that name (:mod:`vcrbench.reva.published`) beside the summary."""
    errors = tables["errors"].to_pylist()
    by = {(r["method"], r["kind"], r["perturbation"]): r for r in errors}

    def cell(method, kind, perturbation):
        r = by.get((method, kind, perturbation))
        return interval_text(r["value"], r["lo"], r["hi"]) if r else "–"

    n_images = next((r["n_images"] for r in errors if r["kind"] == "clean"), 0)
    lines = ["# REVa: comparison of training methods", "",
             f"Methods: {', '.join(f'{k} (`{v}`)' for k, v in methods.items())}; baselines: "
             f"{', '.join(baselines)}" + (f"; transferred attacks crafted on {transfer_from} "
                                          f"(`{methods[transfer_from]}`)" if transfer_from else "")
             + f". Top-1 errors (fractions) on the {n_images} labelled evaluation images.", ""]
    kinds = [k for k in KINDS if any(r["kind"] == k for r in errors)]
    headers = {"clean": "Err", "white-box": "mean adv. err (white-box)",
               "transfer": f"mean adv. err (transfer from {transfer_from})",
               "corruption": "mCE"}
    lines += ["## Summary (the paper's Tables 2–4)", ""]
    lines += markdown_table(
        ["method", *(headers[k] for k in kinds)],
        ([m, *(cell(m, k, "clean" if k == "clean" else MEANS[k]) for k in kinds)]
         for m in methods),
    )
    if published:
        lines += published_text(published, errors, list(methods), transfer_from)
    titles = {"white-box": "Adversarial error per attack, white-box (Eq. 5, 6)",
              "transfer": f"Adversarial error per attack, transferred from {transfer_from} "
                          "(Eq. 5, 6)",
              "corruption": "uCE per corruption (Eq. 7) and mCE (Eq. 8)"}
    for kind in kinds[1:]:
        names = list(dict.fromkeys(r["perturbation"] for r in errors if r["kind"] == kind))
        lines += ["", f"## {titles[kind]}", ""]
        lines += markdown_table(["method", *names],
                                ([m, *(cell(m, kind, p) for p in names)] for m in methods))
        if kind == "transfer":
            lines += ["", f"For {transfer_from} these are its own white-box attacks (the same "
                          "images)."]
    tests = tables["tests"].to_pylist()
    if tests:
        lines += ["", "## Method against baseline", "",
                  "Wilcoxon signed-rank test of the paired per-perturbation errors (pairs: the "
                  "attacks, or the corruptions' uCE; the paper's Table 5); difference: method − "
                  "baseline of Err, the mean adversarial error or mCE, with its paired 95 % "
                  "interval (negative: the method errs less).", ""]
        lines += markdown_table(
            ["method", "baseline", "measure", "pairs (lower / higher / equal)", "W", "p",
             "test", "difference", "note"],
            ([t["method"], t["baseline"], t["measure"],
              f"{t['n_pairs']}" + ("" if t["n_lower"] is None else
                                   f" ({t['n_lower']} / {t['n_higher']} / {t['n_zero']})"),
              "–" if t["statistic"] is None else f"{t['statistic']:g}",
              "–" if t["p_value"] is None else f"{t['p_value']:.3f}",
              t["test"] or "–", _signed(t["difference"], t["difference_lo"],
                                        t["difference_hi"]), _cell(t["note"])]
             for t in tests),
        )
    lines += _vcr_text(tables["vcr"].to_pylist(), methods)
    lines += ["", f"Intervals: 95 % percentile intervals over {n_boot} bootstrap replicates "
              "that resample the evaluation images (an image comes with all its perturbed "
              "versions), with the same image weights for every method, so differences are "
              "paired; a note says where not.", ""]
    return "\n".join(lines)


def _vcr_text(rows: list[dict], methods: Mapping[str, str]) -> list[str]:
    """R_a and R_p in the data set's own label space (1000 classes for ImageNet) per corruption
    and method; HMRI / MRSI where present."""
    lines = []
    classes = own_classes(rows)
    for metric, title in (("accuracy", f"R_a (accuracy, {classes} classes)"),
                          ("consistency", f"R_p (consistency, {classes} classes)")):
        part = [r for r in rows if (r["metric"], r["classes"]) == (metric, classes)]
        if not part:
            continue
        corruptions = list(dict.fromkeys(r["corruption"] for r in part))
        by = {(r["method"], r["corruption"]): r for r in part}
        lines += ["", f"## VCR: {title} per corruption", ""]
        lines += markdown_table(
            ["method", *corruptions],
            ([m, *(interval_text(by[(m, c)]["R"], by[(m, c)]["R_lo"], by[(m, c)]["R_hi"])
                   if (m, c) in by else "–" for c in corruptions)] for m in methods))
    human = [r for r in rows if r["HMRI"] is not None or r["MRSI"] is not None]
    if human:
        lines += ["", "## VCR: human comparison (HMRI, MRSI; 16 classes)", ""]
        lines += markdown_table(
            ["method", "corruption", "metric", "HMRI", "MRSI"],
            ([r["method"], r["corruption"], r["metric"], interval_text(r["HMRI"], r["HMRI_lo"],
                                                            r["HMRI_hi"]),
              interval_text(r["MRSI"], r["MRSI_lo"], r["MRSI_hi"])] for r in human))
    return lines
