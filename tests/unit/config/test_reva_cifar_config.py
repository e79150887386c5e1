"""REVa part 1 on CIFAR at 32 px (docs/reva.md, "On CIFAR-10"): a train entry's training images
as the pool (reva.from_train), and every refusal before any job: a name that is no train entry,
two pool sources, fine-tuned methods or pools where fine-tuning is not built, 16-class groups
without 16 classes, a pool that shares files with the evaluation images."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from helpers.cifar_files import write_cifar10
from helpers.config_checks import refused

from vcrbench.config import evaluated_models, validate_config
from vcrbench.errors import VcrbenchError
from vcrbench.reva.config import (
    POOL_ID_PREFIX,
    check_pool_index,
    distinct_pool_ids,
    first_per_class,
    reva_plan,
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    write_cifar10(tmp_path)  # 15 training and 4 test images in the real pickle format
    return tmp_path


def _config(root: Path, **reva) -> dict:
    """CIFAR-10's test split at 32 px, fastnet trained on its training split, REVa over it."""
    data = {"source": "cifar10", "path": str(root), "size": "native"}
    return {
        "dataset": {**data, "split": "test"},
        "train": [{"name": "net", "architecture": "fastnet", "preset": "fast",
                   "data": {**data, "split": "train"}}],
        "models": ["trained:net"],
        "corruptions": ["gaussian_noise"],
        "reva": {"enabled": True, "from_train": "net", **reva},
    }


def test_from_train_is_off_by_default():
    assert validate_config({})["reva"]["from_train"] is None


def test_reva_part_1_on_cifar_plans_the_train_entrys_images_as_the_pool(root):
    config = validate_config(_config(root))
    plan = reva_plan(config)
    assert plan.pool == "training" and plan.pool_source == "trained:net"
    assert (plan.pool_size, plan.evaluation_size, plan.weak_size) == (15, 4, 4)
    assert plan.ranking_model == "trained:net"
    assert plan.pool_label() == "training (train entry net)"
    assert evaluated_models(config) == ["trained:net"]
    # the validation attacks keep torchattacks' defaults on CIFAR (the paper, Sec. 4.2)
    assert plan.attacks["pgd"] == {"eps": pytest.approx(8 / 255), "alpha": pytest.approx(2 / 255),
                                   "steps": 10, "random_start": True}


def test_pool_per_class_takes_the_first_images_of_each_class(root):
    from vcrbench.data.datasets import list_entries_from_config

    config = validate_config(_config(root, pool_per_class=1, weak={"size": 2}))
    labels = [e.label for e in list_entries_from_config(config["train"][0]["data"])]
    assert reva_plan(config).pool_size == len(set(labels)) < len(labels)
    assert first_per_class([3, 1, 3, 3, 1, 2], 2) == [0, 1, 2, 4, 5]
    assert first_per_class([3, 1], None) == [0, 1]


def test_pool_per_class_without_from_train_isrefused(root):
    refused(_config(root, from_train=None, pool_per_class=5), "reva.pool_per_class is 5",
             "reva.from_train is not set")


def test_from_train_naming_no_train_entry_isrefused(root):
    refused(_config(root, from_train="nope"), "reva.from_train 'nope' is not a train entry",
             "entries: net")


def test_from_train_and_from_finetune_together_arerefused(root):
    refused(_config(root, from_finetune="net"), "reva.from_finetune is set",
             "reva.from_train: <name>")


def test_from_train_and_from_finetune_together_are_refused_at_224_px(root, tmp_path):
    """(Where fine-tuning is built: an ImageNet-labelled evaluation folder at 224 px.)"""
    from PIL import Image

    (tmp_path / "imagenet" / "n01440764").mkdir(parents=True)
    Image.new("RGB", (64, 64), (90, 120, 30)).save(tmp_path / "imagenet" / "n01440764" / "a.JPEG")
    config = _config(root, from_finetune="ft")
    config["dataset"] = {"source": "imagefolder", "path": str(tmp_path / "imagenet")}
    config["models"] = ["efficientnet-lite0"]
    refused(config, "reva.from_train ('net') and reva.from_finetune ('ft') both name the pool",
             "keep one")


def test_from_train_with_an_evaluation_pool_isrefused(root):
    refused(_config(root, pool="evaluation"), "reva.from_train is 'net'",
             "reva.pool is evaluation")


def test_a_weak_set_larger_than_the_train_entrys_images_isrefused(root):
    refused(_config(root, weak={"size": 16}), "reva.weak.size is 16",
             "pool (trained:net) has only 15 images")


def test_a_train_entry_on_the_evaluation_images_is_refused_as_a_shared_pool(root):
    config = _config(root)
    config["train"][0]["data"]["split"] = "test"
    refused(config, "reva.disjoint is true", "shares 4 images")


def test_fine_tuned_pools_and_methods_are_refused_on_cifar(root):
    refused(_config(root, from_train=None, from_finetune="net"), "reva.from_finetune",
             "reva.from_train")
    comparison = {"methods": {"Standard": "trained:net", "REVa": "finetuned:reva"},
                  "baselines": ["Standard"], "transfer_from": "Standard"}
    refused(_config(root, comparison=comparison), "reva.comparison.methods",
             "'REVa': 'finetuned:reva'", "trained:<name>")


def test_sixteen_class_groups_are_refused_on_cifar_labels(root):
    refused(_config(root, weak={"group_by": "category16"}), "reva.weak.group_by is category16",
             "cifar10 labels")


def test_pyramid_vif_with_reva_at_native_size_isrefused(root):
    config = _config(root)
    config["scoring"] = {"small_images": "pyramid"}
    refused(config, "scoring.small_images is pyramid", "reva.enabled")


def test_an_imagenet_model_for_the_ranking_is_refused_on_cifar(root):
    refused(_config(root, model="efficientnet-lite0"), "efficientnet-lite0",
             "cifar10 labels")


def _index(ids: list[str], folder: str) -> pa.Table:
    table = pa.table({"image_id": pa.array(ids, pa.string()),
                      "path": pa.array([f"{folder}/{i}.jpg" for i in ids], pa.string()),
                      "label": pa.array([0] * len(ids), pa.int16())})
    return table.replace_schema_metadata({b"vcrbench.image_size": b"native",
                                          b"vcrbench.image_side": b"32"})


def test_pool_ids_that_repeat_evaluation_ids_get_a_prefix_and_keep_the_metadata():
    evaluation = _index(["cat/0000", "dog/0000"], "test")
    pool = _index(["cat/0000", "cat/0001"], "train")
    distinct = distinct_pool_ids(pool, evaluation)
    assert distinct.column("image_id").to_pylist() == [f"{POOL_ID_PREFIX}cat/0000",
                                                       f"{POOL_ID_PREFIX}cat/0001"]
    assert distinct.column("path").to_pylist() == pool.column("path").to_pylist()
    assert distinct.schema.metadata == pool.schema.metadata
    assert distinct.schema == pool.schema
    check_pool_index(distinct, evaluation, disjoint=True)  # ids apart, files apart
    # ids that are already apart stay as they are (CIFAR's pickles: train-00000, test-00000)
    apart = _index(["train-00000"], "train")
    assert distinct_pool_ids(apart, _index(["test-00000"], "test")) is apart


def test_a_pool_sharing_a_file_with_the_evaluation_images_is_refused_at_its_job():
    evaluation = _index(["cat/0000"], "test")
    pool = distinct_pool_ids(_index(["cat/0000"], "test"), evaluation)
    with pytest.raises(VcrbenchError, match="reva.disjoint: the pool shares 1 images"):
        check_pool_index(pool, evaluation, disjoint=True)
