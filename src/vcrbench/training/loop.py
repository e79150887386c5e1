"""One epoch of fine-tuning (VCR paper §4.3, supplementary §8.10; NOC paper §3.2), one call per
epoch so that the workflow caches and resumes per epoch; the augmentation and the loss are
passed in (:mod:`~vcrbench.training.augmentation`, :mod:`~vcrbench.training.losses`).

One epoch ``e`` (1-based) of entry ``name``:

1. Order: a permutation of the training index keyed by ``(seed, name, e)``, cut into batches of
   ``batch_size`` (the last one may be smaller).
2. Crop and flip (``finetune[].geometry``; by default for the AugMix and REVa methods, none
   for ``standard``): each image of the batch, keyed by its place in the epoch
   (:func:`~vcrbench.training.augmentation.geometry_draws`), before any view is made from it.
   Views: the augmentation makes the views of each batch (by default the entry's method's,
   :mod:`~vcrbench.training.methods`: for ``standard`` the entry's corruption on a fraction of
   the images, :class:`~vcrbench.training.augmentation.CorruptionAugmentation`).
3. Step: every view through the base model's preprocessing and the model in one forward pass,
   the loss per image (by default the method's; ``standard``: cross-entropy over the base
   model's classes, the training images' label space: ImageNet's 1000, CIFAR-10's 10), SGD
   with momentum (defaults: the VCR paper's fine-tuning, lr 0.001, momentum 0.9; REVa follows
   AugMix, lr 0.1) at the epoch's learning rate (constant, cosine or
   step schedule, a function of ``e`` only) on the units that learn (:mod:`~vcrbench.training.
   layers`), their gradient's L2 norm first clipped to ``clip_grad_norm`` when set. The
   step is the one epoch loop's (:mod:`vcrbench.training.epochs`), shared with training from
   scratch; this module gives it the fine-tuning recipe and the batches (:func:`epoch_steps`).

Randomness of dropout comes from torch's global generator, seeded per epoch from
``(seed, name, e)``, so an epoch computed after a restart equals the uninterrupted one. On the CPU
the result is bit-identical across runs with the same torch build and thread count.

Image size: every stage takes it from the training index (:func:`~vcrbench.data.datasets.
index_size`): the prepared 224 px crops, or the images at their native size (e.g. CIFAR's
32 px, fine-tuning a model trained here, ``trained:<name>``); the crops, the corruption's pixel
lengths and REVa's targeted corruptions follow that side.

Training log (one row per epoch, ``models/<name>/training-log.parquet``): ``epoch`` (int32),
``lr``, ``loss`` and ``accuracy`` over all training images of the epoch as they were seen
(float64), the same split into ``loss_clean`` / ``accuracy_clean`` and ``loss_corrupted`` /
``accuracy_corrupted`` (null when the epoch had no such image), ``n_images``, ``n_corrupted``
(int64). Accuracy is top-1 over the label space of the training images (the base model's
classes: 1000 for ImageNet, 10 for CIFAR-10) of the ``input`` view, measured on each batch
before its step.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import torch

from vcrbench.core.seeding import EPOCH_DROPOUT
from vcrbench.data.datasets import index_side, index_size, load_images
from vcrbench.errors import VcrbenchError
from vcrbench.models import load_model
from vcrbench.models.preprocess import apply_preprocessing
from vcrbench.models.registry import LoadedModel
from vcrbench.training.augmentation import crop_flip, geometry_draws
from vcrbench.training.checkpoint import new_checkpoint
from vcrbench.training.epochs import EpochRecipe, EpochTotals, Step, run_epoch, sgd
from vcrbench.training.layers import set_training_mode
from vcrbench.training.losses import Loss
from vcrbench.training.methods import method_parts
from vcrbench.training.spec import TrainingSpec, epoch_order, learning_rate
from vcrbench.training.views import Augmentation

LOG_SCHEMA = pa.schema(
    [
        ("epoch", pa.int32()),
        ("lr", pa.float64()),
        ("loss", pa.float64()),
        ("accuracy", pa.float64()),
        ("loss_clean", pa.float64()),
        ("accuracy_clean", pa.float64()),
        ("loss_corrupted", pa.float64()),
        ("accuracy_corrupted", pa.float64()),
        ("n_images", pa.int64()),
        ("n_corrupted", pa.int64()),
    ]
)


def epoch_batches(n_images: int, spec: TrainingSpec, epoch: int) -> list[np.ndarray]:
    """Index arrays of the epoch's batches (a keyed permutation of ``range(n_images)``)."""
    order = epoch_order(n_images, spec, epoch)
    return [order[i : i + spec.batch_size] for i in range(0, n_images, spec.batch_size)]


def epoch_steps(spec: TrainingSpec, train_index: pa.Table, epoch: int, model: LoadedModel,
                augmentation: Augmentation, device: torch.device) -> Iterator[Step]:
    """The steps of epoch ``epoch`` (:class:`~vcrbench.training.epochs.Step`): each batch of
    :func:`epoch_batches` read from its files at the index's size, cropped and flipped
    (``spec.geometric``), its views made by ``augmentation``, stacked and preprocessed as
    the base model's inputs."""
    size = index_size(train_index)
    paths = train_index.column("path").to_pylist()
    labels = np.asarray(train_index.column("label").to_numpy(), np.int64)
    position = 0
    for batch in epoch_batches(len(paths), spec, epoch):
        images = load_images([paths[i] for i in batch], size)
        positions = range(position, position + len(batch))
        if spec.geometric:
            images = crop_flip(images, geometry_draws(spec, epoch, positions, *images.shape[1:3]),
                               spec, device)
        views = augmentation(images, epoch, positions, device)
        names = tuple(views.images)
        stacked = views.images[names[0]] if len(names) == 1 else np.concatenate(
            [views.images[name] for name in names])
        x = torch.from_numpy(stacked).to(device).permute(0, 3, 1, 2).float().div_(255.0)
        x = apply_preprocessing(model.preprocessing, x).contiguous(
            memory_format=torch.channels_last
        )
        yield Step(x, names, torch.from_numpy(labels[batch]).to(device), views.corrupted)
        position += len(batch)


def train_epoch(
    spec: TrainingSpec,
    train_index: pa.Table,
    epoch: int,
    previous: dict[str, Any] | None,
    device: torch.device,
    log: Any = None,
    *,
    augmentation: Augmentation | None = None,
    loss: Loss | None = None,
    adversarial: np.ndarray | None = None,
    models_dir: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Train epoch ``epoch`` from the base model (epoch 1) or the ``previous`` epoch checkpoint.

    ``augmentation`` makes the views of each batch and ``loss`` turns their logits into one
    loss per image; by default both are the spec's method's
    (:func:`~vcrbench.training.methods.method_parts`; ``standard``: :class:`~vcrbench.
    training.augmentation.CorruptionAugmentation` and cross-entropy of the ``input`` view).
    ``adversarial``: the PGD counterparts of the REVa methods, ``(N, H, W, 3)`` uint8 aligned
    with ``train_index`` (:func:`~vcrbench.training.adversarial.counterparts_of_index`).
    ``models_dir``: where a ``trained:<name>`` base is found (``<models_dir>/<name>/model.pt``).
    The images are read at the index's size (module docstring, "Image size"). The steps are
    those of the one epoch loop (:func:`vcrbench.training.epochs.run_epoch`) with the
    fine-tuning recipe: the epoch's rate, the mean of the per-image losses, float32, the model
    channels-last on the CPU for the epoch, torch's generator seeded for dropout.

    Returns ``(checkpoint, log_row)``: the checkpoint dict (:mod:`vcrbench.training.checkpoint`)
    with the optimiser state, and the epoch's row of the training log (:data:`LOG_SCHEMA`).
    """
    if augmentation is None or loss is None:
        default_augmentation, default_loss = method_parts(spec, adversarial,
                                                          index_side(train_index))
        augmentation, loss = augmentation or default_augmentation, loss or default_loss
    if (epoch == 1) != (previous is None):
        raise VcrbenchError(f"finetune {spec.name}: epoch {epoch} needs the checkpoint of "
                            f"epoch {epoch - 1}" if epoch > 1 else "epoch 1 starts from the base")
    if previous is not None and previous["spec"] != spec.as_dict():
        raise VcrbenchError(
            f"finetune {spec.name}: the checkpoint of epoch {epoch - 1} was trained with other "
            "settings; delete results/<run>/models/" + spec.name + " and re-run"
        )
    model = load_model(spec.base, device, models_dir=models_dir)
    module = model.module
    if previous is not None:
        module.load_state_dict(previous["state_dict"], strict=True)
    parameters = set_training_mode(module, spec)
    lr = learning_rate(spec, epoch)
    optimizer = sgd(parameters, lr, spec.momentum, spec.weight_decay, spec.nesterov)
    if previous is not None:
        # a copy: the optimiser updates its state in place and the caller's dict must not change
        optimizer.load_state_dict(copy.deepcopy(previous["optimizer"]))

    def progress(step: int, steps: int, totals: EpochTotals) -> None:
        if log is not None and step % 10 == 0:
            loss_sum, _, seen = totals.summed()
            log.info("epoch %d: step %d of %d, mean loss so far %.4f", epoch, step, steps,
                     loss_sum / seen)

    totals = run_epoch(EpochRecipe(
        module=module, parameters=parameters, optimizer=optimizer,
        steps=epoch_steps(spec, train_index, epoch, model, augmentation, device),
        n_steps=-(-train_index.num_rows // spec.batch_size),
        learning_rate=lambda _step: lr, schedule_unit="epoch", loss=loss, reduction="mean",
        clip_grad_norm=spec.clip_grad_norm,
        memory_format=torch.channels_last if device.type == "cpu" else torch.contiguous_format,
        torch_seed=int(spec.key(epoch, EPOCH_DROPOUT).generate_state(1, np.uint32)[0]),
        on_step=progress,
    ))
    checkpoint = new_checkpoint("finetuned", module.state_dict(), optimizer.state_dict(),
                                name=spec.name, base=spec.base, spec=spec.as_dict(), epoch=epoch)
    return checkpoint, log_row(epoch, lr, totals)


def log_row(epoch: int, lr: float, totals: EpochTotals) -> dict[str, Any]:
    """The epoch's row of the training log (:data:`LOG_SCHEMA`) from its sums."""

    def part(name: str) -> tuple[float, int, int]:
        return (totals.loss.get(name, 0.0), totals.correct.get(name, 0),
                totals.count.get(name, 0))

    def ratio(a: float, b: int) -> float | None:
        return a / b if b else None

    clean, corrupted = part("clean"), part("corrupted")
    total = [clean[i] + corrupted[i] for i in range(3)]
    return {
        "epoch": epoch,
        "lr": lr,
        "loss": ratio(total[0], total[2]),
        "accuracy": ratio(total[1], total[2]),
        "loss_clean": ratio(clean[0], clean[2]),
        "accuracy_clean": ratio(clean[1], clean[2]),
        "loss_corrupted": ratio(corrupted[0], corrupted[2]),
        "accuracy_corrupted": ratio(corrupted[1], corrupted[2]),
        "n_images": total[2],
        "n_corrupted": corrupted[2],
    }


def training_log(rows: list[dict[str, Any]]) -> pa.Table:
    """The training log table (:data:`LOG_SCHEMA`) from the epoch rows, by epoch."""
    rows = sorted(rows, key=lambda row: row["epoch"])
    return pa.Table.from_pylist(rows, schema=LOG_SCHEMA)
