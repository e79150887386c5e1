"""The two epoch loops as they were before fine-tuning and training from scratch shared one
(commit 93d2b5c: ``vcrbench.training.loop.train_epoch`` and ``vcrbench.training.scratch.
train_epoch``), kept verbatim as the reference that ``tests/unit/training/test_one_loop.py``
compares the shared loop against, bit for bit. They call the package's building blocks (model
loading, views, schedules, draws), which the refactoring did not change; the loops' own logic
(order of operations, optimiser set-up, loss reduction, stepping) is here as it was.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
import pyarrow as pa
import torch
from torch import nn

from vcrbench.core.seeding import EPOCH_DROPOUT
from vcrbench.errors import VcrbenchError
from vcrbench.training.augmentation import crop_flip, geometry_draws
from vcrbench.training.layers import set_training_mode
from vcrbench.training.losses import jensen_shannon
from vcrbench.training.methods import method_parts
from vcrbench.training.scratch import augmix_maker, epoch_draws, normalise
from vcrbench.training.spec import ADVERSARIAL_METHODS, AUGMIX_METHODS, TrainingSpec, epoch_order
from vcrbench.training.views import INPUT, pad_crop_flip

COSINE_FLOOR = 1e-6


def epoch_checkpoint(spec: TrainingSpec, epoch: int, module: torch.nn.Module,
                     optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    def cpu_copy(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            return value.detach().cpu().clone()
        if isinstance(value, dict):
            return {k: cpu_copy(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(cpu_copy(v) for v in value)
        return value

    return {
        "format": "vcrbench-finetuned",
        "version": 1,
        "name": spec.name,
        "base": spec.base,
        "spec": spec.as_dict(),
        "epoch": epoch,
        "state_dict": {k: v.detach().cpu().clone() for k, v in module.state_dict().items()},
        "optimizer": cpu_copy(optimizer.state_dict()),
    }


def _ft_learning_rate(spec: TrainingSpec, epoch: int) -> float:
    if spec.schedule == "constant":
        return spec.lr
    if spec.schedule == "cosine":
        return spec.lr * 0.5 * (1.0 + math.cos(math.pi * (epoch - 1) / spec.epochs))
    return spec.lr * spec.gamma ** ((epoch - 1) // spec.step_size)


def _scratch_learning_rate(recipe, step: int, total_steps: int) -> float:
    if recipe.schedule == "cosine":
        floor = min(COSINE_FLOOR, recipe.lr)
        return floor + (recipe.lr - floor) * 0.5 * (1 + math.cos(math.pi * step / total_steps))
    warmup = recipe.warmup_epochs / recipe.epochs * total_steps
    if step < warmup:
        return recipe.lr * (step + 1) / warmup
    return recipe.lr * max(0.0, (total_steps - step) / max(total_steps - warmup, 1.0))


def epoch_batches(n_images: int, spec: TrainingSpec, epoch: int) -> list[np.ndarray]:
    order = epoch_order(n_images, spec, epoch)
    return [order[i : i + spec.batch_size] for i in range(0, n_images, spec.batch_size)]


def _optimizer(parameters, spec: TrainingSpec, lr: float) -> torch.optim.SGD:
    return torch.optim.SGD(
        parameters, lr=lr, momentum=spec.momentum, weight_decay=spec.weight_decay,
        nesterov=spec.nesterov and spec.momentum > 0,
    )


def finetune_epoch(
    spec: TrainingSpec,
    train_index: pa.Table,
    epoch: int,
    previous: dict[str, Any] | None,
    device: torch.device,
    log: Any = None,
    *,
    augmentation=None,
    loss=None,
    adversarial: np.ndarray | None = None,
    models_dir: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fine-tuning epoch of commit 93d2b5c."""
    from vcrbench.data.datasets import index_side, index_size, load_images
    from vcrbench.models import load_model
    from vcrbench.models.preprocess import apply_preprocessing

    size, side = index_size(train_index), index_side(train_index)
    if augmentation is None or loss is None:
        default_augmentation, default_loss = method_parts(spec, adversarial, side)
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
    lr = _ft_learning_rate(spec, epoch)
    optimizer = _optimizer(parameters, spec, lr)
    if previous is not None:
        # a copy: the optimiser updates its state in place and the caller's dict must not change
        optimizer.load_state_dict(copy.deepcopy(previous["optimizer"]))
        for group in optimizer.param_groups:
            group["lr"] = lr
    if device.type == "cpu":
        module.to(memory_format=torch.channels_last)
    dropout_seed = int(spec.key(epoch, EPOCH_DROPOUT).generate_state(1, np.uint32)[0])
    torch.manual_seed(dropout_seed)

    paths = train_index.column("path").to_pylist()
    labels = np.asarray(train_index.column("label").to_numpy(), np.int64)
    sums = {"clean": [0.0, 0, 0], "corrupted": [0.0, 0, 0]}  # loss sum, correct, count
    position = 0
    batches = epoch_batches(len(paths), spec, epoch)
    for step, batch in enumerate(batches):
        images = load_images([paths[i] for i in batch], size)
        positions = range(position, position + len(batch))
        if spec.geometric:
            images = crop_flip(images, geometry_draws(spec, epoch, positions, *images.shape[1:3]),
                               spec, device)
        views = augmentation(images, epoch, positions, device)
        names = list(views.images)
        stacked = views.images[names[0]] if len(names) == 1 else np.concatenate(
            [views.images[name] for name in names])
        x = torch.from_numpy(stacked).to(device).permute(0, 3, 1, 2).float().div_(255.0)
        x = apply_preprocessing(model.preprocessing, x).contiguous(
            memory_format=torch.channels_last
        )
        target = torch.from_numpy(labels[batch]).to(device)
        logits = dict(zip(names, module(x).split(len(batch)), strict=True))
        losses = loss(logits, target)
        optimizer.zero_grad(set_to_none=True)
        losses.mean().backward()
        if spec.clip_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(parameters, spec.clip_grad_norm)
        optimizer.step()
        with torch.no_grad():
            correct = (logits[INPUT].argmax(dim=1) == target).cpu().numpy()
            values = losses.detach().double().cpu().numpy()
        for part, rows in (("corrupted", views.corrupted), ("clean", ~views.corrupted)):
            sums[part][0] += float(values[rows].sum())
            sums[part][1] += int(correct[rows].sum())
            sums[part][2] += len(values[rows])
        position += len(batch)
        if log is not None and (step + 1) % 10 == 0:
            log.info("epoch %d: step %d of %d, mean loss so far %.4f", epoch, step + 1,
                     len(batches), (sums["clean"][0] + sums["corrupted"][0]) / position)

    def ratio(a: float, b: int) -> float | None:
        return a / b if b else None

    total = [sums["clean"][i] + sums["corrupted"][i] for i in range(3)]
    row = {
        "epoch": epoch,
        "lr": lr,
        "loss": ratio(total[0], total[2]),
        "accuracy": ratio(total[1], total[2]),
        "loss_clean": ratio(*sums["clean"][0::2]),
        "accuracy_clean": ratio(*sums["clean"][1:]),
        "loss_corrupted": ratio(*sums["corrupted"][0::2]),
        "accuracy_corrupted": ratio(*sums["corrupted"][1:]),
        "n_images": total[2],
        "n_corrupted": sums["corrupted"][2],
    }
    module.to(memory_format=torch.contiguous_format)
    return epoch_checkpoint(spec, epoch, module, optimizer), row



def _autocast(recipe, device: torch.device):
    return torch.autocast(device.type, dtype=torch.bfloat16,
                          enabled=recipe.precision == "bf16")


def scratch_epoch(state, images: torch.Tensor, labels: torch.Tensor,
                on_step=None,
                adversarial: torch.Tensor | None = None,
                view_workers=None) -> dict[str, Any]:
    """The from-scratch epoch of commit 93d2b5c."""
    recipe, model, optimizer = state.recipe, state.model, state.optimizer
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
    device = images.device
    n = len(labels)
    draws = epoch_draws(recipe, n, epoch)
    per_epoch = math.ceil(n / recipe.batch_size)
    total = per_epoch * recipe.epochs
    order = torch.as_tensor(draws.order, device=device)
    dx = torch.as_tensor(draws.dx, device=device)
    dy = torch.as_tensor(draws.dy, device=device)
    flip = torch.as_tensor(draws.flip, device=device)
    criterion = nn.CrossEntropyLoss(label_smoothing=recipe.label_smoothing, reduction="sum")
    model.train()
    loss_sum = torch.zeros((), device=device, dtype=torch.float64)
    correct = torch.zeros((), device=device, dtype=torch.int64)
    lr = recipe.lr
    view_stream = make_views = None
    if recipe.method in AUGMIX_METHODS:
        make_views = augmix_maker(recipe, epoch, int(images.shape[1]))
        if view_workers is not None:
            raise VcrbenchError("the reference runs without view workers")
    for step in range(per_epoch):
        positions = slice(step * recipe.batch_size, (step + 1) * recipe.batch_size)
        index = order[positions]
        batch = pad_crop_flip(images[index], dx[positions], dy[positions], flip[positions],
                        recipe.crop_padding)
        y = labels[index]
        if recipe.method in AUGMIX_METHODS:
            # AugMix's CIFAR script: the image and its two views in one batch (shared batch
            # statistics), the loss on the image's logits plus the consistency of all three;
            # REVa's methods add the counterpart, cropped and flipped as the image
            if view_stream is not None:
                views = [v.to(device, non_blocking=True) for v in next(view_stream)]
            else:
                views = make_views(batch, range(positions.start, positions.start + len(y)))
            if needs:
                views.append(pad_crop_flip(adversarial[index], dx[positions], dy[positions],
                                     flip[positions], recipe.crop_padding))
            batch = torch.cat([batch, *views])
        x = normalise(batch, recipe)
        lr = _scratch_learning_rate(recipe, (epoch - 1) * per_epoch + step, total)
        for group in optimizer.param_groups:
            group["lr"] = lr
        with _autocast(recipe, device):
            all_logits = model(x).float()
        parts = all_logits.split(len(y))
        logits = parts[0]
        loss = criterion(logits, y)
        if recipe.method in AUGMIX_METHODS:
            consistency = recipe.augmix.lam * jensen_shannon(
                [part.softmax(1) for part in parts[:3]]).sum()
            if needs:  # REVa's Eq. 2
                gamma = recipe.reva.gamma
                consistency = gamma * (criterion(parts[3], y) + consistency)
            loss = loss + consistency
        optimizer.zero_grad(set_to_none=True)
        (loss / len(y)).backward()
        if recipe.clip_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), recipe.clip_grad_norm)
        optimizer.step()
        loss_sum += loss.detach().double()
        correct += (logits.detach().argmax(1) == y).sum()
        if on_step is not None:
            on_step(step + 1, per_epoch)
    state.epoch = epoch
    row = {"epoch": epoch, "lr": lr, "loss": float(loss_sum) / n,
           "accuracy": int(correct) / n}
    state.log.append(row)
    return row
