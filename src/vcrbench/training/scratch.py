"""Training a CIFAR classifier from random initialisation, one resumable epoch at a time.

The default recipe (:class:`ScratchRecipe`) is AugMix's CIFAR recipe (Hendrycks et al. 2020,
§4.1 and its CIFAR training script's defaults), which the REVa paper follows: SGD with Nesterov
momentum 0.9, initial learning rate 0.1 decayed per step by a cosine to 1e-6, weight decay
5e-4 on every parameter, batch 128, 100 epochs (AugMix trains 100 epochs; the epochs are a
setting), random crops of the image zero-padded by 4 px and horizontal flips, inputs
normalised by mean 0.5 and standard deviation 0.5 per channel. ``schedule: onecycle`` (a linear
warm-up over ``warmup_epochs`` then a linear decay to 0) and ``label_smoothing`` serve the fast
CPU recipe of :data:`FAST_RECIPE`.

Methods (``method``): ``standard`` (cross-entropy of the cropped and flipped image), ``augmix``
(that image and two AugMix views in one batch: CE + λ·JS, AugMix's Eq. 1), and REVa's
``reva_minus`` / ``reva`` (REVa §3.2, Eq. 2): the image, two AugMix views and the image's PGD
counterpart (crafted once on a trained standard model, cropped and flipped as the image is) in
one batch, loss ``CE(image) + γ·CE(counterpart) + γ·λ·JS(image, view 1, view 2)``; ``reva`` adds
the targeted corruptions (at one CIFAR-10-C severity at 32 px) to AugMix's operations.

An epoch's steps are the one epoch loop's (:mod:`vcrbench.training.epochs`), shared with
fine-tuning; this module gives it the from-scratch recipe (the rate per step, the batch's
summed loss, the precision) and the batches (:func:`epoch_steps`).

Randomness: the weights come from ``seed`` alone; epoch ``e``'s order, crops and flips from one
generator keyed by ``(seed, e)`` (:func:`epoch_draws`), drawn for every training image at once,
so an epoch does not depend on the batch size's last batch, on the device or on a restart. On
the CPU an epoch is bit-identical across runs with the same torch build and thread count; with
``precision: bf16`` (autocast to bfloat16, weights and optimiser in float32) and on a GPU the
results are reproducible only up to the kernels' own nondeterminism.

Shapes: images are (N, 32, 32, 3) uint8 RGB arrays (:class:`~vcrbench.data.cifar.CifarSplit`),
labels (N,) int64.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, fields, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import torch
from torch import nn

from vcrbench.core.tables import read_table
from vcrbench.data.prepared import PreparedImages
from vcrbench.errors import VcrbenchError
from vcrbench.models.checkpoints import read_checkpoint
from vcrbench.models.cifar import CIFAR_ARCHITECTURES, build_cifar_model
from vcrbench.training.augmix import AUGMIX_OPS
from vcrbench.training.checkpoint import new_checkpoint, save_checkpoint
from vcrbench.training.epochs import EpochRecipe, Step, autocast, run_epoch, sgd
from vcrbench.training.losses import SummedLoss
from vcrbench.training.spec import ADVERSARIAL_METHODS, AUGMIX_METHODS, METHODS, AugMixSettings
from vcrbench.training.view_workers import ViewWorkers
from vcrbench.training.views import (
    ADVERSARIAL,
    AUGMIX_VIEWS,
    INPUT,
    AugMixViews,
    operation_pool,
    pad_crop_flip,
)

SCHEDULES = ("cosine", "onecycle")
PRECISIONS = ("fp32", "bf16")
#: Methods of a from-scratch entry (module docstring): those of fine-tuning.
SCRATCH_METHODS = METHODS
#: Stream of the AugMix draws of an epoch (keyed with the seed, epoch, position and view).
AUGMIX_STREAM = 0xA6A1
#: Final learning rate of the cosine schedule (AugMix: lr_min = 1e-6 / lr, times lr).
COSINE_FLOOR = 1e-6


@dataclass(frozen=True)
class ScratchReva:
    """REVa's enhancement of a from-scratch training (methods ``reva_minus`` and ``reva``).

    Attributes:
        targeted: the corruptions added to AugMix's operations (method ``reva``; empty for
            ``reva_minus``), or ``"auto"`` until the workflow reads them from REVa part 1.
        severity: the CIFAR-10-C severity (1–5; ImageNet-C's at 224 px) they are applied at.
        augmix_ops: whether AugMix's nine operations stay in the pool beside them.
        gamma: γ of REVa's Eq. 2 (the weight of the counterpart's CE and, times λ, of JS).
    """

    targeted: tuple[str, ...] | str = ()
    severity: int = 3
    augmix_ops: bool = True
    gamma: float = 0.5

    def __post_init__(self) -> None:
        if not isinstance(self.targeted, str):
            object.__setattr__(self, "targeted", tuple(self.targeted))
        elif self.targeted != "auto":
            raise VcrbenchError(f"reva.targeted is {self.targeted!r}: give a list or auto")
        if not 1 <= self.severity <= 5 or self.gamma < 0:
            raise VcrbenchError("reva.severity must lie in 1..5 and reva.gamma be >= 0")


@dataclass(frozen=True)
class ScratchRecipe:
    """Settings of one from-scratch training (defaults: AugMix's CIFAR recipe).

    Attributes:
        architecture: one of :data:`~vcrbench.models.cifar.CIFAR_ARCHITECTURES`.
        classes: number of classes (10 for CIFAR-10, 100 for CIFAR-100).
        epochs: passes over the training set.
        batch_size: images per step (the last batch of an epoch may be smaller).
        lr: peak learning rate; momentum, nesterov, weight_decay: SGD's.
        schedule: ``cosine`` (per step, lr -> 1e-6) or ``onecycle`` (linear warm-up over
            ``warmup_epochs``, then linear decay to 0), both per step.
        crop_padding: zero padding (px) before the random 32 x 32 crop; 0 for no crop.
        flip: random horizontal flips.
        label_smoothing: cross-entropy label smoothing in [0, 1).
        mean, std: per-channel normalisation of [0, 1] pixels.
        precision: ``fp32`` or ``bf16`` (autocast).
        method: the training method (:data:`SCRATCH_METHODS`; module docstring); the
            cross-entropies are label-smoothed as set.
        augmix: AugMix's settings (methods of :data:`AUGMIX_METHODS`; None otherwise).
        reva: REVa's settings (methods of :data:`ADVERSARIAL_METHODS`; None otherwise).
        clip_grad_norm: bound on the gradient's L2 norm per step, or None (no clipping; the
            authors' CIFAR REVa script clips at 1.0, AugMix's does not).
        seed: keys the weights and every epoch's draws.
    """

    architecture: str
    classes: int
    epochs: int = 100
    batch_size: int = 128
    lr: float = 0.1
    momentum: float = 0.9
    nesterov: bool = True
    weight_decay: float = 5e-4
    schedule: str = "cosine"
    warmup_epochs: float = 0.0
    crop_padding: int = 4
    flip: bool = True
    label_smoothing: float = 0.0
    mean: tuple[float, float, float] = (0.5, 0.5, 0.5)
    std: tuple[float, float, float] = (0.5, 0.5, 0.5)
    precision: str = "fp32"
    method: str = "standard"
    augmix: AugMixSettings | None = None
    reva: ScratchReva | None = None
    clip_grad_norm: float | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "mean", tuple(float(v) for v in self.mean))
        object.__setattr__(self, "std", tuple(float(v) for v in self.std))
        problems = []
        if self.architecture not in CIFAR_ARCHITECTURES:
            problems.append(f"architecture {self.architecture!r} is not one of "
                            f"{', '.join(CIFAR_ARCHITECTURES)}")
        if self.classes < 2:
            problems.append(f"classes must be at least 2, got {self.classes}")
        if self.epochs < 1 or self.batch_size < 1:
            problems.append("epochs and batch_size must be positive")
        if self.lr <= 0 or self.weight_decay < 0 or not 0 <= self.momentum < 1:
            problems.append("lr must be > 0, weight_decay >= 0, momentum in [0, 1)")
        if self.schedule not in SCHEDULES:
            problems.append(f"schedule {self.schedule!r} is not one of {', '.join(SCHEDULES)}")
        if not 0 <= self.warmup_epochs <= self.epochs:
            problems.append("warmup_epochs must lie in [0, epochs]")
        if self.crop_padding < 0 or not 0 <= self.label_smoothing < 1:
            problems.append("crop_padding must be >= 0 and label_smoothing in [0, 1)")
        if self.clip_grad_norm is not None and not self.clip_grad_norm > 0:
            problems.append("clip_grad_norm must be > 0 or None")
        if len(self.mean) != 3 or len(self.std) != 3 or min(self.std) <= 0:
            problems.append("mean and std need three values, std > 0")
        if self.precision not in PRECISIONS:
            problems.append(f"precision {self.precision!r} is not one of {', '.join(PRECISIONS)}")
        if self.method not in SCRATCH_METHODS:
            problems.append(f"method {self.method!r}: from-scratch training supports "
                            f"{', '.join(SCRATCH_METHODS)}")
        else:
            for settings, methods in (("augmix", AUGMIX_METHODS),
                                      ("reva", ADVERSARIAL_METHODS)):
                if (self.method in methods) != (getattr(self, settings) is not None):
                    problems.append(f"method {self.method} "
                                    f"{'needs' if self.method in methods else 'takes no'} "
                                    f"{settings} settings")
            if self.reva is not None and self.reva.targeted != "auto":
                if self.method == "reva" and not self.reva.targeted:
                    problems.append("method reva needs targeted corruptions")
                if self.method == "reva_minus" and self.reva.targeted:
                    problems.append("method reva_minus takes no targeted corruptions (it is "
                                    "REVa with AugMix's operations only)")
                if not self.reva.targeted and not self.reva.augmix_ops:
                    problems.append("the AugMix pool is empty (no targeted corruption and "
                                    "reva.augmix_ops false)")
        if problems:
            raise VcrbenchError("training recipe: " + "; ".join(problems))

    def as_dict(self) -> dict[str, Any]:
        """Plain dict (tuples as lists), stored in every checkpoint; without ``augmix``,
        ``reva`` and ``clip_grad_norm`` when None, so that a standard recipe's dict (a workflow
        parameter) is what it was before they existed."""
        values = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}
        for settings in ("augmix", "reva", "clip_grad_norm"):
            if values[settings] is None:
                del values[settings]
        if "reva" in values and not isinstance(values["reva"]["targeted"], str):
            values["reva"]["targeted"] = list(values["reva"]["targeted"])
        return values

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> ScratchRecipe:
        """The recipe of a config mapping; unknown keys are an error naming them."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise VcrbenchError(f"training recipe: unknown keys {unknown}; known: "
                                f"{', '.join(sorted(known))}")
        values = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
        if isinstance(values.get("augmix"), Mapping):
            values["augmix"] = AugMixSettings(**values["augmix"])
        if isinstance(values.get("reva"), Mapping):
            values["reva"] = ScratchReva(**values["reva"])
        return cls(**values)

    def with_targeted(self, targeted: list[str] | tuple[str, ...]) -> ScratchRecipe:
        """The recipe with REVa's ``targeted: auto`` replaced by the corruptions part 1 found
        (a recipe with a list is returned as it is)."""
        if self.reva is None or self.reva.targeted != "auto":
            return self
        return replace(self, reva=replace(self.reva, targeted=tuple(targeted)))


#: The fast CPU recipe of ``fastnet`` (``benchmarks/bench_cifar_train.py`` measures it): large
#: batches, a one-cycle schedule, label smoothing and bfloat16 autocast.
FAST_RECIPE = dict(architecture="fastnet", epochs=8, batch_size=512, lr=0.4, momentum=0.9,
                   nesterov=True, weight_decay=5e-4, schedule="onecycle", warmup_epochs=2,
                   label_smoothing=0.2, precision="bf16")


def steps_per_epoch(n_images: int, recipe: ScratchRecipe) -> int:
    """Optimiser steps in one epoch of ``n_images`` images."""
    return math.ceil(n_images / recipe.batch_size)


def learning_rate(recipe: ScratchRecipe, step: int, total_steps: int) -> float:
    """The learning rate of global step ``step`` (0-based) of ``total_steps``."""
    if recipe.schedule == "cosine":
        floor = min(COSINE_FLOOR, recipe.lr)
        return floor + (recipe.lr - floor) * 0.5 * (1 + math.cos(math.pi * step / total_steps))
    warmup = recipe.warmup_epochs / recipe.epochs * total_steps
    if step < warmup:
        return recipe.lr * (step + 1) / warmup
    return recipe.lr * max(0.0, (total_steps - step) / max(total_steps - warmup, 1.0))


@dataclass(frozen=True)
class EpochDraws:
    """One epoch's random draws, per position of the epoch's order: (N,) arrays."""

    order: np.ndarray
    dx: np.ndarray
    dy: np.ndarray
    flip: np.ndarray


def epoch_draws(recipe: ScratchRecipe, n_images: int, epoch: int) -> EpochDraws:
    """Order, crop offsets (px, in [0, 2 * padding]) and flips of epoch ``epoch`` (1-based)."""
    rng = np.random.default_rng(np.random.SeedSequence([recipe.seed, epoch, 0x5C7A]))
    order = rng.permutation(n_images)
    span = 2 * recipe.crop_padding + 1
    dx = rng.integers(0, span, n_images)
    dy = rng.integers(0, span, n_images)
    flip = rng.random(n_images) < 0.5 if recipe.flip else np.zeros(n_images, bool)
    return EpochDraws(order, dx, dy, flip)


def normalise(images: torch.Tensor, recipe: ScratchRecipe) -> torch.Tensor:
    """(B, H, W, 3) uint8 -> (B, 3, H, W) float32 normalised, channels-last in memory."""
    x = images.permute(0, 3, 1, 2).float().div_(255.0)
    mean = torch.tensor(recipe.mean, device=x.device).view(1, 3, 1, 1)
    std = torch.tensor(recipe.std, device=x.device).view(1, 3, 1, 1)
    return ((x - mean) / std).contiguous(memory_format=torch.channels_last)


def augmix_pool(recipe: ScratchRecipe, side: int) -> tuple[tuple[str, ...], dict]:
    """The operation pool of the recipe's AugMix views and its corruption operations: AugMix's
    nine, plus (method ``reva``) the targeted corruptions at ``recipe.reva.severity``, with
    CIFAR-10-C's constants at ``side`` 32 (:func:`~vcrbench.training.views.operation_pool`)."""
    reva = recipe.reva
    if recipe.method != "reva":
        return AUGMIX_OPS, {}
    if reva.targeted == "auto":
        raise VcrbenchError("reva.targeted auto has not been resolved from REVa part 1's groups "
                            "(ScratchRecipe.with_targeted)")
    return operation_pool(reva.targeted, reva.augmix_ops, side, reva.severity)


def augmix_key(seed: int, epoch: int, position: int, view: int) -> np.random.SeedSequence:
    """The seed sequence of AugMix view ``view`` of the image at ``position`` of epoch
    ``epoch``: ``(seed, epoch, AUGMIX_STREAM, position, view)``."""
    return np.random.SeedSequence([seed, epoch, AUGMIX_STREAM, position, view])


def augmix_maker(recipe: ScratchRecipe, epoch: int, side: int) -> AugMixViews:
    """The maker of epoch ``epoch``'s AugMix views of ``side`` px images (the methods of
    :data:`AUGMIX_METHODS`), keyed by :func:`augmix_key`; picklable, for
    :class:`~vcrbench.training.view_workers.ViewWorkers`."""
    pool, corruptions = augmix_pool(recipe, side)
    return AugMixViews(pool, corruptions, recipe.augmix, partial(augmix_key, recipe.seed, epoch))


def augmix_training_views(recipe: ScratchRecipe, batch: torch.Tensor, epoch: int,
                          positions: range) -> list[torch.Tensor]:
    """The two AugMix views of a training batch (the methods of :data:`AUGMIX_METHODS`).

    Args:
        batch: (B, H, W, 3) uint8, the cropped and flipped images at ``positions`` (their places
            in epoch ``epoch``'s order).
    Returns:
        two (B, H, W, 3) uint8 views; view ``v`` of position ``p`` is drawn from the generator
        keyed by ``(seed, epoch, AUGMIX_STREAM, p, v)``, so it does not depend on the batch.
    """
    return augmix_maker(recipe, epoch, int(batch.shape[1]))(batch, positions)


@dataclass
class TrainingState:
    """A model in training: its module, optimiser and the log of the epochs done."""

    recipe: ScratchRecipe
    model: nn.Module
    optimizer: torch.optim.SGD
    epoch: int
    log: list[dict[str, Any]]


def new_state(recipe: ScratchRecipe, device: str | torch.device = "cpu") -> TrainingState:
    """A freshly initialised model (weights from ``recipe.seed``) and its optimiser."""
    device = torch.device(device)
    model = build_cifar_model(recipe.architecture, recipe.classes, recipe.seed)
    model = model.to(device, memory_format=torch.channels_last)
    optimizer = sgd(list(model.parameters()), recipe.lr, recipe.momentum, recipe.weight_decay,
                    recipe.nesterov)
    return TrainingState(recipe, model, optimizer, 0, [])


def train_epoch(state: TrainingState, images: torch.Tensor, labels: torch.Tensor,
                on_step: Callable[[int, int], None] | None = None,
                adversarial: torch.Tensor | None = None,
                view_workers: ViewWorkers | None = None) -> dict[str, Any]:
    """Train the next epoch of ``state`` in place and return its log row.

    The steps are those of the one epoch loop (:func:`vcrbench.training.epochs.run_epoch`)
    with the from-scratch recipe: the rate per step, the batch's summed loss
    (:class:`~vcrbench.training.losses.SummedLoss`, label-smoothed) over its size, the
    recipe's precision, every parameter learning, the model channels-last from its creation.

    Args:
        images: (N, 32, 32, 3) uint8 on the training device.
        labels: (N,) int64 on the same device.
        on_step: called with (step in epoch, steps in epoch) after each step.
        adversarial: (N, 32, 32, 3) uint8 PGD counterparts, row ``i`` of image ``i`` (the
            methods of :data:`ADVERSARIAL_METHODS` only); cropped and flipped as the image.
        view_workers: make the AugMix views on the CPU in these worker processes, ahead of
            the step (the same bytes as without them on the CPU; on a GPU the views are
            otherwise made there, launch-bound). Ignored by ``standard``.
    Returns:
        ``epoch``, ``lr`` (at the epoch's last step), ``loss`` (the method's, per image) and
        ``accuracy`` (of the cropped and flipped images as they were seen, before each step;
        not of AugMix's views), means over the epoch's images.
    """
    recipe, model = state.recipe, state.model
    if state.epoch >= recipe.epochs:
        raise VcrbenchError(f"all {recipe.epochs} epochs are already trained")
    needs = recipe.method in ADVERSARIAL_METHODS
    if needs != (adversarial is not None):
        raise VcrbenchError(f"method {recipe.method} "
                            f"{'needs' if needs else 'takes no'} PGD counterparts")
    if needs and adversarial.shape != images.shape:
        raise VcrbenchError(f"the PGD counterparts have shape {tuple(adversarial.shape)}, the "
                            f"images {tuple(images.shape)}; craft them for these images")
    epoch = state.epoch + 1
    n = len(labels)
    per_epoch = steps_per_epoch(n, recipe)
    augmix = recipe.method in AUGMIX_METHODS
    model.train()
    totals = run_epoch(EpochRecipe(
        module=model, parameters=list(model.parameters()), optimizer=state.optimizer,
        steps=epoch_steps(recipe, epoch, images, labels, adversarial, view_workers),
        n_steps=per_epoch,
        learning_rate=partial(_step_rate, recipe, (epoch - 1) * per_epoch,
                              per_epoch * recipe.epochs),
        schedule_unit="step",
        loss=SummedLoss(recipe.label_smoothing, recipe.augmix.lam if augmix else None,
                        recipe.reva.gamma if needs else None),
        reduction="sum", precision=recipe.precision, clip_grad_norm=recipe.clip_grad_norm,
        on_step=None if on_step is None else lambda step, steps, _: on_step(step, steps),
    ))
    loss_sum, correct, _ = totals.summed()
    state.epoch = epoch
    row = {"epoch": epoch, "lr": totals.lr if per_epoch else recipe.lr, "loss": loss_sum / n,
           "accuracy": correct / n}
    state.log.append(row)
    return row


def _step_rate(recipe: ScratchRecipe, first: int, total: int, step: int) -> float:
    return learning_rate(recipe, first + step, total)


def epoch_steps(recipe: ScratchRecipe, epoch: int, images: torch.Tensor, labels: torch.Tensor,
                adversarial: torch.Tensor | None = None,
                view_workers: ViewWorkers | None = None) -> Iterator[Step]:
    """The steps of epoch ``epoch`` (:class:`~vcrbench.training.epochs.Step`): each batch of
    the epoch's order (:func:`epoch_draws`) cropped and flipped on the images' device, with
    (methods of :data:`AUGMIX_METHODS`) its two AugMix views and (REVa) its counterparts
    cropped and flipped as the images, normalised (:func:`normalise`)."""
    device = images.device
    draws = epoch_draws(recipe, len(labels), epoch)
    per_epoch = steps_per_epoch(len(labels), recipe)
    order = torch.as_tensor(draws.order, device=device)
    dx = torch.as_tensor(draws.dx, device=device)
    dy = torch.as_tensor(draws.dy, device=device)
    flip = torch.as_tensor(draws.flip, device=device)
    names: tuple[str, ...] = (INPUT,)
    view_stream = make_views = None
    if recipe.method in AUGMIX_METHODS:
        names += AUGMIX_VIEWS + ((ADVERSARIAL,) if adversarial is not None else ())
        make_views = augmix_maker(recipe, epoch, int(images.shape[1]))
        if view_workers is not None:
            view_stream = view_workers.stream(make_views, _cpu_batches(images, draws, recipe,
                                                                       per_epoch))
    for step in range(per_epoch):
        positions = slice(step * recipe.batch_size, (step + 1) * recipe.batch_size)
        index = order[positions]
        batch = pad_crop_flip(images[index], dx[positions], dy[positions], flip[positions],
                              recipe.crop_padding)
        y = labels[index]
        if make_views is not None:
            # AugMix's CIFAR script: the image and its two views in one batch (shared batch
            # statistics); REVa's methods add the counterpart, cropped and flipped as the image
            if view_stream is not None:
                views = [v.to(device, non_blocking=True) for v in next(view_stream)]
            else:
                views = make_views(batch, range(positions.start, positions.start + len(y)))
            if adversarial is not None:
                views.append(pad_crop_flip(adversarial[index], dx[positions], dy[positions],
                                           flip[positions], recipe.crop_padding))
            batch = torch.cat([batch, *views])
        yield Step(normalise(batch, recipe), names, y)


def _cpu_batches(images: torch.Tensor, draws: EpochDraws, recipe: ScratchRecipe,
                 per_epoch: int) -> Iterator[tuple[torch.Tensor, int]]:
    """Each step's cropped and flipped batch on the CPU (as :func:`train_epoch` makes it on the
    training device) and its first position, for :class:`ViewWorkers`."""
    images = images.cpu()
    for step in range(per_epoch):
        positions = slice(step * recipe.batch_size, (step + 1) * recipe.batch_size)
        batch = pad_crop_flip(images[torch.as_tensor(draws.order[positions])],
                        torch.as_tensor(draws.dx[positions]), torch.as_tensor(draws.dy[positions]),
                        torch.as_tensor(draws.flip[positions]), recipe.crop_padding)
        yield batch, positions.start


@torch.no_grad()
def predict(model: nn.Module, images: torch.Tensor, recipe: ScratchRecipe,
            batch_size: int = 1000, flip_average: bool = False) -> torch.Tensor:
    """Class probabilities (N, classes), float32, of (N, 32, 32, 3) uint8 images.

    ``flip_average`` averages the probabilities of each image and its mirror image.
    """
    model.eval()
    out = []
    for start in range(0, len(images), batch_size):
        x = normalise(images[start:start + batch_size], recipe)
        with autocast(recipe.precision, images.device):
            p = model(x).float().softmax(1)
            if flip_average:
                p = (p + model(x.flip(3)).float().softmax(1)) / 2
        out.append(p)
    return torch.cat(out)


def accuracy(model: nn.Module, images: torch.Tensor, labels: torch.Tensor,
             recipe: ScratchRecipe, flip_average: bool = False) -> float:
    """Top-1 accuracy (fraction) of ``model`` on uint8 images (N, 32, 32, 3)."""
    p = predict(model, images, recipe, flip_average=flip_average)
    return float((p.argmax(1) == labels).double().mean())


def save_state(state: TrainingState, path: str | Path, *, data: Mapping[str, Any] | None = None,
               optimizer: bool = True) -> None:
    """Write the state (weights, optimiser, log, recipe) atomically, every tensor on the CPU.

    ``data``: what the model was trained on (stored as ``data``; the workflow's
    ``{"label_space", "side", "name"}``, read by ``trained:<name>``); ``optimizer`` False leaves
    the optimiser state out (a final model, not resumable).
    """
    checkpoint = new_checkpoint(
        "trained", state.model.state_dict(),
        state.optimizer.state_dict() if optimizer else None,
        recipe=state.recipe.as_dict(), epoch=state.epoch, log=state.log, data=dict(data or {}),
    )
    save_checkpoint(checkpoint, path)


def read_state_file(path: str | Path) -> dict[str, Any]:
    """The checkpoint dict of :func:`save_state`, checked for its format."""
    return read_checkpoint(path, "trained")


def load_state(path: str | Path, recipe: ScratchRecipe | None = None,
               device: str | torch.device = "cpu") -> TrainingState:
    """Read a state written by :func:`save_state`.

    With ``recipe``, a checkpoint trained with other settings is refused (only ``precision``
    may differ, so that a GPU-trained model can be evaluated on the CPU).
    """
    checkpoint = read_state_file(path)
    stored = ScratchRecipe.from_dict(checkpoint["recipe"])
    if recipe is not None and replace(stored, precision=recipe.precision) != recipe:
        raise VcrbenchError(f"{path} was trained with other settings ({stored}); delete the "
                            "model's folder to train it again with the new ones")
    state = new_state(stored if recipe is None else recipe, device)
    state.model.load_state_dict(checkpoint["state_dict"])
    if "optimizer" not in checkpoint:
        raise VcrbenchError(f"{path} is a final model without its optimiser state; training "
                            "resumes from the per-epoch states only")
    state.optimizer.load_state_dict(checkpoint["optimizer"])
    state.epoch = int(checkpoint["epoch"])
    state.log = list(checkpoint["log"])
    return state


#: The training log of a from-scratch model (``models/<name>/training-log.parquet``), one row per
#: epoch: the learning rate at its last step, the mean loss and accuracy on the training images
#: as they were seen (augmented, before each step) and the top-1 accuracy on the run's evaluation
#: images after the epoch (null without labels). (Times are in the job logs and benchmark files:
#: they would make the table differ between identical runs.)
SCRATCH_LOG_SCHEMA = pa.schema([
    pa.field("epoch", pa.int64(), nullable=False),
    pa.field("lr", pa.float64(), nullable=False),
    pa.field("loss", pa.float64(), nullable=False),
    pa.field("accuracy", pa.float64(), nullable=False),
    pa.field("test_accuracy", pa.float64()),
])


def scratch_log(rows: list[dict[str, Any]]) -> pa.Table:
    """The training log table (:data:`SCRATCH_LOG_SCHEMA`) of the epoch rows, by epoch."""
    return pa.Table.from_pylist(sorted(rows, key=lambda row: row["epoch"]),
                                schema=SCRATCH_LOG_SCHEMA)


def labelled_images(index_path: str | Path, store_path: str | Path,
                    device: str | torch.device = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """The prepared images of an index with a label, and their labels, on ``device``:
    (N, S, S, 3) uint8 and (N,) int64 (images without a label, -1, are left out)."""
    index = read_table(index_path)
    labels = np.asarray(index.column("label").to_numpy(), np.int64)
    images = PreparedImages(store_path, index).all()
    keep = labels >= 0
    return (torch.from_numpy(images[keep]).to(device),
            torch.from_numpy(labels[keep]).to(device))


def test_accuracy(state: TrainingState, index_path: str | Path, store_path: str | Path,
                  device: str | torch.device = "cpu") -> float | None:
    """Top-1 accuracy of the state's model on the labelled images of an index (the run's
    evaluation images), or None when none has a label."""
    images, labels = labelled_images(index_path, store_path, device)
    if not len(labels):
        return None
    return accuracy(state.model, images, labels, state.recipe)
