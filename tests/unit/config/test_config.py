"""Config validation: defaults filled in, clear errors naming key and allowed values."""

from __future__ import annotations

import pytest
import yaml
from helpers.paths import REPO

from vcrbench.config import evaluated_models, model_slug, validate_config
from vcrbench.errors import VcrbenchError


def load(name: str) -> dict:
    return yaml.safe_load((REPO / name).read_text())


def test_defaults_are_filled_in():
    config = validate_config({})
    assert config["sampling"] == {
        "mode": "uniform", "spacing": "visual", "n": 2000, "shard_size": 500, "imagenet_c_n": 0
    }
    assert config["binning"] == {"bins": 40, "min_count": 20, "min_coverage": 0.5,
                                 "right_anchor": "chance"}
    assert config["bootstrap"] == {"replicates": 200, "min_units": 10}
    assert config["imagenet_c"] == {"jpeg_quality": None}
    assert validate_config({"imagenet_c": {"jpeg_quality": 85}})["imagenet_c"]["jpeg_quality"] == 85
    with pytest.raises(VcrbenchError, match="jpeg_quality"):
        validate_config({"imagenet_c": {"jpeg_quality": 0}})
    assert config["human_range"] == "supported"
    assert config["models"] == ["efficientnet-lite0"]
    assert config["dataset"]["source"] == "builtin"


@pytest.mark.parametrize("name", ["config.yaml", "config/test.yaml"])
def test_shipped_configs_validate(name):
    validate_config(load(name))


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"sampling": {"n": 0}}, "'sampling.n' must be at least 1, got 0"),
        ({"binning": {"bins": 1}}, "'binning.bins' must be at least 2"),
        (
            {"sampling": {"nn": 3}},
            "unknown key 'nn' under 'sampling'; allowed keys: imagenet_c_n, mode, n, pilot_share, "
            "shard_size, spacing",
        ),
        ({"colour": 1}, "unknown key 'colour'"),
        ({"device": "tpu"}, "'device' is 'tpu'; allowed values: auto, cpu, cuda"),
        ({"seed": "zero"}, "'seed' must be of type integer"),
        (
            {"corruptions": ["gaussian_noise", "glas_blur"]},
            "corruptions[1] 'glas_blur' is not a known corruption; known: ",
        ),
        ({"models": ["efficientnet-lite0", "nonsense-model"]}, "models[1]"),
        ({"dataset": {"source": "imagefolder"}}, "dataset.path is not set"),
        ({"dataset": {"source": "imagefolder", "path": "/nonexistent/x"}}, "is not a folder"),
        (
            {"sampling": {"mode": "imagenet-c"}, "corruptions": ["uniform_noise"]},
            "has no ImageNet-C severities",
        ),
    ],
)
def test_bad_values_name_the_key(config, message):
    with pytest.raises(VcrbenchError) as error:
        validate_config(config)
    assert message in str(error.value)


def test_model_slugs_are_path_safe():
    assert model_slug("torchvision:resnet50") == "torchvision-resnet50"
    assert model_slug("file:my models/net.py") == "file-my-models-net.py"
    assert model_slug("openclip:ViT-B-32/openai") == "openclip-ViT-B-32-openai"



def test_command_line_strings_are_coerced_to_the_schema_types():
    config = validate_config(
        {"sampling": {"n": "200"}, "seed": "3", "dataset": {"limit": "null",
                                                          "skip_unreadable": "true"}}
    )
    assert config["sampling"]["n"] == 200 and config["seed"] == 3
    assert config["dataset"]["limit"] is None and config["dataset"]["skip_unreadable"] is True
    with pytest.raises(VcrbenchError, match="'sampling.n' must be of type integer"):
        validate_config({"sampling": {"n": "many"}})


def test_keys_with_alternatives_are_coerced_and_explained():
    """Keys that take ``auto`` or a value (anyOf): command-line strings become the value's type,
    and a bad value is answered with every alternative."""
    entry = {"name": "ft", "base": "efficientnet-lite0",
             "train": {"source": "imagefolder", "path": str(REPO / "tests" / "assets")},
             "method": "augmix"}
    filled = validate_config({"finetune": [{**entry, "augmix": {"severity": "2"},
                                            "clip_grad_norm": "null",
                                            "geometry": {"flip": "false"}}]})["finetune"][0]
    assert (filled["augmix"]["severity"], filled["clip_grad_norm"]) == (2.0, None)
    assert filled["geometry"]["flip"] is False
    assert validate_config({"finetune": [entry]})["finetune"][0]["augmix"]["severity"] == "auto"
    for bad, message in (
        ({"augmix": {"severity": "high"}},
         "'finetune[0].augmix.severity' is 'high'; allowed: auto; a number >= 0.1 and <= 10"),
        ({"clip_grad_norm": -1},
         "'finetune[0].clip_grad_norm' is -1; allowed: auto; a number > 0; null"),
        ({"reva": {"pgd": {"eps": 2}}},
         "'finetune[0].reva.pgd.eps' is 2; allowed: auto; a number > 0 and <= 1"),
    ):
        with pytest.raises(VcrbenchError) as error:
            validate_config({"finetune": [{**entry, **bad}]})
        assert message in str(error.value)


#: Any existing folder passes the config check (its images are read at run time).
LABELLED = {"source": "imagefolder", "path": str(REPO / "tests" / "assets")}
FINETUNE_ENTRY = {"name": "ft", "base": "efficientnet-lite0", "train": LABELLED}


def test_finetune_entries_get_defaults_and_their_models_are_evaluated():
    config = validate_config({"finetune": [FINETUNE_ENTRY], "models": ["efficientnet-lite1"]})
    entry = config["finetune"][0]
    assert entry["train"]["exclude_categories16"] is False  # the shared dataset definition
    assert entry["optimizer"] == {"lr": 0.001, "momentum": 0.9, "weight_decay": 0.0,
                                  "nesterov": False}
    assert entry["augmentation"] == {"corruption": None, "fraction": 0.5, "spacing": "linear"}
    assert (entry["epochs"], entry["trainable"], entry["batchnorm"]) == (5, "all", "frozen")
    assert evaluated_models(config) == ["efficientnet-lite1", "efficientnet-lite0",
                                        "finetuned:ft"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"models": ["finetuned:other"]}, "names no finetune entry"),
        ({"finetune": [{**FINETUNE_ENTRY, "base": "finetuned:x"}]}, "not from another"),
        ({"finetune": [FINETUNE_ENTRY, FINETUNE_ENTRY]}, "used by another entry"),
        ({"finetune": [{**FINETUNE_ENTRY, "augmentation": {"corruption": "smog"}}]},
         "'smog' is not a known corruption"),
        ({"finetune": [{**FINETUNE_ENTRY, "trainable": "last"}]}, "finetune\\[0\\].trainable"),
        ({"finetune": [{**FINETUNE_ENTRY, "train": {**LABELLED, "colour": 1}}]},
         "unknown key 'colour' under 'finetune\\[0\\].train'"),
        ({"finetune": [{**FINETUNE_ENTRY, "train": {"source": "builtin"}}]},
         "finetune\\[0\\].train is the builtin photographs, which have no ImageNet labels"),
        ({"finetune": [], "overlap": {"candidates": ["gaussian_noise", "brightness"]}},
         "overlap.train is the builtin photographs"),
        ({"dataset": {"categories16_only": True, "exclude_categories16": True}},
         "exclude each other"),
    ],
)
def test_bad_finetune_settings_are_named(change, message):
    config = {"finetune": [FINETUNE_ENTRY], **change}
    with pytest.raises(VcrbenchError, match=message):
        validate_config(config)
