"""The overlap report: NOC's robustness and overlap scores, Algorithm 1, CE / mCE and balance
from the pipeline's cached tables (the arithmetic is in :mod:`vcrbench.overlap.scores`,
:mod:`~vcrbench.overlap.selection` and :mod:`~vcrbench.overlap.corruption_error`).

Models (roles): ``standard`` (the base fine-tuned without augmentation, or the base itself),
one model per candidate corruption ``c`` (fine-tuned with ``c`` as augmentation), and the CE
baseline. Every model is evaluated on the same corrupted samples of the run.

Two robustness scores per model and corruption, both divided by the model's clean accuracy on
the run's images:

- ``noc``: ``R = A_c / A_clean`` (NOC §3.1), ``A_c`` the accuracy over the corruption's uniform
  sample (parameters over the whole domain, so every severity counts);
- ``vcr``: ``R = R_a / A_clean``, ``R_a`` the area under the fitted accuracy curve over the
  whole Δv range (the VCR counterpart, which weights every amount of visual change equally).

Intervals (95 %): a paired bootstrap over images. Replicate ``b`` weighs every image of the run
with the image weights of the curves' bootstrap (:func:`vcrbench.curves.resampling.unit_weights`,
keyed by the run seed and the image id); every model's ``A_clean`` and ``A_c`` are re-weighted
by them (a sample weighs as its image), so the overlap matrix of replicate ``b`` uses one
resample for all models, as the scores are compared. For ``vcr``, the replicate's ``R_a`` is the
area of the model's bootstrap curve ``b``, which resampled the same images with the same weights
(where the property had at least ``bootstrap.min_units`` images), so ``R_a`` and ``A_clean`` of
a replicate are paired too. Algorithm 1 runs on the point estimates. A ``vcr`` score whose R_a
is not reported (too few Δv bins, the summary's ``note``) is null, and so is that score's
matrix; Algorithm 1 does not run for it.

Tables under ``overlap/``:

- ``robustness.parquet``: ``role``, ``model``, ``corruption``, ``accuracy_clean``,
  ``accuracy``, ``R_a``, ``score`` ("noc" | "vcr"), ``R``, ``R_lo``, ``R_hi``.
- ``matrix.parquet``: ``score``, ``c1``, ``c2``, ``O``, ``O_lo``, ``O_hi`` (every ordered pair).
- ``matrix_replicates.parquet``: ``score``, ``replicate``, ``c1``, ``c2``, ``O`` (null where the
  replicate's score is not finite): the bootstrap matrices behind the intervals, so that a
  contrast of two overlap scores gets its paired interval (:func:`overlap_contrast`).
- ``gains.parquet``: ``score``, ``corruption``, ``gain`` (``R_c`` of the model fine-tuned with
  ``c`` minus the standard model's: the denominator of Eq. (2) in ``c``'s row and column),
  ``gain_lo``, ``gain_hi`` (paired, as the matrix), ``supported`` (bool: the interval is above 0;
  null without one), ``note``. Eq. (2) is defined wherever the gain is above 0 (the paper); where
  its interval reaches 0 the overlaps of that row and column divide by a gain these images cannot
  tell from none, and the report says so.
- ``benchmarks.parquet``: ``score``, ``threshold``, ``corruptions`` (list), ``size``,
  ``mean_overlap``, ``balance_range``, ``balance_std`` (spread of the mCEs of the members'
  single-corruption models on the selected benchmark; null for a single corruption).
- ``ce.parquet``: ``model``, ``role``, ``corruption``, ``error``, ``baseline_error``, ``CE``,
  then one row per model with ``corruption`` "mCE" (over all candidates).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vcrbench.core.properties import select
from vcrbench.core.tables import markdown_table
from vcrbench.curves.bootstrap import metric_interval
from vcrbench.curves.resampling import unit_weights
from vcrbench.curves.tables import replicate_areas
from vcrbench.errors import VcrbenchError
from vcrbench.overlap.config import STANDARD
from vcrbench.overlap.corruption_error import balance, corruption_errors, mean_corruption_error
from vcrbench.overlap.scores import overlap_matrix
from vcrbench.overlap.selection import non_overlapping_benchmarks

SCORES = ("noc", "vcr")


def clean_correct(index: pa.Table, clean: pa.Table, classes: int) -> np.ndarray:
    """(n_images,) 1.0 / 0.0 per image of the index, NaN where the image has no label;
    ``classes`` 16: ImageNet's 16 categories, else the data set's own classes (1000 for
    ImageNet, 10 for CIFAR-10)."""
    if clean.column("image_id").to_pylist() != index.column("image_id").to_pylist():
        raise VcrbenchError("clean predictions and the index do not list the same images")
    if classes != 16:
        label, decision = index.column("label").to_numpy(), clean.column("top1").to_numpy()
    else:
        label = index.column("category16").to_numpy()
        decision = clean.column("top1_16").to_numpy()
    out = (decision.astype(np.int64) == label.astype(np.int64)).astype(np.float64)
    out[label < 0] = np.nan
    return out


def image_sums(outcomes: pa.Table, image_ids: list[str], classes: int
               ) -> tuple[np.ndarray, np.ndarray]:
    """Per image of the index: (number of labelled samples, number of correct ones)."""
    column = outcomes.column("correct16" if classes == 16 else "correct")
    position = {image_id: i for i, image_id in enumerate(image_ids)}
    where = np.array([position[i] for i in outcomes.column("image_id").to_pylist()], np.int64)
    known = pc.is_valid(column).to_numpy(zero_copy_only=False)
    values = pc.fill_null(column, False).to_numpy(zero_copy_only=False).astype(np.float64)
    n = len(image_ids)
    return (np.bincount(where[known], minlength=n).astype(np.float64),
            np.bincount(where, weights=values, minlength=n))


def _weighted_mean(weights: np.ndarray, counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return (weights @ sums) / (weights @ counts)


def _interval(values: np.ndarray) -> tuple[float | None, float | None]:
    """95 % percentile interval of the finite values, None where there is none."""
    lo, hi = metric_interval(values)
    return _number(lo), _number(hi)


def _number(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def overlap_report(
    *,
    roles: dict[str, str],
    candidates: list[str],
    baseline: str,
    image_ids: list[str],
    clean: dict[str, np.ndarray],
    outcomes: dict[tuple[str, str], pa.Table],
    r_a: dict[tuple[str, str], float],
    r_a_replicates: dict[tuple[str, str], np.ndarray],
    thresholds: list[float],
    classes: int,
    replicates: int,
    seed: int,
) -> dict[str, pa.Table]:
    """The four tables of the module docstring.

    Args:
        roles: role (``standard`` or a candidate) -> model name.
        candidates: the candidate corruptions, in report order.
        baseline: the CE baseline's model name.
        image_ids: the index's image ids, in order.
        clean: model -> :func:`clean_correct` of its clean predictions.
        outcomes: (model, corruption) -> ``outcomes/<m>/<c>.parquet``.
        r_a: (model, corruption) -> R_a of the summary; r_a_replicates: its bootstrap areas.
        thresholds: Algorithm 1 thresholds; classes: the data set's own count (1000 for
            ImageNet, 10 for CIFAR-10) or 16; replicates: B; seed: run seed.
    """
    models = list(dict.fromkeys([*roles.values(), baseline]))
    weights = unit_weights(seed, "images", image_ids, replicates)
    accuracy_clean, accuracy_clean_b, accuracy, accuracy_b = {}, {}, {}, {}
    for model in models:
        known = np.isfinite(clean[model])
        counts, sums = known.astype(np.float64), np.where(known, clean[model], 0.0)
        if not counts.any():
            raise VcrbenchError(f"overlap: no image has a {classes}-class label; use classes: "
                                f"{1000 if classes == 16 else 16} or labelled images")
        accuracy_clean[model] = float(sums.sum() / counts.sum())
        accuracy_clean_b[model] = _weighted_mean(weights, counts, sums)
        for corruption in candidates:
            counts_c, sums_c = image_sums(outcomes[(model, corruption)], image_ids, classes)
            accuracy[(model, corruption)] = float(sums_c.sum() / counts_c.sum())
            accuracy_b[(model, corruption)] = _weighted_mean(weights, counts_c, sums_c)

    robustness_rows, point, per_replicate = [], {}, {}
    for score in SCORES:
        point[score], per_replicate[score] = {}, {}
        for role, model in roles.items():
            for corruption in candidates:
                key = (model, corruption)
                with np.errstate(divide="ignore", invalid="ignore"):  # a replicate without
                    if score == "noc":                              # clean-correct images
                        value = accuracy[key] / accuracy_clean[model]
                        reps = accuracy_b[key] / accuracy_clean_b[model]
                    elif r_a[key] is None:  # R_a not reported: too few Δv bins
                        value, reps = np.nan, np.full(replicates, np.nan)
                    else:
                        value = r_a[key] / accuracy_clean[model]
                        areas = r_a_replicates[key]
                        n = min(areas.size, replicates)
                        reps = areas[:n] / accuracy_clean_b[model][:n]
                point[score][(role, corruption)] = value
                per_replicate[score][(role, corruption)] = reps
                lo, hi = _interval(reps)
                robustness_rows.append({
                    "role": role, "model": model, "corruption": corruption,
                    "accuracy_clean": accuracy_clean[model], "accuracy": accuracy[key],
                    "R_a": r_a[key], "score": score, "R": _number(value), "R_lo": lo, "R_hi": hi,
                })

    matrix_rows, benchmark_rows, replicate_rows = [], [], []
    for score in SCORES:
        matrix = _replicate_matrix({k: np.array([v]) for k, v in point[score].items()}, 0,
                                   candidates)
        n_rep = min(len(v) for v in per_replicate[score].values())
        stack = np.array([_replicate_matrix(per_replicate[score], b, candidates)
                          for b in range(n_rep)]
                         ) if n_rep else np.empty((0, len(candidates), len(candidates)))
        for i, c1 in enumerate(candidates):
            for j, c2 in enumerate(candidates):
                lo, hi = _interval(stack[:, i, j]) if n_rep else (None, None)
                matrix_rows.append({"score": score, "c1": c1, "c2": c2,
                                    "O": _number(matrix[i, j]), "O_lo": lo, "O_hi": hi})
                replicate_rows += [{"score": score, "replicate": b, "c1": c1, "c2": c2,
                                    "O": _number(stack[b, i, j])} for b in range(n_rep)]
        if np.isfinite(matrix).any():  # Algorithm 1 needs every score of the candidates
            benchmark_rows += _benchmarks(score, matrix, candidates, thresholds, roles, baseline,
                                          accuracy)
    ce_rows = _ce_rows(roles, candidates, baseline, accuracy)
    return {
        "robustness": pa.Table.from_pylist(robustness_rows),
        "gains": pa.Table.from_pylist(_gain_rows(point, per_replicate, candidates),
                                      schema=GAINS_SCHEMA),
        "matrix": pa.Table.from_pylist(matrix_rows),
        "matrix_replicates": pa.Table.from_pylist(replicate_rows, schema=REPLICATES_SCHEMA),
        "benchmarks": pa.Table.from_pylist(benchmark_rows, schema=BENCHMARK_SCHEMA),
        "ce": pa.Table.from_pylist(ce_rows),
    }


GAINS_SCHEMA = pa.schema([("score", pa.string()), ("corruption", pa.string()),
                          ("gain", pa.float64()), ("gain_lo", pa.float64()),
                          ("gain_hi", pa.float64()), ("supported", pa.bool_()),
                          ("note", pa.string())])


def _gain_rows(point: dict, per_replicate: dict, candidates: list[str]) -> list[dict]:
    """Each candidate's own gain per score, the denominator of Eq. (2) (``gains`` in the module
    docstring): ``R_c`` of the model fine-tuned with ``c`` minus the standard model's, with the
    interval of the replicate-wise differences (both replicates weigh the same images)."""
    rows = []
    for score in SCORES:
        for c in candidates:
            own, standard = (c, c), (STANDARD, c)
            gain = _number(point[score][own] - point[score][standard])
            a, b = per_replicate[score][own], per_replicate[score][standard]
            n = min(a.size, b.size)
            with np.errstate(invalid="ignore"):  # inf - inf: a replicate without clean-correct
                differences = a[:n] - b[:n]      # images, left out
            enough = np.isfinite(differences).sum() >= 2  # no interval from a single replicate
            lo, hi = _interval(differences) if enough else (None, None)
            if gain is None:
                note = "R not reported for the model or the standard: no gain"
            elif gain <= 0:
                note = (f"fine-tuning with {c} did not raise R on {c}: Eq. (2) is undefined in "
                        "its row and column")
            elif lo is None:
                note = "no interval: no bootstrap replicate gave both scores"
            elif lo <= 0:
                note = (f"the interval of the gain reaches 0: the overlaps of {c}'s row and "
                        "column divide by a gain these images cannot tell from none")
            else:
                note = None
            supported = (None if gain is None or lo is None
                         else bool(gain > 0 and lo > 0))
            rows.append({"score": score, "corruption": c, "gain": gain, "gain_lo": lo,
                         "gain_hi": hi, "supported": supported, "note": note})
    return rows


REPLICATES_SCHEMA = pa.schema([("score", pa.string()), ("replicate", pa.int32()),
                               ("c1", pa.string()), ("c2", pa.string()), ("O", pa.float64())])


def overlap_contrast(matrix: pa.Table, replicates: pa.Table, score: str,
                     first: tuple[str, str], second: tuple[str, str]) -> dict:
    """``O(first) − O(second)`` of one score with its 95 % interval over the paired bootstrap
    replicates (replicate ``b`` of both scores resampled the same images):
    {difference, lo, hi, replicates} (the replicates where both scores are finite); the
    difference is None where either point score is undefined."""
    def cells(table: pa.Table, pair: tuple[str, str]) -> pa.Table:
        mask = pc.and_(pc.and_(pc.equal(table["score"], score), pc.equal(table["c1"], pair[0])),
                       pc.equal(table["c2"], pair[1]))
        return table.filter(mask)

    points = [cells(matrix, pair).column("O").to_pylist() for pair in (first, second)]
    if not all(len(p) == 1 for p in points):
        raise VcrbenchError(f"overlap contrast: {first} or {second} is not a pair of the "
                            f"{score!r} matrix")
    a, b = (cells(replicates, pair) for pair in (first, second))
    by_b = dict(zip(b.column("replicate").to_pylist(), b.column("O").to_pylist(), strict=True))
    diffs = np.array([o - by_b[r] for r, o in zip(a.column("replicate").to_pylist(),
                                                   a.column("O").to_pylist(), strict=True)
                      if o is not None and by_b.get(r) is not None], dtype=np.float64)
    lo, hi = _interval(diffs) if diffs.size else (None, None)
    difference = (None if None in (points[0][0], points[1][0])
                  else float(points[0][0] - points[1][0]))
    return {"difference": difference, "lo": lo, "hi": hi, "replicates": int(diffs.size)}


def _replicate_matrix(values: dict[tuple[str, str], np.ndarray], b: int,
                      candidates: list[str]) -> np.ndarray:
    """The overlap matrix of replicate ``b``; NaN where a score is not finite (a replicate that
    drew no clean-correct image; an R_a not reported for lack of Δv bins), which the intervals
    and Algorithm 1 leave out."""
    scores = {k: float(v[b]) for k, v in values.items()}
    if not all(np.isfinite(list(scores.values()))):
        return np.full((len(candidates), len(candidates)), np.nan)
    return overlap_matrix(scores, candidates, standard=STANDARD)


def report_from_tables(
    *,
    roles: dict[str, str],
    candidates: list[str],
    baseline: str,
    index: pa.Table,
    summary: pa.Table,
    clean: dict[str, pa.Table],
    outcomes: dict[tuple[str, str], pa.Table],
    replicates: dict[tuple[str, str], pa.Table],
    thresholds: list[float],
    classes: int,
    n_boot: int,
    seed: int,
) -> dict[str, pa.Table]:
    """:func:`overlap_report` from the cached tables: the index, the summary (R_a), each
    model's clean predictions, and per (model, corruption) its outcomes and curve replicates."""
    accuracy = select(summary, "accuracy", classes)
    r_a = dict(zip(
        zip(accuracy.column("model").to_pylist(), accuracy.column("corruption").to_pylist(),
            strict=True),
        accuracy.column("R").to_pylist(),
        strict=True,
    ))
    return overlap_report(
        roles=roles, candidates=candidates, baseline=baseline,
        image_ids=index.column("image_id").to_pylist(),
        clean={m: clean_correct(index, table, classes) for m, table in clean.items()},
        outcomes=outcomes, r_a=r_a,
        r_a_replicates={
            key: replicate_areas(table, "accuracy", classes) for key, table in replicates.items()
        },
        thresholds=thresholds, classes=classes, replicates=n_boot, seed=seed,
    )


BENCHMARK_SCHEMA = pa.schema([
    ("score", pa.string()),
    ("threshold", pa.float64()),
    ("corruptions", pa.list_(pa.string())),
    ("size", pa.int32()),
    ("mean_overlap", pa.float64()),
    ("balance_range", pa.float64()),
    ("balance_std", pa.float64()),
    ("excluded", pa.list_(pa.string())),
])


def _benchmarks(score, matrix, candidates, thresholds, roles, baseline, accuracy) -> list[dict]:
    """Algorithm 1 per threshold, on the candidates whose self-overlap is defined (training
    with c raised the robustness to c); the excluded ones are listed in every row."""
    usable = [i for i in range(len(candidates)) if np.isfinite(matrix[i, i])]
    excluded = [candidates[i] for i in range(len(candidates)) if i not in usable]
    if not usable:
        return []
    names = [candidates[i] for i in usable]
    sub = matrix[np.ix_(usable, usable)]
    rows = []
    for found in non_overlapping_benchmarks(names, sub, thresholds):
        members = list(found["corruptions"])
        spread = None
        if len(members) > 1:
            mces = {c: _mce(roles[c], members, baseline, accuracy) for c in members}
            spread = balance(mces)
        rows.append({
            "score": score, "threshold": float(found["threshold"]), "corruptions": members,
            "size": len(members), "mean_overlap": float(found["mean_overlap"]),
            "balance_range": None if spread is None else spread["range"],
            "balance_std": None if spread is None else spread["std"],
            "excluded": excluded,
        })
    return rows


def _mce(model: str, corruptions: list[str], baseline: str, accuracy) -> float:
    errors = {c: 1.0 - accuracy[(model, c)] for c in corruptions}
    base = {c: 1.0 - accuracy[(baseline, c)] for c in corruptions}
    return mean_corruption_error(corruption_errors(errors, base))


def _ce_rows(roles, candidates, baseline, accuracy) -> list[dict]:
    rows = []
    labelled = [(role, model) for role, model in roles.items()]
    if baseline not in roles.values():
        labelled.append(("baseline", baseline))
    for role, model in labelled:
        errors = {c: 1.0 - accuracy[(model, c)] for c in candidates}
        base = {c: 1.0 - accuracy[(baseline, c)] for c in candidates}
        ce = corruption_errors(errors, base)
        for c in candidates:
            rows.append({"model": model, "role": role, "corruption": c, "error": errors[c],
                         "baseline_error": base[c], "CE": ce[c]})
        rows.append({"model": model, "role": role, "corruption": "mCE", "error": None,
                     "baseline_error": None, "CE": mean_corruption_error(ce)})
    return rows


def overlap_markdown(tables: dict[str, pa.Table], baseline: str) -> str:
    """A readable report: robustness, the overlap matrices with intervals, the benchmarks and
    the CE / mCE table."""
    out = ["# Corruption overlap (NOC method)", ""]
    robustness = tables["robustness"].to_pylist()
    by = {(r["role"], r["corruption"], r["score"]): r for r in robustness}
    out += ["## Robustness R = A_c / A_clean (noc) and R_a / A_clean (vcr), 95 % intervals", ""]
    out += markdown_table(
        ["role", "model", "corruption", "A_clean", "A_c", "R (noc)", "R (vcr)"],
        (
            [r["role"], r["model"], r["corruption"], f"{r['accuracy_clean']:.3f}",
             f"{r['accuracy']:.3f}", _ci(r), _ci(by[(r["role"], r["corruption"], "vcr")])]
            for r in robustness if r["score"] == "noc"
        ),
    )
    out += _gains_section(tables["gains"].to_pylist())
    matrix = tables["matrix"].to_pylist()
    for score in SCORES:
        names = list(dict.fromkeys(r["c1"] for r in matrix if r["score"] == score))
        cells = {(r["c1"], r["c2"]): r for r in matrix if r["score"] == score}
        out += ["", f"## Overlap O(c1, c2), Eq. (2), from the {score} scores", ""]
        out += markdown_table(
            ["c1 \\ c2", *names],
            (
                [c1, *(_ci({"R": cells[(c1, c2)]["O"], "R_lo": cells[(c1, c2)]["O_lo"],
                            "R_hi": cells[(c1, c2)]["O_hi"]}) for c2 in names)]
                for c1 in names
            ),
        )
    benchmarks = tables["benchmarks"].to_pylist()
    unsupported = {score: unsupported_gains(tables["gains"], score) for score in SCORES}
    rows = [
        [r["score"], f"{r['threshold']:g}",
         ", ".join(c + ("*" if c in unsupported[r["score"]] else "") for c in r["corruptions"]),
         f"{r['mean_overlap']:.3f}",
         *(("–", "–") if r["balance_range"] is None else (
             f"{100 * r['balance_range']:.1f}", f"{100 * r['balance_std']:.1f}")),
         ", ".join(r["excluded"]) or "–"]
        for r in benchmarks
    ] or [["–", "–", "none: for no candidate did fine-tuning with it raise the robustness to "
           "it, so Eq. (2) is undefined for every pair", "–", "–", "–", "all"]]
    out += ["", "## Non-overlapping benchmarks (Algorithm 1)", ""]
    out += markdown_table(
        ["score", "threshold", "benchmark", "mean overlap", "mCE range", "mCE std", "excluded"],
        rows,
    )
    if any(c in unsupported[r["score"]] for r in benchmarks for c in r["corruptions"]):
        out += ["", "\\* a member whose own gain the data do not show above 0 (Own gains, "
                    "above): its overlaps, and so its place in the benchmark, rest on a "
                    "denominator these images cannot show to be above 0."]
    ce = tables["ce"].to_pylist()
    corruptions = list(dict.fromkeys(r["corruption"] for r in ce))
    out += ["", f"## CE and mCE (%), baseline {baseline}", ""]
    rows = []
    for model, role in dict.fromkeys((r["model"], r["role"]) for r in ce):
        values = {r["corruption"]: r["CE"] for r in ce if r["model"] == model}
        rows.append([model, role, *(f"{100 * values[c]:.1f}" for c in corruptions)])
    out += markdown_table(["model", "role", *corruptions], rows)
    return "\n".join(out) + "\n"


def _gains_section(rows: list[dict]) -> list[str]:
    """The own gains (Eq. (2)'s denominators) and the candidates whose overlaps rest on a gain
    the data cannot tell from 0."""
    by = {(r["score"], r["corruption"]): r for r in rows}
    corruptions = list(dict.fromkeys(r["corruption"] for r in rows))

    def cell(r: dict) -> str:
        return _ci({"R": r["gain"], "R_lo": r["gain_lo"], "R_hi": r["gain_hi"]})

    out = ["", "## Own gains: R on c of the model fine-tuned with c, minus the standard "
               "model's (the denominators of Eq. (2)), 95 % intervals", ""]
    out += markdown_table(["corruption", *(f"gain ({score})" for score in SCORES)],
                          ([c, *(cell(by[(score, c)]) for score in SCORES)]
                           for c in corruptions))
    for score in SCORES:
        part = [r for r in rows if r["score"] == score]
        kinds = {kind: [r["corruption"] for r in part if _gain_kind(r) == kind]
                 for kind in ("unsupported", "undefined", "not reported", "no interval")}
        text = (f"{score}: the gain's 95 % interval is above 0 for "
                f"{sum(r['supported'] is True for r in part)} of {len(corruptions)} candidates "
                "(each candidate on its own, no correction for multiplicity)")
        if kinds["unsupported"]:
            text += (f"; it reaches 0 for {', '.join(kinds['unsupported'])}, whose rows and "
                     "columns of the overlap matrix divide by a gain not told from 0: defined by "
                     "Eq. (2), not supported by these images")
        if kinds["undefined"]:
            text += f"; no gain at all (Eq. (2) undefined) for {', '.join(kinds['undefined'])}"
        if kinds["not reported"]:
            text += f"; R not reported (no gain) for {', '.join(kinds['not reported'])}"
        if kinds["no interval"]:
            text += f"; no interval for {', '.join(kinds['no interval'])}"
        out += ["", f"- {text}."]
    return out


def _gain_kind(row: dict) -> str:
    """What a gains row says: supported, unsupported (interval reaches 0), undefined (no gain),
    not reported (no R) or no interval."""
    if row["gain"] is None:
        return "not reported"
    if row["gain"] <= 0:
        return "undefined"
    if row["supported"] is None:
        return "no interval"
    return "supported" if row["supported"] else "unsupported"


def unsupported_gains(gains: pa.Table, score: str) -> set[str]:
    """The candidates of ``score`` whose own gain is not shown above 0 (any kind but
    supported): their overlaps rest on a denominator these images cannot support."""
    return {r["corruption"] for r in gains.to_pylist()
            if r["score"] == score and _gain_kind(r) != "supported"}


def _ci(row: dict) -> str:
    if row["R"] is None:
        return "undefined"
    if row["R_lo"] is None:
        return f"{row['R']:.3f}"
    return f"{row['R']:.3f} [{row['R_lo']:.3f}, {row['R_hi']:.3f}]"
