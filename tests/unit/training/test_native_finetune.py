"""Fine-tuning at native size (32 px CIFAR, a base trained here): the augmentation's draws and
REVa's corruption operations at the image side against the evaluation's scaling, a fine-tuning
epoch of a ``trained:`` base on 32 px images (deterministic, learns, at the index's size, the
loss over the data set's classes), the fine-tuned model in the registry, PGD counterparts at
32 px, and the config's refusals before any job."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers.cifar_files import cifar_run_config, write_cifar10, write_two_class_folder
from helpers.config_checks import refused

from vcrbench.config import evaluated_models, validate_config
from vcrbench.core.seeding import EPOCH_NOISE, EPOCH_PARAMETERS, seed_of
from vcrbench.corruptions import corrupt_uint8, get_corruption
from vcrbench.corruptions.sampling import sample_parameters, scale_point
from vcrbench.corruptions.sets import CORRUPTION_SETS
from vcrbench.data.datasets import build_index
from vcrbench.models import load_model
from vcrbench.training.adversarial import counterpart_table
from vcrbench.training.augmentation import CorruptionAugmentation, augmentation_draws
from vcrbench.training.augmix import CorruptionOp
from vcrbench.training.checkpoint import final_checkpoint, save_checkpoint
from vcrbench.training.loop import train_epoch
from vcrbench.training.scratch import FAST_RECIPE, ScratchRecipe, new_state, save_state
from vcrbench.training.spec import PgdSettings, TrainingSpec

CPU = torch.device("cpu")
SPEC = TrainingSpec(
    name="native", base="trained:net", corruption="gaussian_blur", fraction=0.5,
    spacing="linear", epochs=3, batch_size=8, trainable="all", batchnorm="train", lr=0.05,
    momentum=0.9, weight_decay=0.0, nesterov=False, schedule="constant", step_size=2, gamma=0.1,
    seed=2, crop="pad", crop_padding=4, flip=True,
)


# ----------------------------------------------------------------------------- draws at 32 px


@pytest.mark.parametrize("corruption", ["gaussian_blur", "glass_blur", "motion_blur",
                                        "defocus_blur", "gaussian_noise"])
def test_augmentation_draws_at_32_px_are_the_224_px_draws_scaled(corruption: str) -> None:
    spec = dataclasses.replace(SPEC, corruption=corruption)
    positions = range(3, 40)
    params, seeds = augmentation_draws(spec, 2, positions, side=32)
    # independently: each point drawn from its keyed generator as for 224 px, then scaled as
    # the evaluation's samples are
    reference = [scale_point(corruption, sample_parameters(
        corruption, np.random.default_rng(spec.key(2, EPOCH_PARAMETERS, p)), "linear"), 32)
        for p in positions]
    for name in get_corruption(corruption).parameters:
        assert params[name].tolist() == [point[name] for point in reference]
    assert seeds == [seed_of(spec.key(2, EPOCH_NOISE, p)) for p in positions]
    at_224, seeds_224 = augmentation_draws(spec, 2, positions)
    assert seeds_224 == seeds
    moved = [p for p in get_corruption(corruption).pixel_parameters
             if not np.array_equal(at_224[p], params[p])]
    assert sorted(moved) == sorted(get_corruption(corruption).pixel_parameters)


def test_the_corruption_augmentation_corrupts_32_px_images_with_the_scaled_draws() -> None:
    images = np.random.default_rng(0).integers(0, 256, (6, 32, 32, 3), dtype=np.uint8)
    views = CorruptionAugmentation(SPEC)(images.copy(), 1, range(10, 16), CPU)
    params, seeds = augmentation_draws(SPEC, 1, range(10, 13), side=32)
    expected = corrupt_uint8("gaussian_blur", images[:3], params, seeds, CPU)
    assert np.array_equal(views.images["input"][:3], expected)
    assert np.array_equal(views.images["input"][3:], images[3:])
    assert views.corrupted.tolist() == [True] * 3 + [False] * 3


def test_reva_corruption_ops_at_32_px() -> None:
    spec = get_corruption("gaussian_blur")
    point = {p: spec.identity[p] + 0.6 * (spec.strongest[p] - spec.identity[p])
             for p in spec.parameters}
    assert dict(CorruptionOp.at("gaussian_blur", None, 0.6, side=32).params) == scale_point(
        spec, point, 32)
    assert dict(CorruptionOp.at("gaussian_blur", None, 0.6).params) == point
    assert dict(CorruptionOp.at("gaussian_blur", 2, side=32).params) != dict(
        CorruptionOp.at("gaussian_blur", 2).params)  # CIFAR-10-C's constants


@pytest.mark.parametrize("corruption", CORRUPTION_SETS["imagenet-noc"])
def test_noc_benchmark_corruptions_run_at_32_px(corruption: str) -> None:
    """ImageNet-NOC's lengths are px of a 224 px side and scale inside the corruption: drawn as
    a 32 px run draws them, they give 32 px images and change most of them."""
    from vcrbench.corruptions.sampling import uniform_samples

    images = np.random.default_rng(1).integers(40, 216, (12, 32, 32, 3), dtype=np.uint8)
    points = uniform_samples(corruption, 0, range(12), "visual", side=32)
    params = {p: np.array([pt[p] for pt in points]) for p in get_corruption(corruption).parameters}
    out = corrupt_uint8(corruption, images, params, list(range(12)), CPU)
    assert out.shape == images.shape and out.dtype == np.uint8
    changed = (out != images).reshape(12, -1).any(axis=1)
    assert changed.mean() >= 0.5, changed


# ----------------------------------------------------------------------------- an epoch at 32 px


@pytest.fixture(scope="module")
def native(tmp_path_factory) -> dict:
    """A trained:-format base (fastnet, weights from its seed), a 32 px training index and its
    models folder."""
    root = tmp_path_factory.mktemp("native")
    recipe = ScratchRecipe.from_dict({**FAST_RECIPE, "classes": 10, "seed": 0})
    models = root / "models"
    save_state(new_state(recipe), models / "net" / "model.pt",
               data={"label_space": "cifar10", "side": 32, "name": "net"}, optimizer=False)
    train = write_two_class_folder(root / "train", 8, 0)
    index, _ = build_index("imagefolder", str(train), classes="cifar10", size="native")
    return {"root": root, "models": str(models), "index": index}


class _Recording:
    """The spec's corruption augmentation, recording the shape of every batch it sees."""

    def __init__(self, spec: TrainingSpec) -> None:
        self.inner, self.shapes = CorruptionAugmentation(spec), []

    def __call__(self, images, epoch, positions, device):
        self.shapes.append(images.shape)
        return self.inner(images, epoch, positions, device)


def test_a_fine_tuning_epoch_of_a_trained_base_at_32_px(native: dict) -> None:
    torch.set_num_threads(1)
    recording = _Recording(SPEC)
    first, row = train_epoch(SPEC, native["index"], 1, None, CPU, augmentation=recording,
                             models_dir=native["models"])
    assert {shape[1:] for shape in recording.shapes} == {(32, 32, 3)}  # the index's size
    assert row["n_images"] == 16 and row["n_corrupted"] == 8  # half of each batch of 8
    again, row_again = train_epoch(SPEC, native["index"], 1, None, CPU,
                                   models_dir=native["models"])
    assert row_again == row
    assert all(torch.equal(first["state_dict"][k], again["state_dict"][k])
               for k in first["state_dict"])
    base = load_model("trained:net", models_dir=native["models"]).module.state_dict()
    assert any(not torch.equal(base[k], first["state_dict"][k]) for k in base)
    linear = [v for v in first["state_dict"].values() if v.ndim == 2]
    assert linear[-1].shape[0] == 10  # the classifier of CIFAR-10's classes


def test_fine_tuning_a_trained_base_learns_and_loads_as_a_model(native: dict) -> None:
    torch.set_num_threads(1)
    # enough steps (2 an epoch) for the batch-norm running statistics to follow the images
    clean = dataclasses.replace(SPEC, corruption=None, fraction=0.0, epochs=10)
    checkpoint, rows = None, []
    for epoch in range(1, 11):
        checkpoint, row = train_epoch(clean, native["index"], epoch, checkpoint, CPU,
                                      models_dir=native["models"])
        rows.append(row)
    assert rows[-1]["loss"] < 0.5 * rows[0]["loss"], rows
    assert rows[-1]["accuracy"] == 1.0, rows
    path = Path(native["root"]) / "models" / "ft" / "checkpoint.pt"
    save_checkpoint(final_checkpoint(checkpoint), path)
    model = load_model("finetuned:ft", models_dir=native["models"])
    assert model.classes == 10 and model.preprocessing.input_size == 32
    test = write_two_class_folder(Path(native["root"]) / "test", 4, 100)
    index, _ = build_index("imagefolder", str(test), classes="cifar10", size="native")
    from vcrbench.data.datasets import load_images

    images = torch.from_numpy(load_images(index.column("path").to_pylist(), "native"))
    with torch.no_grad():
        x = images.permute(0, 3, 1, 2).float().div(255)
        top1 = model.module(model.preprocessing(x)).argmax(1).numpy()
    assert top1.tolist() == index.column("label").to_pylist()


def test_pgd_counterparts_of_a_native_index_are_32_px(native: dict) -> None:
    model = load_model("trained:net", models_dir=native["models"])
    settings = PgdSettings(eps=8 / 255, alpha=2 / 255, steps=2)
    table = counterpart_table(native["index"].slice(0, 3), model, settings, seed=0)
    assert table.column("height").to_pylist() == [32] * 3
    assert max(table.column("linf").to_pylist()) <= 8


# ----------------------------------------------------------------------------- config


def _config(root: Path, **changes) -> dict:
    """CIFAR-10's test split at 32 px, fastnet trained on its training split, and an entry
    fine-tuning it with Gaussian noise on the training split."""
    data = {"source": "cifar10", "path": str(root), "size": "native", "split": "train"}
    return cifar_run_config(root, **{
        "finetune": [{"name": "ft", "base": "trained:net", "train": data,
                      "augmentation": {"corruption": "gaussian_noise"}}],
        "corruptions": ["gaussian_noise", "noc_blur"], **changes})


@pytest.fixture
def root(tmp_path: Path) -> Path:
    write_cifar10(tmp_path)
    return tmp_path


def test_a_native_run_with_fine_tuning_and_the_overlap_report_validates(root: Path) -> None:
    overlap = {"candidates": ["gaussian_noise", "noc_blur"], "base": "trained:net",
               "train": {"source": "cifar10", "path": str(root), "split": "train",
                         "size": "native"}}
    config = validate_config(_config(root, overlap=overlap))
    assert evaluated_models(config) == [
        "trained:net", "finetuned:ft", "finetuned:overlap-standard",
        "finetuned:overlap-gaussian_noise", "finetuned:overlap-noc_blur"]
    generated = [e for e in config["finetune"] if e["name"].startswith("overlap-")]
    assert {e["base"] for e in generated} == {"trained:net"}
    spec = TrainingSpec.from_config(config["finetune"][0], config["seed"])
    assert (spec.crop, spec.crop_padding, spec.flip) == ("pad", 4, True)  # CIFAR's for auto
    assert "crop" in spec.as_dict()


@pytest.mark.parametrize(
    ("change", "fragments"),
    [
        ({"base": "efficientnet-lite0"},
         ("finetune[0] (ft).base 'efficientnet-lite0' is not a model trained here",
          "cifar10 at size native (32 px)", "base: trained:<name>", "entries: net")),
        ({"base": "trained:nope"}, ("base 'trained:nope' names no train entry (entries: net)",)),
        ({"base": "trained:model.pt"}, ("names no train entry", "checkpoint path")),
        ({"train": {"split": "test"}}, ("finetune[0].train shares 4 images with the run's "
                                        "dataset", "training split")),
        ({"train": {"size": 224}}, ("finetune[0].train has 224 px images but trained:net takes "
                                    "the run's 32 px", "size: native")),
    ],
)
def test_bad_fine_tuning_entries_on_cifar_are_refused(root: Path, change: dict,
                                                      fragments: tuple) -> None:
    config = _config(root)
    entry = config["finetune"][0]
    for key, value in change.items():
        entry[key] = {**entry[key], **value} if isinstance(value, dict) else value
    refused(config, *fragments)


def test_fine_tuning_on_another_label_space_is_refused(root: Path) -> None:
    from helpers.cifar_files import write_cifar100

    write_cifar100(root)
    config = _config(root)
    config["finetune"][0]["train"] = {"source": "cifar100", "path": str(root), "split": "train",
                                      "size": "native"}
    refused(config, "finetune[0].train has cifar100 labels (100 classes)", "cifar10 labels (10)")


@pytest.mark.parametrize(
    ("overlap", "fragments"),
    [
        ({}, ("overlap.base is 'efficientnet-lite0', a model of ImageNet's 1000 classes",
              "trained:<name>", "train entries: net")),
        ({"base": "trained:net", "baseline": "torchvision:alexnet"},
         ("overlap.baseline is 'torchvision:alexnet'", "AlexNet, an ImageNet model",
          "overlap.baseline: trained:<name>")),
        ({"base": "trained:other"}, ("overlap.base 'trained:other' names no train entry",)),
        ({"base": "trained:net", "classes": 16}, ("overlap.classes is 16", "classes: 1000")),
    ],
)
def test_bad_overlap_reports_on_cifar_are_refused(root: Path, overlap: dict,
                                                  fragments: tuple) -> None:
    train = {"source": "cifar10", "path": str(root), "split": "train", "size": "native"}
    config = _config(root, finetune=[], overlap={
        "candidates": ["gaussian_noise", "noc_blur"], "train": train, **overlap})
    refused(config, *fragments)
