"""The overlap report from hand-made outcomes: scores against direct arithmetic, the paired
image bootstrap, Algorithm 1 on the point matrix, CE / mCE."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from vcrbench.curves.resampling import unit_weights
from vcrbench.overlap.report import clean_correct, image_sums, overlap_report

IMAGES = [f"img{i}" for i in range(10)]
CANDIDATES = ["noise", "shot", "bright"]
ROLES = {"standard": "std", "noise": "m_noise", "shot": "m_shot", "bright": "m_bright"}
#: Accuracy of each model on each corruption (per sample, all images alike) and clean.
ACCURACY = {
    "std": {"noise": 0.3, "shot": 0.3, "bright": 0.6},
    "m_noise": {"noise": 0.7, "shot": 0.6, "bright": 0.6},
    "m_shot": {"noise": 0.62, "shot": 0.7, "bright": 0.6},
    "m_bright": {"noise": 0.3, "shot": 0.3, "bright": 0.8},
    "base": {"noise": 0.2, "shot": 0.2, "bright": 0.5},
}


def _outcomes(rate: float, per_image: int = 50) -> pa.Table:
    """per_image samples of every image, the first round(rate * per_image) of them correct."""
    correct = [j < round(rate * per_image) for _ in IMAGES for j in range(per_image)]
    return pa.table({"image_id": [i for i in IMAGES for _ in range(per_image)],
                     "correct": correct, "correct16": pa.nulls(len(correct), pa.bool_())})


def _report(replicates: int = 50, outcomes: dict | None = None):
    models = [*ROLES.values(), "base"]
    return overlap_report(
        roles=ROLES, candidates=CANDIDATES, baseline="base", image_ids=IMAGES,
        clean={m: np.array([1.0] * 8 + [0.0] * 2) for m in models},
        outcomes={(m, c): _outcomes(ACCURACY[m][c]) for m in models for c in CANDIDATES}
        | (outcomes or {}),
        r_a={(m, c): ACCURACY[m][c] for m in models for c in CANDIDATES},
        r_a_replicates={(m, c): np.full(replicates, ACCURACY[m][c]) for m in models
                        for c in CANDIDATES},
        thresholds=[0.0, 0.5, 2.0], classes=1000, replicates=replicates, seed=1,
    )


def test_robustness_and_overlap_match_direct_arithmetic():
    tables = _report()
    robustness = {(r["role"], r["corruption"], r["score"]): r
                  for r in tables["robustness"].to_pylist()}
    assert robustness[("noise", "shot", "noc")]["R"] == pytest.approx(0.6 / 0.8)
    matrix = {(r["score"], r["c1"], r["c2"]): r for r in tables["matrix"].to_pylist()}
    # Eq. (2) by hand: noise/shot transfer, brightness does not
    expected = 0.5 * ((0.6 - 0.3) / (0.7 - 0.3) + (0.62 - 0.3) / (0.7 - 0.3))
    for score in ("noc", "vcr"):
        assert matrix[(score, "noise", "shot")]["O"] == pytest.approx(expected)
        assert matrix[(score, "shot", "noise")]["O"] == pytest.approx(expected)
        assert matrix[(score, "noise", "bright")]["O"] == pytest.approx(0.0)
        assert matrix[(score, "bright", "bright")]["O"] == pytest.approx(1.0)
    # every image is alike, so every bootstrap replicate gives the same matrix
    cell = matrix[("noc", "noise", "shot")]
    assert cell["O_lo"] == pytest.approx(expected) and cell["O_hi"] == pytest.approx(expected)


def test_own_gains_with_paired_intervals_by_hand():
    """Eq. (2)'s denominators: R on c of the model fine-tuned with c minus the standard's, the
    interval from the same image weights for both; a gain carried by one image is defined but
    not supported (its interval reaches 0: replicates that draw no copy of it gain nothing)."""
    per_image = 50
    # m_shot gains on shot through img0 alone: every other image as the standard's 0.3
    one_image = [j < (per_image if i == "img0" else 15) for i in IMAGES for j in range(per_image)]
    shot = pa.table({"image_id": [i for i in IMAGES for _ in range(per_image)],
                     "correct": one_image, "correct16": pa.nulls(len(one_image), pa.bool_())})
    replicates = 200
    tables = _report(replicates, outcomes={("m_shot", "shot"): shot})
    gains = {(r["score"], r["corruption"]): r for r in tables["gains"].to_pylist()}
    assert tables["gains"].column_names == ["score", "corruption", "gain", "gain_lo", "gain_hi",
                                            "supported", "note"]
    clean = np.array([1.0] * 8 + [0.0] * 2)
    w = unit_weights(1, "images", IMAGES, replicates)
    shot_sums = np.array([per_image if i == "img0" else 15 for i in IMAGES], float)
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = ((w @ shot_sums) / (w @ np.full(10, 50.0))
                - (w @ np.full(10, 15.0)) / (w @ np.full(10, 50.0))) / ((w @ clean) / w.sum(1))
    diff = diff[np.isfinite(diff)]
    row = gains[("noc", "shot")]
    assert row["gain"] == pytest.approx((35 / 500) / 0.8)
    assert (row["gain_lo"], row["gain_hi"]) == pytest.approx(tuple(np.percentile(diff,
                                                                                 [2.5, 97.5])))
    assert row["gain_lo"] == pytest.approx(0.0) and row["supported"] is False
    assert "cannot tell from none" in row["note"]
    # every image alike elsewhere: bright's gain 0.8/0.8 - 0.6/0.8, supported, no note
    bright = gains[("noc", "bright")]
    assert bright["gain"] == pytest.approx(0.25) and bright["supported"] and bright["note"] is None
    from vcrbench.overlap.report import overlap_markdown

    text = overlap_markdown(tables, "base")
    assert "## Own gains: R on c of the model fine-tuned with c" in text
    assert ("- noc: the gain's 95 % interval is above 0 for 2 of 3 candidates (each candidate "
            "on its own, no correction for multiplicity); it reaches 0 for shot, whose rows and "
            "columns") in text
    # its overlap with noise divides by that small gain: 2.3, above every threshold, so no
    # benchmark holds shot and none is marked
    assert "shot*" not in text and "\\* a member whose own gain" not in text


def test_algorithm_1_marks_members_whose_gain_is_not_supported():
    """bright's gain carried by one image: it overlaps neither noise, so the benchmarks keep it,
    marked (the vcr score reads the fixture's R_a, where bright's gain is supported)."""
    per_image = 50
    rows = [j < (per_image if i == "img0" else 30) for i in IMAGES for j in range(per_image)]
    bright = pa.table({"image_id": [i for i in IMAGES for _ in range(per_image)],
                       "correct": rows, "correct16": pa.nulls(len(rows), pa.bool_())})
    from vcrbench.overlap.report import overlap_markdown

    tables = _report(200, outcomes={("m_bright", "bright"): bright})
    text = overlap_markdown(tables, "base")
    assert "| noc | 0.5 | noise, bright* |" in text and "\\* a member whose own gain" in text


def test_gains_without_r_or_interval_are_named():
    from vcrbench.overlap.report import GAINS_SCHEMA, _gains_section, unsupported_gains

    def row(score, c, gain, lo, supported):
        return {"score": score, "corruption": c, "gain": gain, "gain_lo": lo,
                "gain_hi": None if lo is None else lo + 0.1, "supported": supported,
                "note": None}

    rows = [row(score, c, *values) for score in ("noc", "vcr") for c, values in
            (("a", (0.2, 0.1, True)), ("b", (None, None, None)), ("c", (0.1, None, None)),
             ("d", (-0.1, -0.2, False)), ("e", (0.05, -0.01, False)))]
    text = "\n".join(_gains_section(rows))
    assert ("- noc: the gain's 95 % interval is above 0 for 1 of 5 candidates (each "
            "candidate on its own, no correction for multiplicity); it reaches 0 for e, "
            "whose rows") in text
    assert ("no gain at all (Eq. (2) undefined) for d; R not reported (no gain) for b; "
            "no interval for c.") in text
    gains = pa.Table.from_pylist(rows, schema=GAINS_SCHEMA)
    assert unsupported_gains(gains, "vcr") == {"b", "c", "d", "e"}


def test_a_candidate_without_gain_is_undefined_not_unsupported():
    flat = _outcomes(ACCURACY["std"]["bright"])  # m_bright no better than std on bright
    tables = _report(outcomes={("m_bright", "bright"): flat})
    row = next(r for r in tables["gains"].to_pylist()
               if (r["score"], r["corruption"]) == ("noc", "bright"))
    assert row["gain"] == pytest.approx(0.0) and "undefined" in row["note"]
    from vcrbench.overlap.report import overlap_markdown

    text = overlap_markdown(tables, "base")
    assert "no gain at all (Eq. (2) undefined) for bright" in text
    assert "it reaches 0 for bright" not in text


def test_algorithm_1_and_ce_on_the_report():
    tables = _report()
    benchmarks = {(r["score"], r["threshold"]): r for r in tables["benchmarks"].to_pylist()}
    # threshold 0.5 < O(noise, shot) = 0.775: the two noises never sit together
    assert benchmarks[("noc", 0.5)]["size"] == 2
    assert "bright" in benchmarks[("noc", 0.5)]["corruptions"]
    assert benchmarks[("noc", 2.0)]["corruptions"] == CANDIDATES
    ce = {(r["model"], r["corruption"]): r["CE"] for r in tables["ce"].to_pylist()}
    assert ce[("m_noise", "noise")] == pytest.approx(0.3 / 0.8)
    assert ce[("m_noise", "mCE")] == pytest.approx(np.mean([0.3 / 0.8, 0.4 / 0.8, 0.4 / 0.5]))
    assert ce[("base", "mCE")] == pytest.approx(1.0)
    # balance of {m_noise, m_bright} on {noise, bright}: mCE spread by hand
    pair = benchmarks[("noc", 0.5)]
    mce = {m: np.mean([(1 - ACCURACY[m][c]) / (1 - ACCURACY["base"][c])
                       for c in pair["corruptions"]])
           for m in (ROLES[c] for c in pair["corruptions"])}
    assert pair["balance_range"] == pytest.approx(max(mce.values()) - min(mce.values()))
    assert pair["balance_std"] == pytest.approx(np.std(list(mce.values())))


def test_the_image_bootstrap_resamples_whole_images():
    ids = [f"img{i}" for i in range(10)]
    weights = unit_weights(3, "images", ids, 200)
    assert weights.shape == (200, 10) and weights.mean() == pytest.approx(1.0, abs=0.1)
    # one image, one weight per replicate, whichever other images a table holds
    assert np.array_equal(weights[:, 4:], unit_weights(3, "images", ids[4:], 200))
    # an image-level resample of a sample table equals repeating that image's rows
    table = pa.table({"image_id": ["img0", "img0", "img1"], "correct": [True, False, True],
                      "correct16": pa.nulls(3, pa.bool_())})
    counts, sums = image_sums(table, ["img0", "img1"], 1000)
    assert counts.tolist() == [2, 1] and sums.tolist() == [1, 1]
    w = np.array([[2.0, 0.0]])
    assert ((w @ sums) / (w @ counts))[0] == pytest.approx(0.5)


def test_clean_correct_marks_unlabelled_images():
    index = pa.table({"image_id": ["a", "b", "c"], "label": pa.array([3, 5, -1], pa.int16()),
                      "category16": pa.array([0, -1, 2], pa.int8())})
    clean = pa.table({"image_id": ["a", "b", "c"], "top1": pa.array([3, 4, 7], pa.int16()),
                      "top1_16": pa.array([0, 1, 1], pa.int8())})
    assert np.array_equal(clean_correct(index, clean, 1000), [1.0, 0.0, np.nan], equal_nan=True)
    assert np.array_equal(clean_correct(index, clean, 16), [1.0, np.nan, 0.0], equal_nan=True)
    # a CIFAR-10 run: the data set's own 10 classes, as 1000 on ImageNet
    assert np.array_equal(clean_correct(index, clean, 10), [1.0, 0.0, np.nan], equal_nan=True)


def test_replicate_matrices_give_paired_contrasts():
    from vcrbench.overlap.report import overlap_contrast

    tables = _report(replicates=20)
    replicates = tables["matrix_replicates"]
    assert replicates.num_rows == 2 * 20 * len(CANDIDATES) ** 2
    expected = 0.5 * ((0.6 - 0.3) / (0.7 - 0.3) + (0.62 - 0.3) / (0.7 - 0.3))
    got = overlap_contrast(tables["matrix"], replicates, "noc", ("noise", "shot"),
                           ("noise", "bright"))
    # every image alike: every replicate gives the point matrix
    assert got["difference"] == pytest.approx(expected - 0.0)
    assert got["lo"] == pytest.approx(got["difference"]) and got["hi"] == pytest.approx(
        got["difference"]) and got["replicates"] == 20
    with pytest.raises(Exception, match="not a pair"):
        overlap_contrast(tables["matrix"], replicates, "noc", ("noise", "fog"), ("noise", "shot"))


def test_contrast_interval_is_the_percentile_interval_of_replicate_differences():
    from vcrbench.overlap.report import REPLICATES_SCHEMA, overlap_contrast

    rng = np.random.default_rng(3)
    first, second = rng.normal(0.8, 0.1, 400), rng.normal(0.2, 0.05, 400)
    rows = [{"score": "noc", "replicate": b, "c1": "a", "c2": c, "O": float(v)}
            for b in range(400) for c, v in (("b", first[b]), ("c", second[b]))]
    rows[1]["O"] = None  # replicate 0 of (a, c) undefined: left out
    matrix = pa.Table.from_pylist([{"score": "noc", "c1": "a", "c2": "b", "O": 0.8},
                                   {"score": "noc", "c1": "a", "c2": "c", "O": 0.2}])
    got = overlap_contrast(matrix, pa.Table.from_pylist(rows, schema=REPLICATES_SCHEMA), "noc",
                           ("a", "b"), ("a", "c"))
    diffs = (first - second)[1:]
    assert got["replicates"] == 399 and got["difference"] == pytest.approx(0.6)
    assert got["lo"] == pytest.approx(np.percentile(diffs, 2.5))
    assert got["hi"] == pytest.approx(np.percentile(diffs, 97.5))
