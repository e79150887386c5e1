"""The train section and runs on CIFAR labels: recipes from presets, and every refusal before
any job (a model whose input or classes do not fit, training on evaluation images, methods not
built for training from scratch, sections that run at 224 px only)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.cifar_files import cifar_run_config, write_cifar10, write_cifar100

from vcrbench.config import evaluated_models, validate_config
from vcrbench.errors import VcrbenchError
from vcrbench.training.scratch import FAST_RECIPE
from vcrbench.training.train_config import recipe_of_entry


def _config(root: Path, **changes) -> dict:
    """CIFAR-10's test split at 32 px evaluated with fastnet trained on its training split."""
    return cifar_run_config(root, **changes)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    write_cifar10(tmp_path)
    return tmp_path


def test_a_cifar_run_validates_and_evaluates_its_trained_model(root: Path) -> None:
    config = validate_config(_config(root))
    assert evaluated_models(config) == ["trained:net"]
    recipe = recipe_of_entry(config["train"][0], config["seed"])
    assert (recipe.epochs, recipe.batch_size, recipe.lr) == (FAST_RECIPE["epochs"],
                                                             FAST_RECIPE["batch_size"],
                                                             FAST_RECIPE["lr"])
    assert recipe.classes == 10 and recipe.seed == config["seed"]
    entry = {**config["train"][0], "preset": "augmix", "recipe": {"epochs": 3}, "seed": 5}
    recipe = recipe_of_entry(entry, 0)
    assert (recipe.epochs, recipe.lr, recipe.schedule, recipe.seed) == (3, 0.1, "cosine", 5)


def test_a_trained_model_is_evaluated_even_when_not_listed(root: Path) -> None:
    config = validate_config(_config(root, models=["trained:net"], train=[
        *_config(root)["train"], {**_config(root)["train"][0], "name": "other"}]))
    assert evaluated_models(config) == ["trained:net", "trained:other"]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"dataset": {"source": "cifar10", "split": "test"}}, "path is not set"),
        ({"models": ["efficientnet-lite0"]}, "classifies ImageNet's 1000 classes"),
        ({"models": ["trained:nothing"]}, "names no train entry"),
        ({"models": ["robustbench:Standard?dataset=cifar100&threat=Linf"]},
         "classifies cifar100's classes but the dataset has cifar10 labels"),
        ({"models": ["robustbench:Standard_R50?threat=Linf"]},
         r"ImageNet's 1000 classes .*robustbench:<name>\?dataset=cifar10"),
        ({"human": [{"format": "trials", "path": ".", "corruption": "gaussian_noise"}]},
         "human data"),
    ],
)
def test_refusals_of_the_run(root: Path, changes: dict, message: str) -> None:
    config = _config(root, **changes)
    with pytest.raises(VcrbenchError, match=message):
        validate_config(config)


def test_robustbench_cifar_models_are_accepted_at_32_px_only(root: Path) -> None:
    zoo = "robustbench:Standard?dataset=cifar10&threat=Linf"
    config = validate_config(_config(root, models=[zoo]))
    assert evaluated_models(config) == [zoo, "trained:net"]
    config = _config(root, models=[zoo])
    config["dataset"]["size"] = 224
    with pytest.raises(VcrbenchError, match="takes CIFAR's 32 x 32 images"):
        validate_config(config)


def test_robustbench_cifar_models_are_refused_on_imagenet_labels(tmp_path: Path) -> None:
    config = {"dataset": {"source": "builtin"},
              "models": ["robustbench:Standard?dataset=cifar10&threat=Linf"]}
    with pytest.raises(VcrbenchError, match="classifies cifar10's classes but the dataset has "
                                            "imagenet labels"):
        validate_config(config)


def test_a_cifar_model_on_224_px_images_is_refused(root: Path) -> None:
    config = _config(root)
    config["dataset"]["size"] = 224
    with pytest.raises(VcrbenchError, match="trained on 32 px images but the run's dataset has "
                                            "224 px"):
        validate_config(config)
    config = _config(root)
    config["train"][0]["data"]["size"] = 224
    with pytest.raises(VcrbenchError, match="fastnet takes 32 x 32 px images"):
        validate_config(config)


def test_training_on_the_evaluation_images_is_refused(root: Path) -> None:
    config = _config(root)
    config["train"][0]["data"]["split"] = "test"
    with pytest.raises(VcrbenchError, match="shares 4 images with the run's dataset"):
        validate_config(config)


def _reva_config(root: Path, method: str = "reva", **reva) -> dict:
    """A standard entry ``net`` and a REVa entry ``enhanced`` on the same training images."""
    config = _config(root)
    standard = config["train"][0]
    config["train"].append({**standard, "name": "enhanced", "method": method,
                            "reva": {"standard": "net", **reva}})
    return config


def test_reva_entries_get_augmix_and_reva_settings(root: Path) -> None:
    config = validate_config(_reva_config(root, targeted=["gaussian_noise", "fog"],
                                          severity=2, pgd={"steps": 7}))
    entry = config["train"][1]
    recipe = recipe_of_entry(entry, config["seed"])
    assert recipe.method == "reva" and recipe.augmix.severity == 3
    assert recipe.reva.targeted == ("gaussian_noise", "fog") and recipe.reva.severity == 2
    assert entry["reva"]["pgd"]["eps"] == pytest.approx(8 / 255)
    assert entry["reva"]["pgd"]["steps"] == 7
    assert recipe.clip_grad_norm == 1.0  # auto: the authors' CIFAR REVa script
    assert recipe_of_entry(config["train"][0], 0).clip_grad_norm is None  # standard
    minus = validate_config(_reva_config(root, "reva_minus", targeted=["fog"]))
    assert recipe_of_entry(minus["train"][1], 0).reva.targeted == ()
    minus["train"][1]["recipe"] = {"clip_grad_norm": None}
    assert recipe_of_entry(minus["train"][1], 0).clip_grad_norm is None
    assert evaluated_models(config) == ["trained:net", "trained:enhanced"]


def test_the_workflow_recipe_names_what_a_reva_epoch_reads_and_gives_back_the_recipe(
        root: Path) -> None:
    from vcrbench.training.train_config import recipe_from_workflow, workflow_recipe

    config = validate_config(_reva_config(root, targeted=["fog"], pgd={"steps": 7}))
    standard, enhanced = config["train"]
    values = workflow_recipe(enhanced, config["seed"])
    assert values["reva"]["standard"] == "net"
    assert values["reva"]["pgd"]["steps"] == 7 and "shard_size" not in values["reva"]["pgd"]
    # the listed corruptions' points at the entry's severity and side (CIFAR-10-C's at 32 px):
    # a change of the registry's severities changes the job's parameters
    from vcrbench.corruptions import imagenet_c_samples

    severity = values["reva"]["severity"]
    assert values["reva"]["targeted_points"] == {"fog": imagenet_c_samples("fog", 32)[severity - 1]}
    recipe, name, measure = recipe_from_workflow(values)
    assert recipe == recipe_of_entry(enhanced, config["seed"])
    assert (name, measure) == ("net", enhanced["reva"]["auto_measure"])
    assert "standard" in values["reva"]  # the job's parameters are left as given
    plain = workflow_recipe(standard, config["seed"])
    assert plain == recipe_of_entry(standard, config["seed"]).as_dict()
    assert recipe_from_workflow(plain) == (recipe_of_entry(standard, config["seed"]), None, None)


def test_reva_entries_sharing_a_standard_model_share_their_counterparts(root: Path) -> None:
    from vcrbench.training.train_config import pgd_identity

    config = _reva_config(root, targeted=["fog"])
    config["train"].append({**config["train"][1], "name": "minus", "method": "reva_minus"})
    config = validate_config(config)
    reva, minus = config["train"][1:]
    assert pgd_identity(reva, 0) == pgd_identity(minus, 0)
    other = {**minus, "reva": {**minus["reva"], "pgd": {**minus["reva"]["pgd"], "steps": 7}}}
    assert pgd_identity(other, 0) != pgd_identity(minus, 0)


@pytest.mark.parametrize(
    ("method", "reva", "change", "message"),
    [
        ("reva", {"standard": None, "targeted": ["fog"]}, None, "reva.standard is None"),
        ("reva", {"standard": "enhanced", "targeted": ["fog"]}, None,
         "reva.standard is 'enhanced'"),
        ("reva", {"targeted": ["fog"]}, {"method": "augmix"}, "must be trained with method "
                                                             "standard on the same data"),
        ("reva", {"targeted": ["fog"]}, {"data": "other"}, "on the same data"),
        ("reva", {"targeted": ["noc_border"]}, None, "noc_border has no ImageNet-C severities"),
        ("reva", {"targeted": ["nonsense"]}, None, "unknown corruption 'nonsense'"),
        ("reva", {}, None, "targeted is auto.*part 1 does not validate it"),
    ],
)
def test_bad_reva_entries_are_refused(root: Path, method: str, reva: dict, change, message: str
                                      ) -> None:
    config = _reva_config(root, method, **reva)
    if change == {"data": "other"}:
        config["train"][0]["data"] = {**config["train"][0]["data"], "per_class": 1}
    elif change:
        config["train"][0].update(change)
    with pytest.raises(VcrbenchError, match=message):
        validate_config(config)


def test_an_augmix_entry_gets_augmix_settings_and_a_standard_one_none(root: Path) -> None:
    config = _config(root)
    config["train"][0].update(method="augmix", augmix={"severity": 1, "lambda": 6})
    entry = validate_config(config)["train"][0]
    recipe = recipe_of_entry(entry, 0)
    assert recipe.method == "augmix"
    assert (recipe.augmix.width, recipe.augmix.depth, recipe.augmix.alpha) == (3, None, 1.0)
    assert (recipe.augmix.severity, recipe.augmix.lam) == (1.0, 6.0)
    standard = recipe_of_entry(validate_config(_config(root))["train"][0], 0)
    assert standard.augmix is None and "augmix" not in standard.as_dict()


def test_augmix_severity_auto_is_3_on_cifar_and_leaves_the_recipe_dict_unchanged(root: Path
                                                                                 ) -> None:
    """severity: auto (the default) resolves to AugMix's CIFAR 3, so the recipe dict (a rule
    parameter) is what it was when the default was the number 3: nothing retrains."""
    config = _config(root)
    config["train"][0].update(method="augmix")
    entry = validate_config(config)["train"][0]
    assert entry["augmix"]["severity"] == "auto"
    recipe = recipe_of_entry(entry, 0).as_dict()
    assert recipe["augmix"] == {"width": 3, "depth": None, "alpha": 1.0, "severity": 3.0,
                                "lam": 12.0}
    explicit = {**entry, "augmix": {**entry["augmix"], "severity": 3}}
    assert recipe_of_entry(explicit, 0).as_dict() == recipe


def test_another_label_space_for_training_is_refused(tmp_path: Path) -> None:
    write_cifar10(tmp_path)
    write_cifar100(tmp_path)
    config = _config(tmp_path)
    config["train"][0]["data"]["source"] = "cifar100"
    with pytest.raises(VcrbenchError, match="cifar100 labels .* cifar10 labels"):
        validate_config(config)


def test_imagenet_training_data_are_refused(root: Path) -> None:
    config = _config(root)
    config["train"][0]["data"] = {"source": "builtin", "size": "native"}
    with pytest.raises(VcrbenchError, match="CIFAR networks"):
        validate_config(config)


def test_fine_tuning_on_unlabelled_images_is_refused_on_cifar(root: Path) -> None:
    """(Fine-tuning a model trained here: tests/unit/training/test_native_finetune.py.)"""
    config = _config(root, finetune=[{"name": "ft", "base": "trained:net",
                                      "train": {"source": "builtin"}}])
    with pytest.raises(VcrbenchError, match=r"finetune\[0\].train is the builtin photographs, "
                                            "which have no labels.* labelled cifar10 images"):
        validate_config(config)
    # REVa part 1 runs on CIFAR (tests/unit/config/test_reva_cifar_config.py)
    validate_config(_config(root, reva={"enabled": True, "from_train": "net"}))
