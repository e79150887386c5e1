"""Named corruption sets: members registered, the sources' sizes and orders, config expansion."""

from __future__ import annotations

import pytest
import yaml
from helpers.paths import IMAGENET_SAMPLE, REPO

from vcrbench.config import validate_config
from vcrbench.corruptions import CORRUPTIONS
from vcrbench.corruptions.sets import CORRUPTION_SETS, expand_sets
from vcrbench.errors import VcrbenchError
from vcrbench.reva.categories import REVA_CATEGORIES


def test_every_member_is_registered_and_sets_have_their_sources_sizes():
    for name, members in CORRUPTION_SETS.items():
        assert len(set(members)) == len(members), name
        assert set(members) <= set(CORRUPTIONS), (name, set(members) - set(CORRUPTIONS))
    sizes = {name: len(members) for name, members in CORRUPTION_SETS.items()}
    assert sizes == {"vcr": 14, "imagenet-c": 15, "imagenet-c-extra": 4, "noc-candidates": 23,
                     "imagenet-noc": 8}


def test_vcr_is_the_papers_14_in_the_registry_order_and_the_default_run():
    assert CORRUPTION_SETS["vcr"] == tuple(CORRUPTIONS)[:14]
    default = yaml.safe_load((REPO / "config.yaml").read_text())["corruptions"]
    assert set(default) == set(CORRUPTION_SETS["vcr"])


def test_imagenet_c_sets_have_severities_and_their_categories():
    for name in CORRUPTION_SETS["imagenet-c"] + CORRUPTION_SETS["imagenet-c-extra"]:
        spec = CORRUPTIONS[name]
        assert spec.source == "imagenet-c" and spec.imagenet_c_severities is not None, name
        assert name in REVA_CATEGORIES, name
    # ImageNet-C's order: four per category but digital (noise, blur, weather, digital)
    categories = [REVA_CATEGORIES[c] for c in CORRUPTION_SETS["imagenet-c"]]
    assert categories == ["noise"] * 3 + ["blur"] * 4 + ["weather"] * 4 + ["digital"] * 4


def test_noc_sets():
    candidates = CORRUPTION_SETS["noc-candidates"]
    assert set(CORRUPTION_SETS["imagenet-noc"]) <= set(candidates)
    # NOC's own corruptions, plus Gaussian noise (ImageNet-C's formula, NOC's σ range inside)
    assert all(CORRUPTIONS[c].source == "noc" for c in candidates if c != "gaussian_noise")
    assert CORRUPTIONS["gaussian_noise"].parameters["sigma"][0] <= 0.05
    assert CORRUPTIONS["gaussian_noise"].parameters["sigma"][1] >= 0.18


def test_expand_sets_keeps_order_and_first_occurrence():
    assert expand_sets("imagenet-noc") == list(CORRUPTION_SETS["imagenet-noc"])
    assert expand_sets(["noc_rain", "imagenet-noc", "frost", "noc_rain"]) == [
        "noc_rain", "noc_quantization", "noc_blur", "noc_vertical_artifacts", "noc_border",
        "noc_shear", "noc_brightness", "noc_hue", "frost"]
    assert expand_sets(["no_such_thing"]) == ["no_such_thing"]  # checked by the caller


def test_config_expands_sets_in_corruptions():
    config = validate_config({"corruptions": "imagenet-noc"})
    assert config["corruptions"] == list(CORRUPTION_SETS["imagenet-noc"])
    config = validate_config({"corruptions": ["vcr", "imagenet-c"]})
    assert config["corruptions"][:14] == list(CORRUPTION_SETS["vcr"])
    assert len(config["corruptions"]) == 14 + 15 - 8  # eight ImageNet-C corruptions are in vcr


@pytest.mark.skipif(not IMAGENET_SAMPLE.is_dir(), reason="needs ../shared/data")
def test_config_expands_sets_in_overlap_candidates():
    overlap = {"candidates": "imagenet-noc",
               "train": {"source": "imagefolder", "path": str(IMAGENET_SAMPLE)}}
    config = validate_config({"corruptions": "noc-candidates", "overlap": overlap})
    assert config["overlap"]["candidates"] == list(CORRUPTION_SETS["imagenet-noc"])
    generated = [e["name"] for e in config["finetune"]]
    assert generated == ["overlap-standard"] + [
        f"overlap-{c}" for c in CORRUPTION_SETS["imagenet-noc"]]


def test_an_unknown_name_lists_the_sets():
    with pytest.raises(VcrbenchError, match="or a set: vcr, imagenet-c, imagenet-c-extra"):
        validate_config({"corruptions": ["imagenet-x"]})
