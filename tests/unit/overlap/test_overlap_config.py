"""The overlap section: the one mapping from role to model that the config checks and the rules
share, the generated fine-tuning entries, and the checks."""

from __future__ import annotations

import pytest

from vcrbench.config import evaluated_models, validate_config
from vcrbench.errors import VcrbenchError
from vcrbench.overlap.config import (
    baseline,
    overlap_finetune_entries,
    report_models,
    roles,
)

TRAIN = {"source": "imagefolder", "path": "."}


def _overlap(**changes) -> dict:
    base = {"candidates": ["gaussian_noise", "brightness"], "base": "efficientnet-lite0",
            "standard": "finetuned", "baseline": None, "train": TRAIN, "finetune": {}}
    return {**base, **changes}


def test_roles_with_a_fine_tuned_standard_model():
    overlap = _overlap()
    assert roles(overlap) == {
        "standard": "finetuned:overlap-standard",
        "gaussian_noise": "finetuned:overlap-gaussian_noise",
        "brightness": "finetuned:overlap-brightness",
    }
    assert baseline(overlap) == "efficientnet-lite0"  # the base, without a baseline
    assert report_models(overlap) == [*roles(overlap).values(), "efficientnet-lite0"]
    entries = overlap_finetune_entries(overlap)
    assert [e["name"] for e in entries] == ["overlap-standard", "overlap-gaussian_noise",
                                            "overlap-brightness"]
    assert [e["augmentation"]["corruption"] for e in entries] == [None, "gaussian_noise",
                                                                  "brightness"]


def test_roles_with_the_base_as_standard_and_a_baseline():
    overlap = _overlap(standard="base", baseline="efficientnet-lite1")
    assert roles(overlap)["standard"] == "efficientnet-lite0"
    assert baseline(overlap) == "efficientnet-lite1"
    assert [e["name"] for e in overlap_finetune_entries(overlap)] == [
        "overlap-gaussian_noise", "overlap-brightness"]
    assert report_models(overlap) == ["efficientnet-lite0", "finetuned:overlap-gaussian_noise",
                                      "finetuned:overlap-brightness", "efficientnet-lite1"]


def test_no_candidates_means_no_roles_and_no_entries():
    overlap = _overlap(candidates=[])
    assert roles(overlap) == {} and report_models(overlap) == []
    assert overlap_finetune_entries(overlap) == []


def test_the_validated_config_evaluates_every_role_model(tmp_path):
    config = validate_config({
        "corruptions": ["gaussian_noise", "brightness"],
        "overlap": {"candidates": ["gaussian_noise", "brightness"], "standard": "base",
                    "baseline": "efficientnet-lite1",
                    "train": {"source": "imagefolder", "path": str(tmp_path)}},
    })
    assert set(report_models(config["overlap"])) <= set(evaluated_models(config))
    assert [e["name"] for e in config["finetune"]] == ["overlap-gaussian_noise",
                                                       "overlap-brightness"]


def test_the_template_may_not_set_what_the_report_sets():
    with pytest.raises(VcrbenchError, match="overlap.finetune.base"):
        overlap_finetune_entries(_overlap(finetune={"base": "efficientnet-lite1"}))
    with pytest.raises(VcrbenchError, match="augmentation.corruption"):
        overlap_finetune_entries(_overlap(finetune={"augmentation": {"corruption": "frost"}}))
