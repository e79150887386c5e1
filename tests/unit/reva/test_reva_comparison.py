"""The comparison of training methods recomputed by hand: hand-made prediction tables written as
the pipeline's cached files, read by the comparison's loader, and every error, interval, test
and difference checked against a slow per-image loop (intervals: a loop over replicates with
the keyed image weights every curve of the run uses)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from scipy import stats

from vcrbench.core.tables import write_table
from vcrbench.curves.resampling import unit_weights
from vcrbench.errors import VcrbenchError
from vcrbench.reva.comparison import class_overlap_text, comparison_tables
from vcrbench.reva.inputs import load_comparison_inputs

SEED, B = 5, 30
IMAGES = [f"img{k:02d}" for k in range(12)]
LABELS = {image: 10 * k for k, image in enumerate(IMAGES)}
CORRUPTIONS = ("gaussian_noise", "frost")
ATTACKS = ("fgsm", "pgd", "uap")
METHODS = {"Standard": "finetuned:standard", "AugMix": "finetuned:augmix",
           "REVa": "finetuned:reva"}
#: Each method's chance of a mistake (clean, per severity step, on an attack crafted on itself).
MISTAKES = {"Standard": 0.3, "AugMix": 0.2, "REVa": 0.1}


def _predictions(sample_ids, top1):
    return pa.table({"sample_id": pa.array(sample_ids, pa.int64()),
                     "top1": pa.array(top1, pa.int16()),
                     "top1_16": pa.array([0] * len(top1), pa.int8())})


def _guess(rng, label, p):
    """The label, or a wrong class with probability ``p``."""
    return label if rng.random() >= p else label + 1


@pytest.fixture
def run(tmp_path):
    """Hand-made cached tables of three methods; returns (files, truth): the comparison's
    mapping and every prediction as plain dicts for the reference loop."""
    rng = np.random.default_rng(3)
    index = pa.table({"image_id": IMAGES, "label": pa.array(list(LABELS.values()), pa.int16()),
                      "category16": pa.array([-1] * len(IMAGES), pa.int8())})
    truth = {"index": index, "clean": {}, "severity": {}, "attack": {}}
    files = {label: {"imagenet_c": {}, "white_box": {}, "transfer": {}} for label in METHODS}
    samples = [(i, image, s) for i, (image, s) in
               enumerate((image, s) for image in IMAGES for s in range(1, 6))]
    for label in METHODS:
        p = MISTAKES[label]
        truth["clean"][label] = {i: _guess(rng, y, p) for i, y in LABELS.items()}
        path = tmp_path / f"clean-{label}.parquet"
        write_table(pa.table({"image_id": IMAGES,
                              "top1": pa.array(list(truth["clean"][label].values()), pa.int16()),
                              "top1_16": pa.array([0] * 12, pa.int8()),
                              "p_top1": pa.array([0.5] * 12, pa.float32())}), path)
        files[label]["clean"] = str(path)
    for c in CORRUPTIONS:
        shard = {"samples": tmp_path / f"{c}-samples.parquet",
                 "scored": tmp_path / f"{c}-scored.parquet"}
        write_table(pa.table({"sample_id": pa.array([i for i, _, _ in samples], pa.int64()),
                              "severity": pa.array([s for _, _, s in samples], pa.int8())}),
                    shard["samples"])
        write_table(pa.table({"sample_id": pa.array([i for i, _, _ in samples], pa.int64()),
                              "image_id": [image for _, image, _ in samples],
                              "dv": [0.1 * s for _, _, s in samples]}), shard["scored"])
        for label in METHODS:
            top1 = [_guess(rng, LABELS[image], MISTAKES[label] * s / 2)
                    for _, image, s in samples]
            truth["severity"][(label, c)] = {(image, s): t for (_, image, s), t
                                             in zip(samples, top1, strict=True)}
            path = tmp_path / f"{c}-{label}.parquet"
            write_table(_predictions([i for i, _, _ in samples], top1), path)
            files[label]["imagenet_c"][c] = {"samples": [str(shard["samples"])],
                                             "scored": [str(shard["scored"])],
                                             "predictions": [str(path)]}
    for a in ATTACKS:
        for crafter in METHODS:
            scored = tmp_path / f"{a}-on-{crafter}.parquet"
            write_table(pa.table({"sample_id": pa.array(range(12), pa.int64()),
                                  "image_id": IMAGES, "dv": [0.2] * 12}), scored)
            for label in METHODS:
                p = min(0.9, 2 * MISTAKES[label] + (0.2 if crafter != label else 0.0))
                top1 = [_guess(rng, LABELS[image], p) for image in IMAGES]
                truth["attack"][(crafter, label, a)] = dict(zip(IMAGES, top1, strict=True))
                path = tmp_path / f"{a}-on-{crafter}-by-{label}.parquet"
                write_table(_predictions(list(range(12)), top1), path)
                entry = {"scored": str(scored), "predictions": str(path)}
                if crafter == label:
                    files[label]["white_box"][a] = entry
                if crafter == "Standard":
                    files[label]["transfer"][a] = entry
    return files, truth


def _reference(truth, w=None):
    """Every method's errors by a per-image loop: {(label, kind, perturbation): error};
    ``w``: image -> weight (one bootstrap replicate), or None for the point values."""
    def rate(pairs):
        num = sum((w[i] if w else 1.0) * wrong for i, wrong in pairs)
        den = sum((w[i] if w else 1.0) for i, _ in pairs)
        return num / den if den else np.nan

    out = {}
    for label in METHODS:
        out[(label, "clean", "clean")] = rate(
            [(i, truth["clean"][label][i] != y) for i, y in LABELS.items()])
        for kind, crafter in (("white-box", label), ("transfer", "Standard")):
            for a in ATTACKS:
                top1 = truth["attack"][(crafter, label, a)]
                out[(label, kind, a)] = rate([(i, top1[i] != LABELS[i]) for i in IMAGES])
            out[(label, kind, "mean_adversarial")] = np.mean(
                [out[(label, kind, a)] for a in ATTACKS])
        for c in CORRUPTIONS:
            top1 = truth["severity"][(label, c)]
            out[(label, "corruption", c)] = np.mean([
                rate([(i, top1[(i, s)] != LABELS[i]) for i in IMAGES]) for s in range(1, 6)])
        out[(label, "corruption", "mCE")] = np.mean(
            [out[(label, "corruption", c)] for c in CORRUPTIONS])
    return out


def _compare(run, **kwargs):
    files, truth = run
    methods = load_comparison_inputs(files, METHODS, truth["index"])
    summary = pa.Table.from_pylist([
        {"model": model, "corruption": "frost", "metric": "accuracy", "classes": 1000,
         "R": 0.5 + k / 10, "R_lo": 0.4, "R_hi": 0.9, "HMRI": None, "HMRI_lo": None,
         "HMRI_hi": None, "MRSI": None, "MRSI_lo": None, "MRSI_hi": None,
         "resampled": "images (12)", "note": None}
        for k, model in enumerate([*METHODS.values(), "efficientnet-lite0"])])
    return comparison_tables(methods=methods, baselines=["Standard", "AugMix"],
                             transfer_from="Standard", index=truth["index"], summary=summary,
                             seed=SEED, n_boot=B, min_units=10, **kwargs)


def test_every_error_equals_the_per_image_loop(run):
    tables, text = _compare(run)
    reference = _reference(run[1])
    rows = tables["errors"].to_pylist()
    assert len(rows) == 3 * (1 + 2 * (len(ATTACKS) + 1) + len(CORRUPTIONS) + 1)
    for r in rows:
        key = (r["method"], r["kind"], r["perturbation"])
        assert r["value"] == pytest.approx(reference[key], abs=1e-12), key
        assert r["n_images"] == 12 and r["resampled"] == "images (12)"
        assert r["lo"] <= r["value"] + 1e-12 and r["value"] <= r["hi"] + 1e-12
        if r["kind"] == "transfer":
            assert r["crafted_on"] == "finetuned:standard"
        elif r["kind"] == "white-box":
            assert r["crafted_on"] == METHODS[r["method"]]
        else:
            assert r["crafted_on"] is None
    assert "| REVa |" in text and "mean adv. err (transfer from Standard)" in text


def test_intervals_and_paired_differences_equal_a_loop_over_replicates(run):
    tables, _ = _compare(run)
    weights = unit_weights(SEED, "images", sorted(IMAGES), B)
    replicates = [_reference(run[1], dict(zip(sorted(IMAGES), weights[b], strict=True)))
                  for b in range(B)]

    def interval(values):
        values = np.asarray(values)
        return np.percentile(values[np.isfinite(values)], [2.5, 97.5])

    by = {(r["method"], r["kind"], r["perturbation"]): r for r in tables["errors"].to_pylist()}
    for key in [("REVa", "corruption", "mCE"), ("AugMix", "white-box", "pgd"),
                ("Standard", "clean", "clean"), ("AugMix", "transfer", "mean_adversarial")]:
        lo, hi = interval([rep[key] for rep in replicates])
        assert (by[key]["lo"], by[key]["hi"]) == pytest.approx((lo, hi), abs=1e-12), key
    tests = {(t["method"], t["baseline"], t["measure"]): t for t in tables["tests"].to_pylist()}
    for measure, key in (("corruption", "mCE"), ("white-box", "mean_adversarial"),
                         ("clean", "clean")):
        kind = "clean" if measure == "clean" else measure
        difference = [rep[("REVa", kind, key)] - rep[("Standard", kind, key)]
                      for rep in replicates]
        row = tests[("REVa", "Standard", measure)]
        assert (row["difference_lo"], row["difference_hi"]) == pytest.approx(
            tuple(interval(difference)), abs=1e-12)
        assert row["resampled"] == "images (12), paired"


def test_signed_rank_tests_pair_the_perturbations_as_table_5(run):
    tables, _ = _compare(run)
    reference = _reference(run[1])
    rows = tables["tests"].to_pylist()
    # every method against every baseline but itself, four measures each
    assert [(r["method"], r["baseline"]) for r in rows[::4]] == [
        ("Standard", "AugMix"), ("AugMix", "Standard"), ("REVa", "Standard"), ("REVa", "AugMix")]
    for r in rows:
        if r["measure"] == "clean":
            assert r["p_value"] is None and r["test"] is None
            continue
        names = CORRUPTIONS if r["measure"] == "corruption" else ATTACKS
        d = np.array([reference[(r["method"], r["measure"], n)]
                      - reference[(r["baseline"], r["measure"], n)] for n in names])
        d = np.round(d, 12)  # errors are counts / 12: the exact differences, without float noise
        nonzero = d[d != 0]
        assert r["n_pairs"] == len(names) and r["n_zero"] == len(names) - nonzero.size
        assert (r["n_lower"], r["n_higher"]) == (int(np.sum(nonzero < 0)),
                                                 int(np.sum(nonzero > 0)))
        if nonzero.size == 0:
            assert r["p_value"] is None
            continue
        ties = np.unique(np.abs(nonzero)).size < nonzero.size
        how = stats.PermutationMethod(n_resamples=2**nonzero.size) if ties else "exact"
        assert r["test"] == ("exact permutation" if ties else "exact")
        assert r["p_value"] == pytest.approx(stats.wilcoxon(nonzero, method=how).pvalue)
        mean = "mCE" if r["measure"] == "corruption" else "mean_adversarial"
        assert r["difference"] == pytest.approx(reference[(r["method"], r["measure"], mean)]
                                                - reference[(r["baseline"], r["measure"], mean)])


def test_vcr_rows_are_the_methods_rows_of_the_summary(run):
    tables, text = _compare(run)
    vcr = tables["vcr"].to_pylist()
    assert [(r["method"], r["model"], r["R"]) for r in vcr] == [
        ("Standard", "finetuned:standard", 0.5), ("AugMix", "finetuned:augmix", 0.6),
        ("REVa", "finetuned:reva", pytest.approx(0.7))]
    assert "R_a (accuracy, 1000 classes)" in text


EMPTY_SUMMARY = pa.table({"model": pa.array([], pa.string())})


def test_a_baseline_that_is_not_a_method_is_refused(run):
    files, truth = run
    methods = load_comparison_inputs(files, METHODS, truth["index"])
    with pytest.raises(VcrbenchError, match="Cutout"):
        comparison_tables(methods=methods, baselines=["Cutout"], transfer_from="Standard",
                          index=truth["index"], summary=EMPTY_SUMMARY, seed=SEED, n_boot=B,
                          min_units=10)


def test_the_report_says_first_when_training_and_evaluation_classes_are_disjoint(run):
    evaluated = sorted(set(LABELS.values()))
    other = [c + 500 for c in evaluated]
    tables, text = _compare(run, training_labels={"AugMix": other, "REVa": other[:2]})
    lines = text.splitlines()
    assert lines[0] == "# REVa: comparison of training methods"
    assert lines[2] == "## Limitation: the training and evaluation classes are disjoint"
    assert lines[4].startswith("Read this first: the fine-tuned methods (AugMix, REVa) were "
                               f"trained on images of {len(other)} classes; the labelled "
                               f"evaluation images are of {len(evaluated)} classes")
    assert text.index("## Limitation") < text.index("Methods:") < text.index("## Summary")
    # the tables do not change with the note
    plain, _ = _compare(run)
    assert all(tables[k].equals(plain[k]) for k in plain)
    # part of the classes, all of them, none given
    _, partial = _compare(run, training_labels={"AugMix": [evaluated[0], *other]})
    assert (f"1 of the {len(evaluated)} evaluation classes are among the training classes"
            in partial and "## Note: the training classes cover only part" in partial)
    _, covered = _compare(run, training_labels={"AugMix": [*evaluated, -1]})
    assert "all of them among the training classes" in covered and "Limitation" not in covered
    assert "Limitation" not in _compare(run)[1] and "Classes:" not in _compare(run)[1]


def test_class_overlap_text_counts_classes_not_images():
    assert class_overlap_text({}, [1, 2]) == []
    heading, body = class_overlap_text({"A": [5, 5, 6], "B": [7]}, [1, 1, 2, -1])
    assert heading.startswith("## Limitation")
    assert "images of 3 classes; the labelled evaluation images are of 2 classes" in body


def test_the_papers_rows_stand_beside_this_runs_in_percent(run):
    """reva.comparison.published: the paper's AllConvNet rows (Table 2(a): Err 6.10 / 6.50 /
    6.31, mean adversarial error 53.07 / 24.08 / 12.15; Table 3: mCE 31.645 / 15.603 / 10.894)
    next to the same labels' numbers of this run, in percent, the adversarial column the
    transferred mean; the tables do not change."""
    tables, text = _compare(run, published="cifar10-allconvnet")
    plain, plain_text = _compare(run)
    assert all(tables[k].equals(plain[k]) for k in plain)
    assert "## The paper's numbers" not in plain_text
    reference = _reference(run[1])
    section = text[text.index("## The paper's numbers for these methods"):]
    section = section[:section.index("\n## ", 3)]
    assert text.index("## Summary") < text.index("## The paper's numbers")
    rows = {line.split(" | ")[0].lstrip("| "): line for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| method")}
    for label, paper in {"Standard": ("6.10", "53.07", "31.645"),
                         "AugMix": ("6.50", "24.08", "15.603"),
                         "REVa": ("6.31", "12.15", "10.894")}.items():
        cells = [c.strip() for c in rows[label].strip("| ").split(" | ")]
        ours = [f"{100 * reference[(label, kind, p)]:.2f}" for kind, p in (
            ("clean", "clean"), ("transfer", "mean_adversarial"), ("corruption", "mCE"))]
        assert cells[1:] == [paper[0], ours[0], paper[1], ours[1], paper[2], ours[2]], label
    assert "transfer ones (crafted on Standard)" in section
    # a method the paper has no numbers for keeps its row, with dashes for the paper's
    from vcrbench.reva.published import published_text

    errors = [{"method": "Mine", "kind": "clean", "perturbation": "clean", "value": 0.25}]
    table = [line for line in published_text("cifar10-allconvnet", errors, ["Mine"], None)
             if line.startswith("| ") and not line.startswith("| method")]
    assert table[0] == "| Mine | – | 25.00 | – | – | – | – |"
    assert [line.split(" | ")[0] for line in table[1:]] == ["| Standard", "| AugMix", "| REVa"]
    with pytest.raises(KeyError):
        _compare(run, published="cifar100-allconvnet")
