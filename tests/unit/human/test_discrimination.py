"""Same/different discrimination trials: the signal-detection test (hits on pairs of different
corruptions against false alarms on same-corruption trials) against independent references
(d′ from scipy's normal quantile, Fisher's p from a hand-summed hypergeometric tail, Holm by
hand), simulated observers (response bias, discrimination, chance), and the trial-file reader."""

from __future__ import annotations

import csv
from fractions import Fraction
from math import comb
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from scipy.stats import norm

from vcrbench.errors import VcrbenchError
from vcrbench.human.discrimination import (
    DISCRIMINATION_SCHEMA,
    discrimination_test,
    holm_adjust,
    read_discrimination_trials,
)
from vcrbench.human.similarity import pairs_marked_similar, similarity_groups

Pair = tuple[str, str]


def write_trials(
    path: Path, rows: list[tuple], header=("subject", "corruption_a", "corruption_b", "response")
) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def simulate_trials(
    rng: np.random.Generator,
    hit: dict[Pair, float],
    false_alarm: dict[str, float],
    n_signal: int,
    n_noise: int,
    subjects: int = 5,
) -> list[tuple[str, str, str, str]]:
    """Per subject: ``n_signal`` trials of each pair, answered "different" with ``hit[pair]``,
    and ``n_noise`` same-corruption trials of each corruption, answered "different" with
    ``false_alarm[c]``; the two images of a signal trial in random order."""
    rows = []
    for s in range(subjects):
        for (a, b), p in hit.items():
            for _ in range(n_signal):
                first, second = (a, b) if rng.uniform() < 0.5 else (b, a)
                answer = "different" if rng.uniform() < p else "same"
                rows.append((f"p{s:02d}", first, second, answer))
        for c, p in false_alarm.items():
            for _ in range(n_noise):
                rows.append((f"p{s:02d}", c, c, "different" if rng.uniform() < p else "same"))
    return rows


def as_table(rows: list[tuple[str, str, str, str]]) -> pa.Table:
    names = ("subject", "corruption_a", "corruption_b", "response")
    return pa.table({name: [r[i] for r in rows] for i, name in enumerate(names)})


def by_pair(result: pa.Table) -> dict[Pair, dict]:
    return {(r["corruption_a"], r["corruption_b"]): r for r in result.to_pylist()}


# --- independent references -------------------------------------------------------------------


def reference_d_prime(hits: int, n_signal: int, false_alarms: int, n_noise: int) -> float:
    """Log-linear corrected rates (Hautus 1995), then z(H) − z(F)."""
    h = (hits + 0.5) / (n_signal + 1)
    f = (false_alarms + 0.5) / (n_noise + 1)
    return float(norm.ppf(h) - norm.ppf(f))


def hypergeometric_tail(hits: int, n_signal: int, false_alarms: int, n_noise: int) -> Fraction:
    """P(X >= hits) for X the "different" answers among the signal trials when the
    ``hits + false_alarms`` "different" answers fall at random on the ``n_signal + n_noise``
    trials (Fisher's one-sided exact test, margins fixed), summed exactly."""
    total, different = n_signal + n_noise, hits + false_alarms
    top = sum(
        comb(different, i) * comb(total - different, n_signal - i)
        for i in range(hits, min(n_signal, different) + 1)
    )
    return Fraction(top, comb(total, n_signal))


def test_counts_rates_d_prime_and_fisher_p_against_references(tmp_path) -> None:
    rng = np.random.default_rng(20240611)
    hit = {("frost", "gaussian_blur"): 0.9, ("frost", "snow"): 1.0, ("gaussian_blur", "snow"): 0.3}
    false_alarm = {"frost": 0.1, "gaussian_blur": 0.0, "snow": 0.4}
    rows = simulate_trials(rng, hit, false_alarm, n_signal=12, n_noise=7, subjects=4)
    rows.append(("p99", "snow", "gaussian_blur", "different"))  # one more subject, one trial
    trials = read_discrimination_trials(write_trials(tmp_path / "trials.csv", rows))
    result = discrimination_test(trials)
    assert result.schema == DISCRIMINATION_SCHEMA
    got = by_pair(result)
    assert list(got) == sorted(hit)  # (a, a) pairs are not rows
    for (a, b), row in got.items():
        signal = [r for r in rows if {r[1], r[2]} == {a, b} and r[1] != r[2]]
        noise = [r for r in rows if r[1] == r[2] and r[1] in (a, b)]
        hits = sum(r[3] == "different" for r in signal)
        fas = sum(r[3] == "different" for r in noise)
        assert (row["n_signal"], row["n_hits"]) == (len(signal), hits)
        assert (row["n_noise"], row["n_false_alarms"]) == (len(noise), fas)
        assert row["n_subjects"] == len({r[0] for r in signal + noise})
        assert row["hit_rate"] == hits / len(signal)
        assert row["false_alarm_rate"] == fas / len(noise)
        assert row["d_prime"] == pytest.approx(
            reference_d_prime(hits, len(signal), fas, len(noise)), rel=1e-12, abs=1e-12
        )
        assert row["p_value"] == pytest.approx(
            float(hypergeometric_tail(hits, len(signal), fas, len(noise))), rel=1e-9
        )
        assert row["note"] is None
    assert got[("gaussian_blur", "snow")]["n_subjects"] == 5
    assert got[("frost", "snow")]["n_hits"] == 48  # H = 1: d′ stays finite
    assert np.isfinite(got[("frost", "snow")]["d_prime"])


def test_fisher_p_matches_hypergeometric_tail_on_small_tables() -> None:
    checked = 0
    for n_signal, n_noise in [(1, 1), (3, 2), (5, 9), (10, 10), (17, 4)]:
        for hits in range(n_signal + 1):
            for fas in range(n_noise + 1):
                responses = ["different"] * hits + ["same"] * (n_signal - hits)
                responses += ["different"] * fas + ["same"] * (n_noise - fas)
                table = pa.table(
                    {
                        "subject": ["s"] * (n_signal + n_noise),
                        "corruption_a": ["a"] * (n_signal + n_noise),
                        "corruption_b": ["b"] * n_signal + ["a"] * n_noise,
                        "response": responses,
                    }
                )
                row = discrimination_test(table).to_pylist()[0]
                ref = float(hypergeometric_tail(hits, n_signal, fas, n_noise))
                assert row["p_value"] == pytest.approx(ref, rel=1e-9), (hits, fas, ref)
                assert row["p_holm"] == row["p_value"]  # a family of one
                assert row["d_prime"] == pytest.approx(
                    reference_d_prime(hits, n_signal, fas, n_noise), rel=1e-12, abs=1e-12
                )
                checked += 1
    assert checked == 287


# --- Holm -------------------------------------------------------------------------------------


def test_holm_adjust_hand_computed() -> None:
    # sorted: 0.005 * 4 = 0.02, 0.01 * 3 = 0.03, 0.03 * 2 = 0.06, max(0.06, 0.04 * 1) = 0.06
    assert holm_adjust([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # capped at 1, and the running maximum keeps the order
    assert holm_adjust([0.5, 0.6, 0.2]) == pytest.approx([1.0, 1.0, 0.6])
    assert holm_adjust([0.04]) == [0.04]
    assert holm_adjust([]) == []


def test_holm_over_the_tested_pairs_of_a_table() -> None:
    """Three pairs with hand-summed p-values, one of them untested: Holm with m = 2."""
    signal = {("a", "b"): (20, 20), ("a", "c"): (14, 20), ("x", "y"): (20, 20)}
    noise = {"a": (3, 10), "b": (2, 10), "c": (5, 10)}  # nothing of x or y
    rows = []
    for (a, b), (k, n) in signal.items():
        rows += [("s", a, b, "different")] * k + [("s", b, a, "same")] * (n - k)
    for c, (k, n) in noise.items():
        rows += [("s", c, c, "different")] * k + [("s", c, c, "same")] * (n - k)
    got = by_pair(discrimination_test(as_table(rows), alpha=0.01))
    p_ab = float(hypergeometric_tail(20, 20, 5, 20))
    p_ac = float(hypergeometric_tail(14, 20, 8, 20))
    assert p_ab < p_ac
    assert got[("a", "b")]["p_value"] == pytest.approx(p_ab, rel=1e-9)
    assert got[("a", "c")]["p_value"] == pytest.approx(p_ac, rel=1e-9)
    assert got[("a", "b")]["p_holm"] == pytest.approx(2 * p_ab, rel=1e-9)
    assert got[("a", "c")]["p_holm"] == pytest.approx(max(2 * p_ab, p_ac), rel=1e-9)
    for pair in [("a", "b"), ("a", "c")]:
        row = got[pair]
        assert row["distinguishable"] == (row["p_holm"] < 0.01)
        assert row["similar"] == (not row["distinguishable"])
    assert got[("a", "b")]["distinguishable"] and got[("a", "c")]["similar"]
    assert got[("x", "y")]["p_holm"] is None


# --- simulated observers ----------------------------------------------------------------------


def test_always_different_observers_discriminate_nothing() -> None:
    """Subjects who answer "different" on every trial: H = F = 1, so no pair is distinguishable
    (the old test, accuracy on the pair's own trials, called every pair distinguishable)."""
    rng = np.random.default_rng(3)
    names = ["frost", "gaussian_blur", "gaussian_noise", "impulse_noise"]
    hit = {(a, b): 1.0 for i, a in enumerate(names) for b in names[i + 1 :]}
    rows = simulate_trials(rng, hit, dict.fromkeys(names, 1.0), n_signal=40, n_noise=20, subjects=6)
    result = discrimination_test(as_table(rows))
    assert result.num_rows == 6
    for row in result.to_pylist():
        assert row["hit_rate"] == 1.0 and row["false_alarm_rate"] == 1.0
        assert (row["n_signal"], row["n_noise"]) == (240, 240)
        assert row["p_value"] == pytest.approx(1.0) and row["p_holm"] == 1.0
        assert row["d_prime"] == pytest.approx(0.0, abs=1e-12)
        assert row["similar"] and not row["distinguishable"]
    # Half of them answering "same" throughout instead: H = F = 1/2, still nothing.
    mixed = [r if int(r[0][1:]) % 2 else (*r[:3], "same") for r in rows]
    for row in discrimination_test(as_table(mixed)).to_pylist():
        assert row["hit_rate"] == 0.5 and row["false_alarm_rate"] == 0.5
        assert row["p_value"] > 0.5 and row["d_prime"] == pytest.approx(0.0, abs=1e-12)
        assert row["similar"]


def chance_experiment(rng: np.random.Generator, p_different: float) -> list[dict]:
    """Three corruptions, no discrimination: every trial "different" with ``p_different``;
    per pair 100 signal and 100 noise trials (50 of each member) over 5 subjects."""
    names = ["a", "b", "c"]
    hit = {("a", "b"): p_different, ("a", "c"): p_different, ("b", "c"): p_different}
    rows = simulate_trials(rng, hit, dict.fromkeys(names, p_different), 20, 10, subjects=5)
    return discrimination_test(as_table(rows)).to_pylist()


@pytest.mark.parametrize("p_different", [0.5, 0.8])
def test_chance_observers_are_rarely_distinguishable(p_different) -> None:
    """200 seeded experiments at chance (H = F), unbiased or biased towards "different": the
    Holm decision calls some pair distinguishable in at most ~5 % of them, and the raw p is
    below 5 % in at most ~5 % of the pairs (each bound plus two binomial standard errors)."""
    rng = np.random.default_rng(11)
    experiments = [chance_experiment(rng, p_different) for _ in range(200)]
    any_pair = sum(any(r["distinguishable"] for r in rows) for rows in experiments) / 200
    raw = [r["p_value"] < 0.05 for rows in experiments for r in rows]
    assert len(raw) == 600
    assert any_pair <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / 200)
    assert sum(raw) / len(raw) <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / 600)


def test_discriminating_observers_are_distinguishable() -> None:
    """H = 90 %, F = 10 %, 100 trials of each: distinguishable in every one of 50 experiments."""
    rng = np.random.default_rng(5)
    for _ in range(50):
        rows = simulate_trials(rng, {("a", "b"): 0.9}, {"a": 0.1, "b": 0.1}, 20, 10, subjects=5)
        (row,) = discrimination_test(as_table(rows)).to_pylist()
        assert (row["n_signal"], row["n_noise"]) == (100, 100)
        assert row["distinguishable"] and not row["similar"]
        assert row["p_value"] < 1e-15
        assert 1.8 < row["d_prime"] < 3.4


def test_simulated_classes_of_similar_corruptions(tmp_path) -> None:
    rng = np.random.default_rng(7)
    hit = {("frost", "gaussian_blur"): 0.9, ("gaussian_noise", "impulse_noise"): 0.3}
    false_alarm = dict.fromkeys(["frost", "gaussian_blur", "gaussian_noise", "impulse_noise"], 0.3)
    rows = simulate_trials(rng, hit, false_alarm, n_signal=40, n_noise=20)
    trials = read_discrimination_trials(write_trials(tmp_path / "trials.csv", rows))
    assert set(trials.column("truth").to_pylist()) == {"same", "different"}
    got = by_pair(discrimination_test(trials))
    assert list(got) == sorted(hit)
    assert got[("frost", "gaussian_blur")]["distinguishable"]
    assert got[("gaussian_noise", "impulse_noise")]["similar"]
    groups = similarity_groups(list(false_alarm), pairs_marked_similar(discrimination_test(trials)))
    assert groups == [["frost"], ["gaussian_blur"], ["gaussian_noise", "impulse_noise"]]


# --- untestable pairs, truth and bad tables ---------------------------------------------------


def test_pair_without_noise_trials_is_not_tested() -> None:
    rows = [("s1", "frost", "snow", "different")] * 30 + [("s2", "snow", "frost", "same")] * 2
    rows += [("s1", "fog", "frost", "different")] * 30 + [("s3", "fog", "fog", "same")] * 30
    got = by_pair(discrimination_test(as_table(rows)))
    untested = got[("frost", "snow")]
    assert (untested["n_signal"], untested["n_hits"], untested["n_noise"]) == (32, 30, 0)
    assert untested["n_subjects"] == 2 and untested["hit_rate"] == 30 / 32
    for column in (
        "false_alarm_rate",
        "d_prime",
        "p_value",
        "p_holm",
        "distinguishable",
        "similar",
    ):
        assert untested[column] is None, column
    assert untested["note"].startswith("no same-corruption trials of frost or snow")
    assert pairs_marked_similar(discrimination_test(as_table(rows))) == []
    # Noise trials of one member only: tested against that member, with a note; a family of one.
    half = got[("fog", "frost")]
    assert (half["n_noise"], half["n_false_alarms"], half["n_subjects"]) == (30, 0, 2)
    assert half["note"] == "no same-corruption trials of frost; false alarms from fog only"
    assert half["p_holm"] == half["p_value"] < 1e-15 and half["distinguishable"]


def test_truth_disagreeing_with_the_names_is_an_error(tmp_path) -> None:
    good = {
        "subject": ["s", "s", "s"],
        "corruption_a": ["a", "a", "b"],
        "corruption_b": ["b", "a", "b"],
        "response": ["different", "same", "same"],
    }
    ok = discrimination_test(pa.table({**good, "truth": ["different", "same", "same"]}))
    assert ok.equals(discrimination_test(pa.table(good)))
    with pytest.raises(VcrbenchError) as info:
        discrimination_test(pa.table({**good, "truth": ["different", "same", "different"]}))
    message = str(info.value)
    assert "trials row 2: truth is 'different'" in message
    assert "the same corruption twice" in message and "by the corruption names" in message
    with pytest.raises(
        VcrbenchError,
        match="trials row 0: truth is 'same' but the trial shows two different corruptions",
    ):
        discrimination_test(pa.table({**good, "truth": ["same", "same", "same"]}))
    path = write_trials(
        tmp_path / "bad_truth.csv",
        [("p1", "a", "b", "same", "different"), ("p1", "a", "b", "same", "same")],
        header=("subject", "corruption_a", "corruption_b", "response", "truth"),
    )
    check_error(path, 3, "truth is 'same'", "by the corruption names")


def test_truth_column_and_normalisation(tmp_path) -> None:
    path = tmp_path / "with_truth.csv"
    path.write_text(
        "Subject, corruption_b ,corruption_a,RESPONSE,truth,notes\n"
        "p1,blur,blur_v2, Different ,different,x\n"
        "\n"
        "p1,blur_v2,blur,same,DIFFERENT,\n"
        "p2,blur,blur,same,same,odd\n",
        encoding="utf-8",
    )
    trials = read_discrimination_trials(path)
    assert trials.column_names == ["subject", "corruption_a", "corruption_b", "response", "truth"]
    assert trials.column("corruption_a").to_pylist() == ["blur_v2", "blur", "blur"]
    assert trials.column("response").to_pylist() == ["different", "same", "same"]
    assert trials.column("truth").to_pylist() == ["different", "different", "same"]
    result = discrimination_test(trials).to_pylist()
    assert [
        (
            r["corruption_a"],
            r["corruption_b"],
            r["n_subjects"],
            r["n_signal"],
            r["n_hits"],
            r["n_noise"],
            r["n_false_alarms"],
        )
        for r in result
    ] == [("blur", "blur_v2", 2, 2, 1, 1, 0)]
    # Fisher: 1 "different" among 3 trials, 2 of them signal: P(X >= 1) = 2/3.
    assert result[0]["p_value"] == pytest.approx(2 / 3)
    assert result[0]["note"] == "no same-corruption trials of blur_v2; false alarms from blur only"


def test_discrimination_test_rejects_bad_tables() -> None:
    good = {"subject": ["s"], "corruption_a": ["a"], "corruption_b": ["b"], "response": ["same"]}
    for alpha in (1.5, 0.0, True, "x"):
        with pytest.raises(VcrbenchError, match="alpha"):
            discrimination_test(pa.table(good), alpha=alpha)
    with pytest.raises(VcrbenchError, match="response"):
        discrimination_test(pa.table({k: v for k, v in good.items() if k != "response"}))
    with pytest.raises(VcrbenchError, match="row 0: response is 'maybe'"):
        discrimination_test(pa.table({**good, "response": ["maybe"]}))
    with pytest.raises(VcrbenchError, match="row 0: truth is 'yes'"):
        discrimination_test(pa.table({**good, "truth": ["yes"]}))
    with pytest.raises(VcrbenchError, match="row 0: corruption names"):
        discrimination_test(pa.table({**good, "corruption_b": [""]}))
    empty = discrimination_test(pa.table(good).slice(0, 0))
    assert empty.num_rows == 0 and empty.schema == DISCRIMINATION_SCHEMA


# --- reader errors ----------------------------------------------------------------------------


def check_error(path: Path, line: int, *fragments: str) -> None:
    with pytest.raises(VcrbenchError) as info:
        read_discrimination_trials(path)
    message = str(info.value)
    assert str(path) in message and f"line {line}:" in message, message
    for fragment in fragments:
        assert fragment in message, message


def test_reader_missing_column(tmp_path) -> None:
    path = tmp_path / "no_response.csv"
    path.write_text("subject,corruption_a,corruption_b\np1,a,b\n", encoding="utf-8")
    check_error(path, 1, "missing column(s) response")
    path = tmp_path / "late_header.csv"
    path.write_text("\nsubject,corruption_a,response\np1,a,same\n", encoding="utf-8")
    check_error(path, 2, "missing column(s) corruption_b")


def test_reader_bad_response_names_its_line(tmp_path) -> None:
    path = write_trials(
        tmp_path / "bad.csv",
        [("p1", "a", "b", "same"), ("p1", "a", "a", "same"), ("p2", "a", "b", "yes")],
    )
    check_error(path, 4, "response is 'yes'", "'same' or 'different'")
    # Blank lines and a quoted field spanning two lines still count as lines.
    path = tmp_path / "multiline.csv"
    path.write_text(
        'subject,corruption_a,corruption_b,response\n\n"p\n1",a,b,same\np2,a,b,diff\n',
        encoding="utf-8",
    )
    check_error(path, 5, "response is 'diff'")
    path = tmp_path / "multiline_bad.csv"
    path.write_text(
        'subject,corruption_a,corruption_b,response\n"p\n1",a,b,maybe\n', encoding="utf-8"
    )
    check_error(path, 2, "response is 'maybe'")  # a record is named by its first line
    path = tmp_path / "bad_truth.csv"
    path.write_text(
        "subject,corruption_a,corruption_b,response,truth\np1,a,b,same,\n", encoding="utf-8"
    )
    check_error(path, 2, "truth is ''")


def test_reader_empty_and_malformed_files(tmp_path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text("", encoding="utf-8")
    check_error(empty, 1, "empty file")
    blank = tmp_path / "blank.csv"
    blank.write_text("\n  \n", encoding="utf-8")
    check_error(blank, 1, "empty file")
    header_only = tmp_path / "header_only.csv"
    header_only.write_text("subject,corruption_a,corruption_b,response\n", encoding="utf-8")
    check_error(header_only, 2, "no trials")
    short = tmp_path / "short.csv"
    short.write_text("subject,corruption_a,corruption_b,response\np1,a,same\n", encoding="utf-8")
    check_error(short, 2, "3 fields but the header has 4")
    unnamed = tmp_path / "unnamed.csv"
    unnamed.write_text("subject,corruption_a,corruption_b,response\np1,,b,same\n", "utf-8")
    check_error(unnamed, 2, "empty corruption_a")
    with pytest.raises(VcrbenchError, match="cannot read"):
        read_discrimination_trials(tmp_path / "absent.csv")
