"""Fine-tuning: what learns, keyed draws, reproducible and resumable epochs, the overlap refusal,
fine-tuned models in the registry, and the retraining table."""

from __future__ import annotations

import dataclasses

import numpy as np
import pyarrow as pa
import pytest
import torch

from vcrbench.data.datasets import build_index
from vcrbench.errors import VcrbenchError
from vcrbench.models import load_model, predict
from vcrbench.models.finetuned import read_checkpoint
from vcrbench.training.augmentation import CorruptionAugmentation, corrupted_count
from vcrbench.training.checkpoint import final_checkpoint, save_checkpoint
from vcrbench.training.data import check_training_index
from vcrbench.training.layers import model_units, trainable_unit_names
from vcrbench.training.loop import LOG_SCHEMA, epoch_batches, train_epoch, training_log
from vcrbench.training.losses import cross_entropy
from vcrbench.training.spec import TrainingSpec, learning_rate
from vcrbench.training.views import INPUT, Views

SPEC = TrainingSpec(
    name="tiny", base="efficientnet-lite0", corruption="gaussian_noise", fraction=0.5,
    spacing="linear", epochs=2, batch_size=8, trainable="last:2", batchnorm="frozen", lr=0.01,
    momentum=0.9, weight_decay=0.0, nesterov=False, schedule="constant", step_size=2, gamma=0.1,
    seed=3,
)
CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def train_index(imagenet_sample):
    """16 labelled images outside the 16 human categories."""
    table, _ = build_index("imagefolder", str(imagenet_sample), exclude_categories16=True,
                           limit=16)
    return table


@pytest.fixture(scope="module")
def two_epochs(train_index):
    """Epochs 1 and 2 trained in one go (checkpoints and log rows)."""
    torch.set_num_threads(1)
    first, row1 = train_epoch(SPEC, train_index, 1, None, CPU)
    second, row2 = train_epoch(SPEC, train_index, 2, first, CPU)
    return first, second, [row1, row2]


def _equal_states(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


# ----------------------------------------------------------------------------- what learns


def test_units_of_efficientnet_lite0_and_what_each_setting_trains():
    module = load_model("efficientnet-lite0").module
    names = [name for name, _ in model_units(module)]
    assert names[:3] == ["_conv_stem", "_bn0", "_blocks.0"]
    assert names[-4:] == ["_blocks.15", "_conv_head", "_bn1", "_fc"]
    assert len(names) == 21
    assert trainable_unit_names(module, "classifier") == ["_fc"]
    assert trainable_unit_names(module, "last:4") == ["_blocks.15", "_conv_head", "_bn1", "_fc"]
    assert trainable_unit_names(module, "all") == names
    with pytest.raises(VcrbenchError, match="last:1 to last:21"):
        trainable_unit_names(module, "last:22")


def test_units_count_blocks_of_a_sequential_one_by_one():
    model = torch.nn.Sequential()
    model.add_module("stem", torch.nn.Conv2d(3, 4, 3))
    model.add_module("stage", torch.nn.Sequential(torch.nn.Conv2d(4, 4, 3), torch.nn.ReLU(),
                                                  torch.nn.Conv2d(4, 4, 3)))
    model.add_module("pool", torch.nn.AdaptiveAvgPool2d(1))
    model.add_module("head", torch.nn.Linear(4, 10))
    wrapper = torch.nn.Module()
    wrapper.body = model
    wrapper.fc = torch.nn.Linear(10, 10)
    # the wrapper's children: body (a Sequential, counted child by child) and fc
    names = [name for name, _ in model_units(wrapper)]
    assert names == ["body.stem", "body.stage", "body.head", "fc"]


def test_learning_rate_schedules():
    assert learning_rate(SPEC, 1) == learning_rate(SPEC, 2) == 0.01
    cosine = dataclasses.replace(SPEC, schedule="cosine", epochs=4)
    assert [round(learning_rate(cosine, e), 6) for e in (1, 2, 3, 4)] == [
        0.01, round(0.01 * (1 + np.cos(np.pi / 4)) / 2, 6), 0.005,
        round(0.01 * (1 + np.cos(3 * np.pi / 4)) / 2, 6)]
    step = dataclasses.replace(SPEC, schedule="step", step_size=2, gamma=0.5)
    assert [learning_rate(step, e) for e in (1, 2, 3, 5)] == [0.01, 0.01, 0.005, 0.0025]


def test_corrupted_count_rounds_half_up():
    assert [corrupted_count(b, 0.5) for b in (1, 2, 7, 8)] == [1, 1, 4, 4]
    assert corrupted_count(8, 0.0) == 0 and corrupted_count(8, 1.0) == 8


def test_epoch_batches_are_a_keyed_permutation():
    first = np.concatenate(epoch_batches(37, SPEC, 1))
    assert sorted(first.tolist()) == list(range(37))
    assert [len(b) for b in epoch_batches(37, SPEC, 1)] == [8, 8, 8, 8, 5]
    assert np.array_equal(first, np.concatenate(epoch_batches(37, SPEC, 1)))
    assert not np.array_equal(first, np.concatenate(epoch_batches(37, SPEC, 2)))
    other = dataclasses.replace(SPEC, name="other")
    assert not np.array_equal(first, np.concatenate(epoch_batches(37, other, 1)))


# ----------------------------------------------------------------------------- training


def test_training_changes_only_the_trainable_weights(two_epochs):
    _, second, _ = two_epochs
    base = load_model("efficientnet-lite0").module.state_dict()
    changed = {k for k in base if not torch.equal(base[k], second["state_dict"][k])}
    assert changed == {"_bn1.weight", "_bn1.bias", "_fc.weight", "_fc.bias"}
    # frozen batch norm: the head's running statistics are untouched
    assert torch.equal(base["_bn1.running_mean"], second["state_dict"]["_bn1.running_mean"])


def test_training_log_rows(two_epochs):
    _, _, rows = two_epochs
    table = training_log(rows)
    assert table.schema.equals(LOG_SCHEMA)
    assert table.column("epoch").to_pylist() == [1, 2]
    assert table.column("n_images").to_pylist() == [16, 16]
    assert table.column("n_corrupted").to_pylist() == [8, 8]
    for row in rows:
        assert row["loss"] == pytest.approx((row["loss_clean"] + row["loss_corrupted"]) / 2)
        assert 0 <= row["accuracy"] <= 1 and row["loss"] > 0


def test_training_is_reproducible_from_the_seed(train_index, two_epochs):
    first, _, rows = two_epochs
    again, row = train_epoch(SPEC, train_index, 1, None, CPU)
    assert _equal_states(first["state_dict"], again["state_dict"])
    assert row == rows[0]
    reseeded, _ = train_epoch(dataclasses.replace(SPEC, seed=4), train_index, 1, None, CPU)
    assert not _equal_states(first["state_dict"], reseeded["state_dict"])


def test_an_epoch_resumed_from_its_saved_checkpoint_equals_the_uninterrupted_one(
    train_index, two_epochs, tmp_path
):
    first, second, rows = two_epochs
    path = tmp_path / "epoch-1.pt"
    save_checkpoint(first, path)
    resumed, row = train_epoch(SPEC, train_index, 2, read_checkpoint(path), CPU)
    assert _equal_states(second["state_dict"], resumed["state_dict"])
    assert row == rows[1]


def test_a_checkpoint_of_other_settings_is_refused(train_index, two_epochs):
    first, _, _ = two_epochs
    with pytest.raises(VcrbenchError, match="other settings"):
        train_epoch(dataclasses.replace(SPEC, lr=0.1), train_index, 2, first, CPU)


def test_finetuned_model_loads_by_name_and_predicts(two_epochs, tmp_path, monkeypatch):
    _, second, _ = two_epochs
    folder = tmp_path / "models" / "tiny"
    folder.mkdir(parents=True)
    save_checkpoint(final_checkpoint(second), folder / "checkpoint.pt")
    assert "optimizer" not in read_checkpoint(folder / "checkpoint.pt")
    model = load_model("finetuned:tiny", models_dir=tmp_path / "models")
    assert _equal_states(model.module.state_dict(), second["state_dict"])
    assert "fine-tuned for 2 epochs" in model.description
    images = np.random.default_rng(0).integers(0, 256, (2, 224, 224, 3), dtype=np.uint8)
    assert predict(model, images)["top1"].shape == (2,)
    monkeypatch.setenv("VCRBENCH_MODELS_DIR", str(tmp_path / "models"))
    assert load_model("finetuned:tiny").description == model.description
    by_path = load_model(f"finetuned:{folder / 'checkpoint.pt'}")
    assert _equal_states(by_path.module.state_dict(), second["state_dict"])


def test_missing_or_foreign_checkpoints_are_clear_errors(tmp_path):
    with pytest.raises(VcrbenchError, match="no checkpoint at"):
        load_model("finetuned:absent", models_dir=tmp_path)
    bad = tmp_path / "bad" / "checkpoint.pt"
    bad.parent.mkdir()
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(VcrbenchError, match="not a readable vcrbench checkpoint"):
        load_model("finetuned:bad", models_dir=tmp_path)
    torch.save({"state_dict": {}}, bad)
    with pytest.raises(VcrbenchError, match="not a vcrbench fine-tuned checkpoint"):
        load_model("finetuned:bad", models_dir=tmp_path)


# ----------------------------------------------------------------------------- data checks


def _index(ids: list[str], labels: list[int], paths: list[str] | None = None) -> pa.Table:
    return pa.table({"image_id": ids, "path": paths or [f"/data/{i}.jpg" for i in ids],
                     "label": pa.array(labels, pa.int16())})


def test_training_set_sharing_an_image_with_the_evaluation_set_is_refused():
    evaluation = _index(["a", "b"], [1, 2])
    check_training_index(_index(["c", "d"], [3, 4]), evaluation, "x")
    with pytest.raises(VcrbenchError, match="overlap the evaluation images .1 shared image ids"):
        check_training_index(_index(["b", "c"], [2, 3], ["/t/b.jpg", "/t/c.jpg"]), evaluation,
                             "x")
    with pytest.raises(VcrbenchError, match="0 shared image ids, 1 shared files"):
        check_training_index(_index(["z"], [3], ["/data/a.jpg"]), evaluation, "x")


def test_unlabelled_training_images_are_refused():
    with pytest.raises(VcrbenchError,
                       match="1 of 2 training images have no label .*WNID subfolders"):
        check_training_index(_index(["c", "d"], [3, -1]), _index(["a"], [1]), "x")


def test_the_shared_sample_splits_into_disjoint_category_sets(imagenet_sample, train_index):
    evaluation, _ = build_index("imagefolder", str(imagenet_sample), categories16_only=True)
    training, _ = build_index("imagefolder", str(imagenet_sample), exclude_categories16=True)
    assert evaluation.num_rows + training.num_rows == 1000
    check_training_index(training, evaluation, "split")


# ----------------------------------------------------------------------------- pluggable parts


def test_the_defaults_are_the_corruption_augmentation_and_cross_entropy(train_index, two_epochs):
    """Passing the default augmentation and loss explicitly trains the same weights."""
    torch.set_num_threads(1)
    explicit, row = train_epoch(SPEC, train_index, 1, None, CPU,
                                augmentation=CorruptionAugmentation(SPEC), loss=cross_entropy)
    assert _equal_states(explicit["state_dict"], two_epochs[0]["state_dict"])
    assert row == two_epochs[2][0]


def test_an_augmentation_with_two_views_and_its_own_loss_plug_into_the_loop(train_index):
    """A method with several views per image (as REVa's AugMix + adversarial counterparts)
    needs no second loop: every view goes through the model and the loss sees them by name."""
    seen = []

    def flip_view(images, epoch, positions, device):
        assert len(positions) == len(images)
        return Views({INPUT: images, "flipped": images[:, :, ::-1].copy()},
                     np.zeros(len(images), bool))

    def consistency_loss(logits, target):
        assert logits["flipped"].shape == logits[INPUT].shape == (len(target), 1000)
        p, q = logits[INPUT].softmax(1), logits["flipped"].softmax(1)
        total = cross_entropy(logits, target) + (p - q).abs().sum(1)
        seen.append((sorted(logits), (p - q).abs().sum(1).detach(), total.detach()))
        return total

    torch.set_num_threads(1)
    spec = dataclasses.replace(SPEC, corruption=None, fraction=0.0)
    plain, _ = train_epoch(spec, train_index, 1, None, CPU)
    mine, row = train_epoch(spec, train_index, 1, None, CPU, augmentation=flip_view,
                            loss=consistency_loss)
    assert [views for views, _, _ in seen] == [["flipped", INPUT]] * 2  # 16 images, batches of 8
    assert all(bool((extra > 0).all()) for _, extra, _ in seen)  # real images are not symmetric
    logged = float(sum(total.double().sum() for _, _, total in seen)) / 16
    assert row["loss"] == pytest.approx(logged, rel=1e-12)  # the log reports the loss used
    assert row["n_images"] == 16 and row["n_corrupted"] == 0 and row["loss_corrupted"] is None
    assert not _equal_states(mine["state_dict"], plain["state_dict"])
