"""Same/different discrimination trials: exact binomial p-values against scipy and exact
rational sums, simulated trials, and the trial-file reader's errors."""

from __future__ import annotations

import csv
from fractions import Fraction
from math import comb
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from scipy.stats import binomtest

from vcrbench.errors import VcrbenchError
from vcrbench.human.discrimination import (
    DISCRIMINATION_SCHEMA,
    binomial_p_greater,
    discrimination_test,
    read_discrimination_trials,
)
from vcrbench.human.similarity import pairs_marked_similar, similarity_groups

# --- exact binomial test ----------------------------------------------------------------------


def scipy_p(k: int, n: int) -> float:
    return binomtest(k, n, 0.5, alternative="greater").pvalue


def exact_p(k: int, n: int) -> Fraction:
    return Fraction(sum(comb(n, i) for i in range(k, n + 1)), 2**n)


def test_binomial_p_matches_scipy_on_seeded_cases() -> None:
    rng = np.random.default_rng(20240611)
    ns = [1, 2, 3, 4, 5, 7, 10, 11, 20, 33, 100, 101, 999, 1000, 4096, 20000]
    ns += [int(n) for n in rng.integers(1, 20001, size=12)]
    checked = 0
    for n in ns:
        half, sd = n // 2, max(1, int(np.sqrt(n) / 2))
        ks = {0, 1, half - 1, half, half + 1, half + 2, n - 1, n}
        ks |= {half + j * sd for j in range(-6, 13)}
        ks |= {int(k) for k in rng.integers(0, n + 1, size=8)}
        ks |= {int(k) for k in np.round(rng.binomial(n, 0.5, size=4))}
        for k in sorted(x for x in ks if 0 <= x <= n):
            ours, ref = binomial_p_greater(k, n), scipy_p(k, n)
            assert 0.0 <= ours <= 1.0
            assert ours == pytest.approx(ref, rel=1e-10, abs=1e-300), (k, n, ours, ref)
            checked += 1
    assert checked > 500


def test_binomial_p_matches_exact_rational_sum() -> None:
    for n in [1, 2, 9, 10, 63, 64, 150, 301]:
        for k in range(n + 1):
            assert binomial_p_greater(k, n) == pytest.approx(float(exact_p(k, n)), rel=1e-13)


def test_binomial_p_edge_cases_and_large_n() -> None:
    assert binomial_p_greater(0, 0) == 1.0
    assert binomial_p_greater(0, 1) == 1.0
    assert binomial_p_greater(1, 1) == 0.5
    assert binomial_p_greater(10, 10) == 2.0**-10
    assert binomial_p_greater(0, 7) == 1.0
    assert binomial_p_greater(200, 200) == 2.0**-200
    # n = 10^5: both sides of the mean and a far tail, against scipy.
    for k in (49_000, 50_000, 50_001, 50_300, 51_000, 52_000):
        assert binomial_p_greater(k, 100_000) == pytest.approx(scipy_p(k, 100_000), rel=1e-10)
    assert binomial_p_greater(100_000, 100_000) == 0.0  # 2^-100000 underflows


@pytest.mark.parametrize(
    ("k", "n"), [(-1, 5), (6, 5), (0, -1), (2.5, 5), (2, 5.5), ("3", 5), (True, 5)]
)
def test_binomial_p_rejects_bad_counts(k, n) -> None:
    with pytest.raises(VcrbenchError, match="k"):
        binomial_p_greater(k, n)


# --- same/different discrimination trials -----------------------------------------------------


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
    p_correct: dict[tuple[str, str], float],
    n_per_subject: int,
    subjects: int = 5,
) -> list[tuple[str, str, str, str]]:
    """Trials for each pair and subject; the answer is right with the pair's probability."""
    rows = []
    for s in range(subjects):
        for (a, b), p in p_correct.items():
            truth = "same" if a == b else "different"
            wrong = "different" if truth == "same" else "same"
            for _ in range(n_per_subject):
                first, second = (a, b) if rng.uniform() < 0.5 else (b, a)
                answer = truth if rng.uniform() < p else wrong
                rows.append((f"p{s:02d}", first, second, answer))
    return rows


def test_simulated_discrimination_separates_distinguishable_from_similar(tmp_path) -> None:
    rng = np.random.default_rng(7)
    p_correct = {
        ("frost", "gaussian_blur"): 0.9,
        ("gaussian_noise", "impulse_noise"): 0.5,
        ("gaussian_noise", "gaussian_noise"): 0.9,  # catch trials
    }
    rows = simulate_trials(rng, p_correct, n_per_subject=80)
    trials = read_discrimination_trials(write_trials(tmp_path / "trials.csv", rows))
    assert trials.num_rows == len(rows) == 3 * 5 * 80
    assert set(trials.column("truth").to_pylist()) == {"same", "different"}
    result = discrimination_test(trials, alpha=0.05)
    assert result.schema == DISCRIMINATION_SCHEMA
    got = {(r["corruption_a"], r["corruption_b"]): r for r in result.to_pylist()}
    assert list(got) == sorted(p_correct)  # names sorted within and across pairs
    for pair in p_correct:
        mine = [r for r in rows if tuple(sorted(r[1:3])) == pair]
        truth = "same" if pair[0] == pair[1] else "different"
        assert got[pair]["n_trials"] == len(mine) == 400
        assert got[pair]["n_correct"] == sum(r[3] == truth for r in mine)
        assert got[pair]["n_subjects"] == 5
        assert got[pair]["accuracy"] == got[pair]["n_correct"] / 400
        assert got[pair]["p_value"] == pytest.approx(
            scipy_p(got[pair]["n_correct"], 400), rel=1e-10
        )
    blur = got[("frost", "gaussian_blur")]
    noise = got[("gaussian_noise", "impulse_noise")]
    assert blur["accuracy"] > 0.85 and blur["p_value"] < 1e-50
    assert blur["distinguishable"] and not blur["similar"]
    assert 0.44 < noise["accuracy"] < 0.56
    assert noise["similar"] and not noise["distinguishable"]
    groups = similarity_groups(
        ["frost", "gaussian_blur", "gaussian_noise", "impulse_noise"],
        pairs_marked_similar(result),
    )
    assert groups == [["frost"], ["gaussian_blur"], ["gaussian_noise", "impulse_noise"]]


def one_pair_result(rng: np.random.Generator, p_correct: float, n: int) -> dict:
    """Test n different-trials of the pair (a, b), each answered right with ``p_correct``."""
    right = rng.uniform(size=n) < p_correct
    trials = pa.table(
        {
            "subject": ["s"] * n,
            "corruption_a": ["a"] * n,
            "corruption_b": ["b"] * n,
            "response": np.where(right, "different", "same").tolist(),
        }
    )
    return discrimination_test(trials).to_pylist()[0]


def test_chance_level_is_rejected_at_most_about_alpha() -> None:
    """At 50 % the exact test calls a pair distinguishable in ≤ ~5 % of experiments; at 90 %
    with 100 trials, always."""
    rng = np.random.default_rng(11)
    at_chance = [one_pair_result(rng, 0.5, 100)["distinguishable"] for _ in range(300)]
    assert 0 < sum(at_chance) / 300 < 0.08
    assert all(one_pair_result(rng, 0.9, 100)["distinguishable"] for _ in range(50))


def test_truth_column_and_normalisation(tmp_path) -> None:
    path = tmp_path / "with_truth.csv"
    path.write_text(
        "Subject, corruption_b ,corruption_a,RESPONSE,truth,notes\n"
        "p1,blur,blur_v2, Same ,same,x\n"
        "\n"
        "p1,blur_v2,blur,different,same,\n"
        "p2,blur,blur,same,different,odd\n",
        encoding="utf-8",
    )
    trials = read_discrimination_trials(path)
    assert trials.column_names == ["subject", "corruption_a", "corruption_b", "response", "truth"]
    assert trials.column("corruption_a").to_pylist() == ["blur_v2", "blur", "blur"]
    assert trials.column("response").to_pylist() == ["same", "different", "same"]
    assert trials.column("truth").to_pylist() == ["same", "same", "different"]
    result = discrimination_test(trials).to_pylist()
    assert [
        (r["corruption_a"], r["corruption_b"], r["n_trials"], r["n_correct"]) for r in result
    ] == [
        ("blur", "blur", 1, 0),
        ("blur", "blur_v2", 2, 1),
    ]
    assert result[1]["p_value"] == 0.75


def test_discrimination_test_rejects_bad_tables() -> None:
    good = {"subject": ["s"], "corruption_a": ["a"], "corruption_b": ["b"], "response": ["same"]}
    with pytest.raises(VcrbenchError, match="alpha"):
        discrimination_test(pa.table(good), alpha=1.5)
    with pytest.raises(VcrbenchError, match="response"):
        discrimination_test(pa.table({k: v for k, v in good.items() if k != "response"}))
    with pytest.raises(VcrbenchError, match="row 0: response is 'maybe'"):
        discrimination_test(pa.table({**good, "response": ["maybe"]}))
    with pytest.raises(VcrbenchError, match="row 0: truth is 'yes'"):
        discrimination_test(pa.table({**good, "truth": ["yes"]}))


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


