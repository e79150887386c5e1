"""The reva section: defaults, the plan (set sizes before any job) and every refusal naming its
key, on the shared ImageNet sample (the evaluation: its 16-category images)."""

from __future__ import annotations

import pytest
import yaml
from helpers.config_checks import refused
from helpers.paths import REPO

from vcrbench.config import evaluated_models, validate_config
from vcrbench.reva.config import reva_plan

pytestmark = pytest.mark.shared


@pytest.fixture
def config(imagenet_sample) -> dict:
    """The shipped REVa sample config with absolute data paths."""
    loaded = yaml.safe_load((REPO / "config" / "reva-sample.yaml").read_text())
    loaded["dataset"]["path"] = str(imagenet_sample)
    loaded["reva"]["train"]["path"] = str(imagenet_sample)
    return loaded


def test_reva_is_off_by_default_and_its_defaults_are_the_papers():
    reva = validate_config({})["reva"]
    assert reva["enabled"] is False
    assert reva["analyser"] == {"epsilon": 0.1, "neighbours": 50, "score": "misprediction",
                                "unstable_fraction": 0.3, "shard_size": 1000}
    assert reva["attacks"]["names"] == ["fgsm", "bim", "pgd", "rfgsm", "mifgsm", "uap"]
    assert reva["attacks"]["source"] is None
    assert reva["groups"] == {"rule": "worst-per-category", "threshold": 2.0,
                              "attacks": "non-robust"}


def test_the_sample_config_plans_207_evaluation_793_pool_and_207_weak_images(config):
    validated = validate_config(config)
    plan = reva_plan(validated)
    assert (plan.evaluation_size, plan.pool_size, plan.weak_size) == (207, 793, 207)
    assert plan.ranking_model == "efficientnet-lite0"
    assert plan.pool_label() == "training (reva.train)"
    assert plan.attacks["pgd"]["eps"] == pytest.approx(8 / 255)
    assert plan.attacks["pgd"]["steps"] == 10


def test_transfer_source_and_ranking_model_are_evaluated(config):
    config["reva"]["attacks"] = {"source": "torchvision:resnet18"}
    assert "torchvision:resnet18" in evaluated_models(validate_config(config))


def test_unknown_attack_isrefused(config):
    config["reva"]["attacks"] = {"names": ["fgsm", "deepfool"]}
    refused(config, "reva.attacks", "deepfool")


def test_settings_of_an_attack_not_run_arerefused(config):
    config["reva"]["attacks"] = {"names": ["fgsm"], "settings": {"pgd": {"steps": 3}}}
    refused(config, "reva.attacks.settings", "pgd")


@pytest.mark.parametrize("eps", [0, -0.1, 1.5])
def test_attack_eps_outside_0_1_isrefused(config, eps):
    config["reva"]["attacks"] = {"names": ["pgd"], "settings": {"pgd": {"eps": eps}}}
    refused(config, "reva.attacks", "eps")


@pytest.mark.parametrize("epsilon", [0, 1.2])
def test_neighbour_epsilon_outside_0_1_isrefused(config, epsilon):
    config["reva"]["analyser"]["epsilon"] = epsilon
    refused(config, "reva.analyser.epsilon")


def test_a_weak_set_larger_than_the_pool_isrefused(config):
    config["reva"]["weak"] = {"size": 800}
    refused(config, "reva.weak.size", "800", "793")


def test_a_pool_that_overlaps_the_evaluation_images_isrefused(config):
    config["reva"]["train"].pop("exclude_categories16")
    refused(config, "reva.disjoint", "shares 207 images")
    config["reva"]["disjoint"] = False
    assert reva_plan(validate_config(config)).pool_size == 1000


def test_unlabelled_pools_and_evaluation_sets_arerefused(config):
    config["reva"]["train"] = {"source": "builtin"}
    refused(config, "reva.train", "no labels")
    config["reva"]["pool"] = "evaluation"
    config["dataset"] = {"source": "builtin"}
    refused(config, "reva.enabled", "labelled evaluation images")


def test_from_finetune_must_name_an_entry(config):
    config["reva"]["from_finetune"] = "nope"
    refused(config, "reva.from_finetune", "'nope'")


def test_the_evaluation_pool_needs_no_training_images(config):
    config["reva"]["pool"] = "evaluation"
    plan = reva_plan(validate_config(config))
    assert (plan.pool_size, plan.weak_size, plan.pool_label()) == (207, 207, "evaluation")


def test_unknown_reva_key_isrefused(config):
    config["reva"]["weak"] = {"sizes": 3}
    refused(config, "reva.weak", "sizes")



COMPARED = {"Standard": "finetuned:standard", "AugMix": "finetuned:augmix",
            "REVa⁻": "finetuned:reva-minus", "REVa": "finetuned:reva"}


@pytest.fixture
def compared(config) -> dict:
    """The sample config with the four fine-tuning entries of REVa part 2 (existing keys only)
    and their comparison."""
    train = dict(config["reva"]["train"])
    config["finetune"] = [{"name": m.partition(":")[2], "base": "efficientnet-lite0",
                           "train": dict(train), "geometry": {"crop": "resized", "flip": True}}
                          for m in COMPARED.values()]
    config["reva"]["comparison"] = {"methods": dict(COMPARED),
                                    "baselines": ["Standard", "AugMix", "REVa⁻"],
                                    "transfer_from": "Standard"}
    return config


def test_compared_methods_must_crop_and_flip_alike(compared):
    # auto: the AugMix methods crop and flip (the authors' ImageNet pipeline), standard does not
    for entry, method in zip(compared["finetune"], ["standard", "augmix", "reva_minus", "reva"],
                             strict=True):
        entry["method"] = method
        del entry["geometry"]
    compared["finetune"][-1]["reva"] = {"targeted": ["gaussian_noise"]}
    refused(compared, "reva.comparison", "Standard: crop none, flip False",
             "AugMix: crop resized (scale 0.08-1), flip True", "geometry")
    compared["finetune"][0]["geometry"] = {"crop": "resized", "flip": True}
    assert reva_plan(validate_config(compared)).comparison is not None
    compared["finetune"][1]["geometry"] = {"scale": [0.5, 1.0]}
    refused(compared, "reva.comparison", "AugMix: crop resized (scale 0.5-1)")


def test_no_comparison_by_default(config):
    assert validate_config({})["reva"]["comparison"] == {
        "methods": {}, "baselines": [], "transfer_from": None, "alternative": "two-sided",
        "attacks": None, "published": None}
    del config["reva"]["comparison"]  # the shipped sample compares its four methods
    assert reva_plan(validate_config(config)).comparison is None


def test_the_shipped_sample_compares_the_four_methods(config):
    plan = reva_plan(validate_config(config)).comparison
    assert list(plan.methods) == ["Standard", "AugMix", "REVa⁻", "REVa"]
    assert plan.transfer_from == "Standard"


def test_the_comparison_plan_names_its_methods_baselines_and_transfer_source(compared):
    validated = validate_config(compared)
    plan = reva_plan(validated).comparison
    assert plan.methods == COMPARED and list(plan.methods) == list(COMPARED)
    assert plan.baselines == ["Standard", "AugMix", "REVa⁻"]
    assert plan.source_model == "finetuned:standard" and plan.alternative == "two-sided"
    assert set(COMPARED.values()) <= set(evaluated_models(validated))


@pytest.mark.parametrize(
    ("change", "fragments"),
    [
        ({"methods": {"Standard": "finetuned:standard"}}, ["at least two"]),
        ({"baselines": []}, ["reva.comparison.baselines is empty"]),
        ({"baselines": ["Standard", "Cutout"]}, ["reva.comparison.baselines", "Cutout"]),
        ({"transfer_from": None}, ["reva.comparison.transfer_from is not set"]),
        ({"transfer_from": "Base"}, ["reva.comparison.transfer_from", "'Base'"]),
        ({"methods": {**COMPARED, "REVa": "finetuned:revb"}},
         ["reva.comparison.methods.REVa", "no finetune entry 'revb'"]),
        ({"methods": {**COMPARED, "REVa": "finetuned:standard"}}, ["more than once"]),
        ({"methods": {**COMPARED, "REVa": "nosuch:model"}}, ["reva.comparison.methods.REVa"]),
        ({"alternative": "greater"}, ["reva.comparison.alternative", "two-sided, less"]),
        ({"colour": "red"}, ["unknown key 'colour'", "reva.comparison"]),
        ({"attacks": ["pgd", "cw"]}, ["reva.comparison.attacks ['cw']", "reva.attacks.names"]),
    ],
)
def test_a_wrong_comparison_is_refused_naming_its_key(compared, change, fragments):
    compared["reva"]["comparison"].update(change)
    refused(compared, *fragments)


def test_compared_entries_must_share_base_and_training_images(compared):
    compared["finetune"][1]["base"] = "torchvision:resnet18"
    refused(compared, "differ in base", "AugMix: 'torchvision:resnet18'")


def test_a_comparison_without_reva_enabled_isrefused(compared):
    compared["reva"]["enabled"] = False
    refused(compared, "reva.enabled is false")


def test_the_comparison_takes_every_run_attack_or_the_listed_subset(compared):
    assert reva_plan(validate_config(compared)).comparison.attacks == [
        "fgsm", "bim", "pgd", "rfgsm", "mifgsm", "uap"]  # the fixture sets no subset
    compared["reva"]["comparison"]["attacks"] = ["uap", "fgsm"]
    assert reva_plan(validate_config(compared)).comparison.attacks == ["uap", "fgsm"]
    compared["reva"]["comparison"].update(attacks=[], transfer_from=None)
    plan = reva_plan(validate_config(compared)).comparison
    assert plan.attacks == [] and plan.transfer_from is None


def test_part_one_validates_every_model_or_the_listed_ones(compared):
    assert reva_plan(validate_config(compared)).validated == ["efficientnet-lite0"]  # the sample
    del compared["reva"]["models"]
    assert reva_plan(validate_config(compared)).validated is None
    compared["reva"]["models"] = ["torchvision:resnet18"]
    validated = validate_config(compared)
    assert reva_plan(validated).validated == ["torchvision:resnet18"]
    assert "torchvision:resnet18" in evaluated_models(validated)


def test_validated_models_must_include_the_base_a_targeted_auto_entry_reads(compared):
    compared["finetune"][-1]["method"] = "reva"  # targeted: auto by default
    compared["reva"]["models"] = ["finetuned:standard"]
    refused(compared, "reva.models", "'efficientnet-lite0'", "reva.targeted")
    compared["reva"]["models"] = ["efficientnet-lite0"]
    assert reva_plan(validate_config(compared)).validated == ["efficientnet-lite0"]
    compared["reva"]["models"] = ["nosuch:model"]
    refused(compared, "reva.models")


def test_a_random_baseline_refuses_a_reva_entry_that_targets_part_1s_groups(config):
    assert validate_config(config)["reva"]["weak"]["draw"] == "weakest"
    config["reva"]["weak"] = {**config["reva"].get("weak", {}), "draw": "random-unselected"}
    refused(config, "finetune entry 'reva'", "reva.targeted auto",
            "reva.weak.draw is random-unselected", "set reva.weak.draw: weakest")
    reva_entry = next(e for e in config["finetune"] if e["name"] == "reva")
    reva_entry["reva"] = {**reva_entry["reva"], "targeted": ["gaussian_noise"]}
    assert validate_config(config)["reva"]["weak"]["draw"] == "random-unselected"
