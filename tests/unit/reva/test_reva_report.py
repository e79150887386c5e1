"""reva_tables on small hand-made inputs: every table has the contract's columns, every number
agrees with a hand computation (replicates paired through the keyed image weights), and the
statistics modules load without torch."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from vcrbench.curves.areas import GRID
from vcrbench.curves.resampling import unit_weights
from vcrbench.reva.report import TABLES, reva_tables

SEED, B = 5, 30
#: The tables' columns (docs/architecture.md, "Tables"; /tmp/reva/SCHEMAS.md).
COLUMNS = {
    "errors": ["model", "set", "kind", "perturbation", "category", "error", "error_lo",
               "error_hi", "n_images", "n_samples", "dv_median", "resampled", "note"],
    "relative-errors": ["model", "kind", "perturbation", "category", "measure", "value", "lo",
                        "hi", "baseline_error", "resampled", "note"],
    "groups": ["model", "kind", "perturbation", "category", "measure", "rule", "value",
               "non_robust", "chosen"],
    "r-weak-vs-all": ["model", "corruption", "metric", "classes", "R_weak", "R_weak_lo",
                      "R_weak_hi", "R_all", "R_all_lo", "R_all_hi", "difference",
                      "difference_lo", "difference_hi", "lower_on_weak", "note"],
}
WRONG_CLEAN = ("e01", "e04", "e09")


def _index(prefix, n, unlabelled=()):
    ids = [f"{prefix}{k:02d}" for k in range(n)]
    labels = [-1 if i in unlabelled else k % 5 for k, i in enumerate(ids)]
    return pa.table({"image_id": ids, "path": [f"/{i}.JPEG" for i in ids],
                     "label": pa.array(labels, pa.int16()), "wnid": [f"n{k % 5}" for k in
                                                                     range(n)],
                     "category16": pa.array([-1] * n, pa.int8())})


def _clean(index, wrong=()):
    rows = index.to_pylist()
    return pa.table({"image_id": [r["image_id"] for r in rows],
                     "top1": pa.array([max(r["label"], 0) + (r["image_id"] in wrong)
                                       for r in rows], pa.int16()),
                     "p_top1": pa.array([0.9] * len(rows), pa.float32())})


def _severities(index, p, seed):
    """Every image at every severity; ``correct`` null where the image has no label."""
    rng = np.random.default_rng(seed)
    rows = [{"image_id": r["image_id"], "severity": s,
             "correct": None if r["label"] < 0 else bool(rng.random() > p * s),
             "dv": float(rng.random())}
            for r in index.to_pylist() for s in range(1, 6)]
    return pa.Table.from_pylist(rows, schema=pa.schema([
        ("image_id", pa.string()), ("severity", pa.int8()), ("correct", pa.bool_()),
        ("dv", pa.float64())]))


def _attack(index, p, seed):
    rng = np.random.default_rng(seed)
    return pa.table({"image_id": index.column("image_id"),
                     "correct": [None if r["label"] < 0 else bool(rng.random() > p)
                                 for r in index.to_pylist()],
                     "dv": rng.random(index.num_rows)})


def _curve(r, levels, metric="accuracy"):
    metrics = pa.Table.from_pylist([{"metric": metric, "classes": 1000, "R": r,
                                     "R_lo": r - 0.1, "R_hi": r + 0.1, "note": None,
                                     "resampled": "images (12)"}])
    replicates = pa.table({"metric": [metric] * len(levels),
                           "classes": pa.array([1000] * len(levels), pa.int16()),
                           "replicate": pa.array(range(len(levels)), pa.int32()),
                           "values": [np.full(GRID.size, v).tolist() for v in levels]})
    return metrics, replicates


@pytest.fixture(scope="module")
def inputs():
    weak, evaluation = _index("w", 12), _index("e", 15, unlabelled=("e14",))
    rng = np.random.default_rng(3)
    return {
        "model": "m", "seed": SEED, "n_boot": B, "min_units": 10,
        "weak_index": weak, "evaluation_index": evaluation,
        "clean": {"weak": _clean(weak), "evaluation": _clean(evaluation, WRONG_CLEAN)},
        "severities": {s: {"fog": _severities(index, 0.1, 1 + k),
                           "gaussian_noise": _severities(index, 0.18, 3 + k)}
                       for k, (s, index) in enumerate((("weak", weak),
                                                       ("evaluation", evaluation)))},
        "attacks": {s: {"fgsm": _attack(index, 0.5, 5 + k), "pgd": _attack(index, 0.8, 7 + k)}
                    for k, (s, index) in enumerate((("weak", weak),
                                                    ("evaluation", evaluation)))},
        "curves": {c: {"weak": _curve(0.45, rng.uniform(0.35, 0.55, B)),
                       "evaluation": _curve(0.7, rng.uniform(0.65, 0.75, B))}
                   for c in ("fog", "hue_saturation_value")},
        "groups": {"rule": "worst-per-category", "threshold": 2.0},
        "categories": {"hue_saturation_value": "colour"},
        "description": "12 weakest of 20 eligible (clean-correct) pool images, over the pool",
    }


def _weights(ids, b):
    names = sorted(set(ids))
    return dict(zip(names, unit_weights(SEED, "images", names, B)[b], strict=True))


def _rate(samples, w):
    den = sum(w[i] for i, _ in samples)
    return sum(w[i] * wrong for i, wrong in samples) / den if den > 0 else np.nan


def _hand_error(table, w):
    """Error of a per-sample table under image weights w: uCE (mean over severities) when it
    has severities, else the plain rate; null ``correct`` left out."""
    rows = [r for r in table.to_pylist() if r["correct"] is not None]
    if "severity" not in table.column_names:
        return _rate([(r["image_id"], not r["correct"]) for r in rows], w)
    return np.mean([_rate([(r["image_id"], not r["correct"]) for r in rows
                           if r["severity"] == s], w) for s in range(1, 6)])


def _hand_clean(inputs, w):
    labelled = [r["image_id"] for r in inputs["evaluation_index"].to_pylist() if r["label"] >= 0]
    return _rate([(i, i in WRONG_CLEAN) for i in labelled], w)


def test_tables_have_the_contract_columns_and_are_reproducible(inputs):
    tables, text = reva_tables(**inputs)
    assert set(tables) == set(TABLES)
    for name, table in tables.items():
        assert table.column_names == COLUMNS[name], name
    again, again_text = reva_tables(**inputs)
    assert all(again[name].equals(tables[name]) for name in TABLES) and again_text == text


def test_errors_by_hand(inputs):
    tables, _ = reva_tables(**inputs)
    rows = tables["errors"].to_pylist()
    assert [(r["set"], r["kind"], r["perturbation"]) for r in rows[:6]] == [
        ("weak", "clean", "clean"), ("weak", "corruption", "fog"),
        ("weak", "corruption", "gaussian_noise"), ("weak", "attack", "fgsm"),
        ("weak", "attack", "pgd"), ("weak", "mean", "mCE")]
    by = {(r["set"], r["perturbation"]): r for r in rows}
    assert by[("weak", "clean")]["error"] == 0
    evaluation = by[("evaluation", "clean")]
    assert evaluation["error"] == pytest.approx(3 / 14)
    assert (evaluation["n_images"], evaluation["note"]) == (14, "1 unlabelled image left out")
    assert evaluation["category"] == "" and evaluation["dv_median"] is None
    unit = {i: 1.0 for i in inputs["evaluation_index"].column("image_id").to_pylist()}
    unit.update({i: 1.0 for i in inputs["weak_index"].column("image_id").to_pylist()})
    for s in ("weak", "evaluation"):
        for c, table in inputs["severities"][s].items():
            assert by[(s, c)]["error"] == pytest.approx(_hand_error(table, unit))
        for a, table in inputs["attacks"][s].items():
            assert by[(s, a)]["error"] == pytest.approx(_hand_error(table, unit))
            assert by[(s, a)]["category"] == "adversarial"
        assert by[(s, "mCE")]["error"] == pytest.approx(
            (by[(s, "fog")]["error"] + by[(s, "gaussian_noise")]["error"]) / 2)
        assert by[(s, "mean_adversarial")]["error"] == pytest.approx(
            (by[(s, "fgsm")]["error"] + by[(s, "pgd")]["error"]) / 2)
    assert (by[("evaluation", "fog")]["n_images"], by[("evaluation", "fog")]["n_samples"]) == (
        14, 70)
    assert by[("evaluation", "fog")]["note"] == "5 samples of unlabelled images left out"
    assert by[("weak", "fog")]["category"] == "weather"
    assert by[("weak", "gaussian_noise")]["category"] == "noise"
    fog = inputs["severities"]["weak"]["fog"]
    assert by[("weak", "fog")]["dv_median"] == pytest.approx(
        np.median(fog.column("dv").to_numpy()))
    # the interval: percentiles of the replicates, each computed by hand with its weights
    weak_ids = inputs["weak_index"].column("image_id").to_pylist()
    replicates = [_hand_error(fog, _weights(weak_ids, b)) for b in range(B)]
    assert (by[("weak", "fog")]["error_lo"], by[("weak", "fog")]["error_hi"]) == pytest.approx(
        tuple(np.percentile(replicates, [2.5, 97.5])))


def test_relative_errors_by_hand_paired_by_replicate(inputs):
    tables, _ = reva_tables(**inputs)
    rows = tables["relative-errors"].to_pylist()
    assert [(r["kind"], r["perturbation"], r["measure"]) for r in rows] == [
        ("corruption", "fog", "severity"), ("corruption", "fog", "continuous"),
        ("corruption", "gaussian_noise", "severity"),
        ("corruption", "hue_saturation_value", "continuous"),
        ("attack", "fgsm", "severity"), ("attack", "pgd", "severity")]
    assert [r["baseline_error"] for r in rows] == pytest.approx([3 / 14] * len(rows))
    assert rows[3]["category"] == "colour"
    weak_ids = inputs["weak_index"].column("image_id").to_pylist()
    eval_ids = inputs["evaluation_index"].column("image_id").to_pylist()
    clean_b = np.array([_hand_clean(inputs, _weights(eval_ids, b)) for b in range(B)])
    errors = {(r["set"], r["perturbation"]): r["error"] for r in tables["errors"].to_pylist()}
    for row in rows:
        p = row["perturbation"]
        if row["measure"] == "severity":
            table = (inputs["severities"]["weak"].get(p) or inputs["attacks"]["weak"][p])
            assert row["value"] == pytest.approx(errors[("weak", p)] / (3 / 14))
            top = np.array([_hand_error(table, _weights(weak_ids, b)) for b in range(B)])
        else:
            metrics, replicates = inputs["curves"][p]["weak"]
            assert row["value"] == pytest.approx((1 - 0.45) / (3 / 14))
            top = 1 - np.array([v[0] for v in replicates.column("values").to_pylist()])
        ratio = np.where(clean_b > 0, top / np.where(clean_b > 0, clean_b, 1), np.nan)
        expected = tuple(np.percentile(ratio[np.isfinite(ratio)], [2.5, 97.5]))
        assert (row["lo"], row["hi"]) == pytest.approx(expected), (p, row["measure"])


def test_groups_and_r_weak_vs_all_follow(inputs):
    tables, _ = reva_tables(**inputs)
    relative = tables["relative-errors"].to_pylist()
    groups = tables["groups"].to_pylist()
    assert len(groups) == 2 * len(relative)
    chosen = [g for g in groups if g["chosen"]]
    assert {g["rule"] for g in chosen} == {"worst-per-category"}
    worst = {(g["perturbation"], g["measure"]) for g in chosen if g["non_robust"]}
    # every attack is non-robust (the paper, §4.3.2), under both rules
    assert {("fgsm", "severity"), ("pgd", "severity")} <= worst
    assert all(g["non_robust"] for g in groups if g["kind"] == "attack")
    # one category per measure for fog/gaussian_noise (weather vs noise): each is its worst
    assert {("fog", "severity"), ("gaussian_noise", "severity"), ("fog", "continuous"),
            ("hue_saturation_value", "continuous")} <= worst
    threshold = {(g["perturbation"], g["measure"]): g["non_robust"] for g in groups
                 if g["rule"] == "threshold"}
    assert all(threshold[(r["perturbation"], r["measure"])] == (r["value"] > 2.0)
               for r in relative if r["kind"] == "corruption")
    # reva.groups.attacks: by-rule ranks the attacks as one category (the worst one only)
    by_rule, text = reva_tables(**dict(inputs, groups={**inputs["groups"], "attacks": "by-rule"}))
    fgsm, pgd = (r["value"] for r in relative if r["kind"] == "attack")
    worst_attacks = {g["perturbation"] for g in by_rule["groups"].to_pylist()
                     if g["kind"] == "attack" and g["chosen"] and g["non_robust"]}
    assert worst_attacks == ({"pgd"} if pgd > fgsm else {"fgsm"} if fgsm > pgd
                             else {"fgsm", "pgd"})
    assert "the attacks by the same rule" in text
    weak_vs_all = tables["r-weak-vs-all"].to_pylist()
    assert [(r["corruption"], r["metric"]) for r in weak_vs_all] == [
        ("fog", "accuracy"), ("hue_saturation_value", "accuracy")]
    assert weak_vs_all[0]["difference"] == pytest.approx(0.45 - 0.7)


def test_zero_clean_error_on_the_evaluation_set_nulls_every_relative_error(inputs):
    changed = dict(inputs, clean={"weak": inputs["clean"]["weak"],
                                  "evaluation": _clean(inputs["evaluation_index"])})
    tables, text = reva_tables(**changed)
    relative = tables["relative-errors"].to_pylist()
    assert all(r["value"] is None and r["lo"] is None for r in relative)
    assert {r["note"] for r in relative} == {"clean error 0: relative error undefined"}
    assert all(g["non_robust"] is None for g in tables["groups"].to_pylist())
    assert "undefined" in text


def test_the_report_text(inputs):
    _, text = reva_tables(**inputs)
    assert text.startswith("## REVa: m\n\n12 weakest of 20 eligible")
    for fragment in ("### R_a on the weak-robust set and on all evaluation images: accuracy "
                     "curve",
                     "| fog | 0.450 [0.350, 0.550] | 0.700 [0.600, 0.800] |",
                     "### Errors", "| mCE | mean |", "| mean_adversarial | mean |",
                     "### Relative errors (error on the weak set / clean error on the "
                     "evaluation set, 0.214) and groups",
                     "worst of its category (chosen)", "> 2",
                     "- adversarial (severity): non-robust: ",
                     "- weather (continuous): non-robust: fog (",
                     f"over {B} bootstrap replicates"):
        assert fragment in text, fragment


def test_the_report_reads_both_curves_for_the_non_robust_corruptions(inputs):
    """Part 1's control in words: for each curve, how many of the corruptions the chosen rule
    calls non-robust have R lower on the weak set (fog and Gaussian noise here, each the worst
    of its category; Gaussian noise has no curve), an undefined R named as such."""
    rng = np.random.default_rng(4)

    def both(accuracy, consistency):
        parts = [_curve(accuracy[0], rng.uniform(*accuracy[1], B)),
                 _curve(consistency[0], rng.uniform(*consistency[1], B), "consistency")]
        return tuple(pa.concat_tables(t) for t in zip(*parts, strict=True))

    curves = {"fog": {"weak": both((0.9, (0.85, 0.95)), (0.5, (0.45, 0.55))),
                      "evaluation": both((0.7, (0.65, 0.75)), (0.8, (0.75, 0.85)))}}
    tables, text = reva_tables(**dict(inputs, curves=curves))
    rows = {r["metric"]: r for r in tables["r-weak-vs-all"].to_pylist()}
    assert rows["accuracy"]["lower_on_weak"] is False and rows["consistency"]["lower_on_weak"]
    accuracy, consistency = text.split(": consistency curve")
    assert "### R_a on the weak-robust set and on all evaluation images: accuracy curve" \
        in accuracy and consistency.startswith("\n\nThe consistency curve")
    assert "### R_p on the weak-robust set" in accuracy.splitlines()[-1]
    # the clean accuracies the head start comes from: 12 of 12 weak, 11 of 14 labelled evaluation
    assert f"Clean accuracy: weak set 1.000, all evaluation images {11 / 14:.3f}." in accuracy
    assert "head start" in accuracy and "removes that head start" in consistency
    expects = ("expects {} lower on the weak set for the 2 corruptions the chosen rule calls "
               "non-robust (fog, gaussian_noise; from the weak set's ImageNet-C errors: the "
               "same images, other samples): ")
    assert expects.format("R_a") + "shown for 0; no curve for gaussian_noise." in accuracy
    assert expects.format("R_p") + "shown for 1 (fog); no curve for gaussian_noise." in consistency
    # an R the data cannot support on either set: undefined, not "not shown"
    metrics, replicates = curves["fog"]["weak"]
    nulled = metrics.set_column(metrics.column_names.index("R"), "R",
                                pa.array([None, None], pa.float64()))
    _, text = reva_tables(**dict(inputs, curves={"fog": {**curves["fog"],
                                                         "weak": (nulled, replicates)}}))
    assert "shown for 0; undefined for fog; no curve for gaussian_noise." in text

    # the random baseline (reva.weak.draw random-unselected): the same tables, no expectation
    baseline_tables, baseline = reva_tables(**dict(inputs, curves=curves),
                                            draw="random-unselected")
    assert baseline_tables["r-weak-vs-all"].equals(tables["r-weak-vs-all"])
    assert "lower on the weak set for the" not in baseline and "weak-robust set and" not in baseline
    assert baseline.startswith("## REVa: m\n\n> **A random baseline, not REVa's weak-robust set**")
    assert "### R_p on the random baseline set and on all evaluation images" in baseline
    assert baseline.count("Part 1's positive control expects nothing of a random baseline") == 2
    assert "| perturbation | kind | category | baseline set | evaluation set |" in baseline
    header = "| corruption | R_p (baseline) | R_p (all) | difference | lower on baseline |"
    assert header in baseline
    assert "Clean accuracy: baseline set 1.000" in baseline

def test_non_robust_corruptions_fall_back_to_the_continuous_measure():
    from vcrbench.reva.report import non_robust_corruptions

    def row(name, measure, flag, chosen=True, kind="corruption"):
        return {"kind": kind, "perturbation": name, "measure": measure, "non_robust": flag,
                "chosen": chosen}

    rows = [row("fog", "severity", True), row("snow", "severity", False),
            row("snow", "continuous", True), row("fog", "severity", False, chosen=False),
            row("pgd", "severity", True, kind="attack")]
    assert non_robust_corruptions(rows) == (["fog"], "severity")
    assert non_robust_corruptions(rows[2:3]) == (["snow"], "continuous")
    assert non_robust_corruptions(rows[4:]) == ([], None)


def test_statistics_modules_load_without_torch():
    modules = ["vcrbench.reva", "vcrbench.reva.report", "vcrbench.reva.resilience",
               "vcrbench.reva.selection"]
    code = (f"import sys, importlib\nfor m in {modules!r}: importlib.import_module(m)\n"
            "sys.exit('torch' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
