"""One epoch loop for fine-tuning and training from scratch: both paths give, bit for bit, the
weights, optimiser state, log rows and checkpoint contents they gave before they shared a loop.

The digests below were recorded with the pre-refactor code at commit 93d2b5c (the two separate
loops, ``vcrbench.training.loop.train_epoch`` and ``vcrbench.training.scratch.train_epoch``),
on the CPU with one thread. A digest covers a whole checkpoint as written (every tensor's dtype,
shape and bytes, every other value's repr, in the dict's order), so any change to the weights,
the optimiser state, the log or the stored keys changes it. They depend on the torch build
(2.x CPU kernels); ``tests/helpers/reference_loops.py`` keeps the two old loops, and the
side-by-side tests compare the shared loop against them on any build. The cases whose views
use a corruption (REVa's, ImageNet's Gaussian noise) were re-recorded when that corruption's
code moved to version 2 (batched on the device, Philox draws), with both loops giving them.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from helpers import reference_loops
from helpers.cifar_files import toy_colour_data, write_two_class_folder

from vcrbench.data.datasets import build_index
from vcrbench.training import loop, scratch
from vcrbench.training.checkpoint import save_checkpoint
from vcrbench.training.scratch import (
    FAST_RECIPE,
    ScratchRecipe,
    ScratchReva,
    load_state,
    new_state,
    save_state,
)
from vcrbench.training.spec import AugMixSettings, RevaSettings, TrainingSpec

CPU = torch.device("cpu")


# ----------------------------------------------------------------------------- digests


def _feed(h: Any, value: Any) -> None:
    if isinstance(value, torch.Tensor):
        t = value.detach().cpu().contiguous()
        h.update(f"T{t.dtype}{tuple(t.shape)}".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    elif isinstance(value, dict):
        h.update(b"{")
        for key, item in value.items():
            h.update(repr(key).encode())
            _feed(h, item)
        h.update(b"}")
    elif isinstance(value, list | tuple):
        h.update(b"[" if isinstance(value, list) else b"(")
        for item in value:
            _feed(h, item)
        h.update(b"]")
    else:
        h.update(repr(value).encode())


def digest(value: Any) -> str:
    """SHA-256 of a checkpoint dict (module docstring)."""
    h = hashlib.sha256()
    _feed(h, value)
    return h.hexdigest()


def _file_digest(path: Path) -> str:
    return digest(torch.load(path, map_location="cpu", weights_only=True))


# ----------------------------------------------------------------------------- fine-tuning


FT_SPEC = TrainingSpec(
    name="ft", base="trained:net", corruption="gaussian_blur", fraction=0.5, spacing="linear",
    epochs=2, batch_size=6, trainable="all", batchnorm="train", lr=0.05, momentum=0.9,
    weight_decay=0.0, nesterov=False, schedule="cosine", step_size=2, gamma=0.1, seed=2,
    crop="pad", crop_padding=4, flip=True,
)
FT_CASES = {
    "standard": FT_SPEC,
    "augmix": dataclasses.replace(
        FT_SPEC, name="ftaug", corruption=None, fraction=0.0, method="augmix",
        augmix=AugMixSettings(severity=3.0), crop="none", flip=False, trainable="last:2",
        batchnorm="frozen", nesterov=True, weight_decay=5e-4, schedule="step", step_size=1),
    "reva": dataclasses.replace(
        FT_SPEC, name="ftreva", corruption=None, fraction=0.0, method="reva",
        augmix=AugMixSettings(severity=3.0),
        reva=RevaSettings(targeted=("gaussian_noise",), severity=3),
        crop="resized", crop_scale=(0.3, 1.0), adversarial_geometry="independent",
        clip_grad_norm=1.0, schedule="constant"),
}
#: Recorded with the pre-refactor code at commit 93d2b5c (module docstring): epoch 1's and
#: epoch 2's checkpoint dicts of each case.
FT_DIGESTS = {
    "standard": ("030c13e4e87cc4f4408c2944ddac2675279f6d3de49baa7a520d0a69e166f1d0",
                 "6c229622c446fe310bb30afad629de1469cd2ee1daac94f71947a3ab4698ee00"),
    "augmix": ("1a6c875b0a9c686e108284ab18c9071bdefd85e682838e99cfd6510f33e35638",
               "49a35e8055af4e02f4010fb625465453d0c243c4c75e7dddd6e67e65a4135623"),
    # re-recorded when Gaussian noise moved to code version 2 (batched, Philox draws: its REVa
    # views changed); the side-by-side test below still checks the shared loop against the old
    # loop on the same views
    "reva": ("9a5b62716be1c0c29053aa6a76a4e6f70d2cbc687a8d445f2068032aaac8d257",
             "f06c1ee721de0b5b0196a30adeb31fc126295f67e29181d5002d8593bebe691e"),
}


@pytest.fixture(scope="module")
def native(tmp_path_factory) -> dict:
    """A trained:net base (fastnet, weights from its seed), 14 training images at 32 px and
    stand-in PGD counterparts aligned with them."""
    root = tmp_path_factory.mktemp("one-loop")
    recipe = ScratchRecipe.from_dict({**FAST_RECIPE, "classes": 10, "seed": 0})
    models = root / "models"
    save_state(new_state(recipe), models / "net" / "model.pt",
               data={"label_space": "cifar10", "side": 32, "name": "net"}, optimizer=False)
    index, _ = build_index("imagefolder", str(write_two_class_folder(root / "train", 7, 0)),
                           classes="cifar10", size="native")
    from vcrbench.data.datasets import load_images

    clean = load_images(index.column("path").to_pylist(), "native")
    adversarial = np.clip(clean.astype(int) + np.random.default_rng(5).integers(
        -8, 9, clean.shape), 0, 255).astype(np.uint8)
    return {"models": str(models), "index": index, "adversarial": adversarial}


def _finetune(train_epoch, spec: TrainingSpec, native: dict) -> list[dict]:
    torch.set_num_threads(1)
    adversarial = native["adversarial"] if spec.method in ("reva", "reva_minus") else None
    checkpoints, previous = [], None
    for epoch in (1, 2):
        previous, row = train_epoch(spec, native["index"], epoch, previous, CPU,
                                    adversarial=adversarial, models_dir=native["models"])
        checkpoints.append({**previous, "row": row})
    return checkpoints


#: The tiny runs' fine-tuning: EfficientNet-Lite0's last two units on 224 px ImageNet images
#: with Gaussian noise on half of each batch (the shared sample's first 12 images outside the
#: 16 human categories), recorded as :data:`FT_DIGESTS`.
IMAGENET_SPEC = TrainingSpec(
    name="tiny", base="efficientnet-lite0", corruption="gaussian_noise", fraction=0.5,
    spacing="linear", epochs=2, batch_size=8, trainable="last:2", batchnorm="frozen", lr=0.01,
    momentum=0.9, weight_decay=0.0, nesterov=False, schedule="constant", step_size=2, gamma=0.1,
    seed=3,
)
#: Re-recorded when Gaussian noise moved to code version 2 (its corrupted half of each batch
#: changed); the old loop gives the same digests (the test runs both).
IMAGENET_DIGESTS = ("9ca95176f2fa55ae908569575743d761595b385b613881b81992840cf4bbb7ef",
                    "d831113a8fdd1496f8f36333cc32eac8d5135aa262edc1448adb4625abe42cbb")


@pytest.fixture(scope="module")
def imagenet(imagenet_sample) -> dict:
    table, _ = build_index("imagefolder", str(imagenet_sample), exclude_categories16=True,
                           limit=12)
    return {"index": table, "models": None, "adversarial": None}


@pytest.mark.shared
def test_fine_tuning_on_imagenet_gives_the_recorded_checkpoints(imagenet: dict) -> None:
    checkpoints = _finetune(loop.train_epoch, IMAGENET_SPEC, imagenet)
    assert tuple(digest(c) for c in checkpoints) == IMAGENET_DIGESTS
    old = _finetune(reference_loops.finetune_epoch, IMAGENET_SPEC, imagenet)
    assert [digest(c) for c in old] == list(IMAGENET_DIGESTS)


@pytest.mark.parametrize("case", sorted(FT_CASES))
def test_fine_tuning_gives_the_recorded_checkpoints(case: str, native: dict) -> None:
    checkpoints = _finetune(loop.train_epoch, FT_CASES[case], native)
    assert tuple(digest(c) for c in checkpoints) == FT_DIGESTS[case]


@pytest.mark.parametrize("case", sorted(FT_CASES))
def test_fine_tuning_equals_the_old_loop(case: str, native: dict) -> None:
    new = _finetune(loop.train_epoch, FT_CASES[case], native)
    old = _finetune(reference_loops.finetune_epoch, FT_CASES[case], native)
    assert [digest(c) for c in new] == [digest(c) for c in old]


def test_a_fine_tuning_checkpoint_file_is_what_it_was(native: dict, tmp_path) -> None:
    from vcrbench.training.checkpoint import final_checkpoint

    first = _finetune(loop.train_epoch, FT_SPEC, native)[0]
    first.pop("row")
    save_checkpoint(first, tmp_path / "epoch-1.pt")
    save_checkpoint(final_checkpoint(first), tmp_path / "checkpoint.pt")
    assert _file_digest(tmp_path / "epoch-1.pt") == FT_DIGESTS_FILES[0]
    assert _file_digest(tmp_path / "checkpoint.pt") == FT_DIGESTS_FILES[1]


#: The epoch-1 checkpoint file and the final model file of the ``standard`` case, as read back.
FT_DIGESTS_FILES = ("9597c31f62f50ae568f205277638409d251ba0026ef3d2ca2c8ee1b52ff8c875",
                    "7ee6a234ffc296967161947ad00b517f6dce87506eb955376a05c9408344a79e")


# ----------------------------------------------------------------------------- from scratch


def _recipe(**changes) -> ScratchRecipe:
    values = dict(architecture="fastnet", classes=3, epochs=2, batch_size=16, lr=0.05)
    return ScratchRecipe(**{**values, **changes})


SCRATCH_CASES = {
    "standard": _recipe(),
    "fast": _recipe(schedule="onecycle", warmup_epochs=1, label_smoothing=0.2, precision="bf16",
                    clip_grad_norm=1.0, batch_size=12, lr=0.2),
    "augmix": _recipe(method="augmix", augmix=AugMixSettings(), seed=4),
    "reva": _recipe(method="reva", augmix=AugMixSettings(),
                    reva=ScratchReva(targeted=("gaussian_noise",)), clip_grad_norm=1.0),
}
#: Recorded with the pre-refactor code at commit 93d2b5c (module docstring): the saved state
#: file after epoch 1 and after epoch 2 of each case, as read back.
SCRATCH_DIGESTS = {
    "standard": ("8e28fa75e37939cdc698e93e5ea6bbd28a27165c3da83063f392b8666ceaf456",
                 "7de05f25262aee3e23c321ad5f413299dcb9bbb1e3167b438eb9fd1d709738da"),
    "fast": ("51d2d20b5c3539c99922c00e6f11457eb9d833f0996e7e6ac5a561e7bfe76794",
             "8be2b13a085c3016411383bdaac29890f1bc988906005f6b9fa2cbc8b3bf228c"),
    "augmix": ("51ff255d2051ddaa4c235cc57a9623a74f928d0e4024ab5fa076b372da393473",
               "b8e1739898f68e6679600d9fc27b0e4736dd9f6f3dd1accc0127fee1110e3cd2"),
    # re-recorded when Gaussian noise moved to code version 2 (its REVa views changed)
    "reva": ("41ad18117f2c2a2308487f6738b0cda33da68997067394305ef5e648d9b7a65a",
             "9689b14b1d5c0d2f4442a06be72748a086fe79d10d2d251b9bb525c10b199ea5"),
}


def _counterparts(images: torch.Tensor) -> torch.Tensor:
    rng = np.random.default_rng(11)
    delta = torch.as_tensor(rng.choice([-8, 8], images.shape[1:]), dtype=torch.int16)
    return (images.to(torch.int16) + delta).clamp(0, 255).to(torch.uint8)


def _train(train_epoch, recipe: ScratchRecipe, folder: Path) -> list[str]:
    """Epoch 1, saved; epoch 2 from the saved state, saved; the two files' digests."""
    torch.set_num_threads(1)
    images, labels = toy_colour_data(40)
    adversarial = _counterparts(images) if recipe.method in ("reva", "reva_minus") else None
    data = {"label_space": "toy", "side": 32, "name": "toy"}
    state = new_state(recipe)
    train_epoch(state, images, labels, adversarial=adversarial)
    save_state(state, folder / "state-1.pt", data=data)
    state = load_state(folder / "state-1.pt", recipe)
    train_epoch(state, images, labels, adversarial=adversarial)
    save_state(state, folder / "state-2.pt", data=data)
    return [_file_digest(folder / f"state-{e}.pt") for e in (1, 2)]


@pytest.mark.parametrize("case", sorted(SCRATCH_CASES))
def test_training_from_scratch_gives_the_recorded_states(case: str, tmp_path) -> None:
    assert tuple(_train(scratch.train_epoch, SCRATCH_CASES[case], tmp_path)) == (
        SCRATCH_DIGESTS[case])


@pytest.mark.parametrize("case", sorted(SCRATCH_CASES))
def test_training_from_scratch_equals_the_old_loop(case: str, tmp_path) -> None:
    (tmp_path / "new").mkdir()
    (tmp_path / "old").mkdir()
    new = _train(scratch.train_epoch, SCRATCH_CASES[case], tmp_path / "new")
    old = _train(reference_loops.scratch_epoch, SCRATCH_CASES[case], tmp_path / "old")
    assert new == old
