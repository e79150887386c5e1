"""The groups: the worst-per-category rule on the paper's own Table 1 selects its highlighted
cells (corruptions); every attack non-robust by default (the paper's §4.3.2), or by the rules;
the threshold rule; ties and nulls; the categories."""

from __future__ import annotations

import pyarrow as pa
import pytest

from vcrbench.errors import VcrbenchError
from vcrbench.reva.categories import REVA_CATEGORIES, category_of
from vcrbench.reva.groups import SCHEMA, above_threshold, groups_table, worst_per_category

#: REVa paper, Table 1: relative corruption errors (Eq. 4) of the standard models on the
#: weak-robust validation sets. The extracted text lost the Err column, so each row holds the
#: 15 corruptions in the table's column order (weather, digital, blur, noise); "*" marks the
#: highlighted (\cellcolor) cells, the paper's non-robust corruptions.
COLUMNS = ["brightness", "frost", "fog", "snow", "contrast", "elastic_transform", "pixelate",
           "jpeg_compression", "zoom_blur", "motion_blur", "glass_blur", "defocus_blur",
           "impulse_noise", "gaussian_noise", "shot_noise"]
TABLE1 = {
    "CIFAR-10-C1 AllConvNet":
        "0.465 6.82* 3.29 5.00 6.04* 3.09 4.53 3.85 5.50 5.00 10.29* 3.96 9.71 12.52* 10.47",
    "CIFAR-10-C1 DenseNet":
        "0.412 7.81* 2.80 5.71 5.35 4.19 6.20 7.18* 4.57 4.64 10.74* 3.46 9.50 12.91* 10.96",
    "CIFAR-10-C1 WideResNet":
        "0.276 6.77* 2.28 5.45 4.22 3.68 5.99 7.20* 4.15 4.61 10.77* 2.43 8.44 12.43* 10.21",
    "CIFAR-100-C1 AllConvNet": "0.437 2.337* 1.458 1.912 2.085* 1.306 1.725 1.929 1.826 1.814 "
                               "3.250* 1.344 3.224 3.584* 3.318",
    "CIFAR-100-C1 DenseNet": "0.394 2.481* 1.283 2.045 1.749 1.531 2.081 2.454* 1.870 1.843 "
                             "3.448* 1.314 3.392 3.761* 3.441",
    "CIFAR-100-C1 WideResNet": "0.230 2.674* 1.721 2.063 2.043 1.894 1.944 2.379* 1.749 1.823 "
                               "3.448* 1.171 3.219 3.707* 3.291",
    "ImageNet-100-C1 ResNet18": "1.683 3.296 3.457 3.635* 3.647* 2.113 1.952 1.875 2.957 3.064 "
                                "3.297 3.308* 4.088* 3.823 3.857",
    "ImageNet-100-C1 Swin_V2_B": "1.688 4.888 3.849 5.405* 5.256* 3.026 2.212 2.321 4.606 4.196 "
                                 "5.332* 4.823 5.075 4.978 5.097*",
}


def _row(name):
    cells = TABLE1[name].split()
    return [float(c.rstrip("*")) for c in cells], [c.endswith("*") for c in cells]


@pytest.mark.parametrize("name", sorted(TABLE1))
def test_worst_per_category_reproduces_the_highlighted_cells_of_table_1(name):
    values, highlighted = _row(name)
    assert len(values) == len(COLUMNS)
    assert worst_per_category([category_of(c) for c in COLUMNS], values) == highlighted


def test_table_1_through_the_groups_table():
    rows = []
    for model in TABLE1:
        values, _ = _row(model)
        rows += [{"model": model, "kind": "corruption", "perturbation": c,
                  "category": category_of(c), "measure": "severity", "value": v}
                 for c, v in zip(COLUMNS, values, strict=True)]
    table = groups_table(pa.Table.from_pylist(rows))
    assert table.schema == SCHEMA
    assert table.num_rows == 2 * len(rows)
    for model in TABLE1:
        _, highlighted = _row(model)
        flags = [r["non_robust"] for r in table.to_pylist()
                 if r["model"] == model and r["rule"] == "worst-per-category"]
        assert flags == highlighted, model
    # the paper's text: for AllConvNet, Frost, Contrast, Glass and Gaussian
    chosen = [r["perturbation"] for r in table.to_pylist() if r["chosen"] and r["non_robust"]
              and r["model"] == "CIFAR-10-C1 AllConvNet"]
    assert chosen == ["frost", "contrast", "glass_blur", "gaussian_noise"]


def test_threshold_rule_ties_and_nulls():
    assert above_threshold([1.5, 2.0, 2.5, None], 2.0) == [False, False, True, None]
    assert worst_per_category(["a", "a", "b"], [None, 1.0, 3.0]) == [None, True, True]
    assert worst_per_category(["a", "a", "a"], [2.0, 2.0, 1.0]) == [True, True, False]
    assert worst_per_category(["a", "b"], [None, None]) == [None, None]


def test_groups_table_applies_both_rules_per_model_and_measure():
    relative = pa.table({
        "model": ["m"] * 6 + ["n"],
        "kind": ["corruption", "corruption", "attack", "attack", "corruption", "corruption",
                 "corruption"],
        "perturbation": ["gaussian_noise", "shot_noise", "fgsm", "pgd", "gaussian_noise",
                         "shot_noise", "shot_noise"],
        "category": ["noise", "noise", "adversarial", "adversarial", "noise", "noise", "noise"],
        "measure": ["severity"] * 4 + ["continuous"] * 2 + ["severity"],
        "value": [3.0, 2.5, 1.5, None, 1.0, 4.0, 0.5],
    })
    table = groups_table(relative, rule="threshold", threshold=2.0,
                         attacks="by-rule").to_pylist()
    flags = {(r["model"], r["perturbation"], r["measure"], r["rule"]): r["non_robust"]
             for r in table}
    assert flags[("m", "gaussian_noise", "severity", "worst-per-category")] is True
    assert flags[("m", "shot_noise", "severity", "worst-per-category")] is False
    assert flags[("m", "shot_noise", "severity", "threshold")] is True
    # by-rule: the attacks form their own category; a null value is neither robust nor
    # non-robust
    assert flags[("m", "fgsm", "severity", "worst-per-category")] is True
    assert flags[("m", "fgsm", "severity", "threshold")] is False
    assert flags[("m", "pgd", "severity", "worst-per-category")] is None
    assert flags[("m", "pgd", "severity", "threshold")] is None
    # measures and models are ranked apart
    assert flags[("m", "shot_noise", "continuous", "worst-per-category")] is True
    assert flags[("m", "gaussian_noise", "continuous", "worst-per-category")] is False
    assert flags[("n", "shot_noise", "severity", "worst-per-category")] is True
    assert flags[("n", "shot_noise", "severity", "threshold")] is False
    assert {r["rule"] for r in table if r["chosen"]} == {"threshold"}
    assert len(table) == 2 * relative.num_rows


def _attack_rows(values):
    return pa.table({
        "model": ["m"] * (2 + len(values)),
        "kind": ["corruption"] * 2 + ["attack"] * len(values),
        "perturbation": ["gaussian_noise", "shot_noise", *(f"a{i}" for i in range(len(values)))],
        "category": ["noise"] * 2 + ["adversarial"] * len(values),
        "measure": ["severity"] * (2 + len(values)),
        "value": [3.0, 2.5, *values],
    })


@pytest.mark.parametrize("rule", ["worst-per-category", "threshold"])
def test_every_attack_is_non_robust_by_default_as_the_paper_says(rule):
    # REVa §4.3.2: "all the considered adversarial perturbations fall in the non-robust group",
    # whatever their relative errors (here below the threshold and below the worst attack)
    table = groups_table(_attack_rows([1.5, 0.5, 9.0, None]), rule=rule).to_pylist()
    for name in ("worst-per-category", "threshold"):
        attacks = [r["non_robust"] for r in table if r["kind"] == "attack" and r["rule"] == name]
        assert attacks == [True, True, True, None], name
    # the corruptions keep their rules
    corruptions = {(r["perturbation"], r["rule"]): r["non_robust"] for r in table
                   if r["kind"] == "corruption"}
    assert corruptions == {("gaussian_noise", "worst-per-category"): True,
                           ("shot_noise", "worst-per-category"): False,
                           ("gaussian_noise", "threshold"): True,
                           ("shot_noise", "threshold"): True}


def test_attacks_by_rule_keep_the_worst_attack_only():
    table = groups_table(_attack_rows([1.5, 0.5, 9.0]), attacks="by-rule").to_pylist()
    worst = [r["non_robust"] for r in table
             if r["kind"] == "attack" and r["rule"] == "worst-per-category"]
    above = [r["non_robust"] for r in table if r["kind"] == "attack" and r["rule"] == "threshold"]
    assert worst == [False, False, True]
    assert above == [False, False, True]


def test_bad_rules_are_refused():
    empty = pa.table({"model": [], "kind": [], "perturbation": [], "category": [],
                      "measure": [], "value": pa.array([], pa.float64())})
    with pytest.raises(VcrbenchError, match="reva.groups.rule"):
        groups_table(empty, rule="worst")
    with pytest.raises(VcrbenchError, match="reva.groups.attacks.*non-robust"):
        groups_table(empty, attacks="all")
    with pytest.raises(VcrbenchError, match="reva.groups.threshold"):
        groups_table(empty, threshold=float("nan"))
    assert groups_table(empty).num_rows == 0


def test_categories():
    assert {c: category_of(c) for c in ("frost", "contrast", "glass_blur", "shot_noise")} == {
        "frost": "weather", "contrast": "digital", "glass_blur": "blur", "shot_noise": "noise"}
    assert sorted(set(REVA_CATEGORIES.values())) == ["blur", "digital", "noise", "weather"]
    assert len(REVA_CATEGORIES) == 19
    # outside ImageNet-C: the registry's visual class, given by the caller
    assert category_of("hue_saturation_value", "colour") == "colour"
    assert category_of("gaussian_noise", "blur") == "noise"  # ImageNet-C's category wins
    assert category_of("unknown") == "other"
    assert category_of("pgd", kind="attack") == "adversarial"
    with pytest.raises(VcrbenchError, match="kind"):
        category_of("pgd", kind="attacks")
