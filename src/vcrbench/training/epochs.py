"""The one epoch loop of fine-tuning and of training from scratch: every optimiser step of an
epoch, whatever the path; what differs between the paths is the :class:`EpochRecipe`.

One step (:func:`run_epoch`), for each :class:`Step` the recipe's ``steps`` yield:

1. the learning rate: with ``schedule_unit`` ``"step"`` the recipe's rate of the epoch's step
   (0-based) is set on every parameter group before the step; with ``"epoch"`` the rate of
   step 0 is set once before the first step (the fine-tuning schedules are functions of the
   epoch);
2. the forward pass: every view of the batch through the module in one batch (shared batch
   statistics), under bfloat16 autocast when ``precision`` is ``"bf16"``, the logits cast to
   float32 and split into the views by name;
3. the loss: ``loss(logits, target)`` reduced as ``reduction`` says: ``"mean"`` takes one loss
   per image ``(B,)`` and minimises their mean (fine-tuning's losses,
   :mod:`vcrbench.training.losses`); ``"sum"`` takes the batch's summed loss ``()`` and
   minimises it divided by ``B`` (AugMix's CIFAR script, :class:`~vcrbench.training.losses.
   SummedLoss`). The two are equal in exact arithmetic and differ in the last bits, so each path
   keeps its own;
4. ``zero_grad``, backward, the gradient's L2 norm over ``parameters`` clipped to
   ``clip_grad_norm`` when set, the optimiser's step;
5. the epoch's sums (:class:`EpochTotals`): with ``"mean"`` per image in float64 on the CPU,
   split by :attr:`Step.corrupted` (the fine-tuning log's clean / corrupted columns); with
   ``"sum"`` the batch sums added in float64 on the training device (no synchronisation per
   step on a GPU). Accuracy is top-1 of the :data:`~vcrbench.training.views.INPUT` view.

Before the first step the module is put in ``memory_format`` for the epoch (and back to the
contiguous format after it; None leaves the module as it is: a from-scratch model is
channels-last from its creation) and, with ``torch_seed``, torch's global generator is seeded
(dropout). Inputs are channels-last in both paths (the steps make them so).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import torch

from vcrbench.errors import VcrbenchError
from vcrbench.training.losses import Loss
from vcrbench.training.views import INPUT

#: How the learning rate is stepped, and how the loss of a batch is reduced.
SCHEDULE_UNITS = ("epoch", "step")
REDUCTIONS = ("mean", "sum")


@dataclass(frozen=True)
class Step:
    """The input of one optimiser step.

    Attributes:
        x: ``(V·B, 3, H, W)`` float32 model inputs (preprocessed, channels-last): the ``V``
            views of the batch's ``B`` images, view after view.
        views: the views' names in ``x``'s order; the first is :data:`~vcrbench.training.
            views.INPUT`.
        target: ``(B,)`` int64 labels on ``x``'s device.
        corrupted: ``(B,)`` bool, the images whose input view is corrupted (reduction
            ``"mean"``: the log's clean / corrupted split), or None (none is).
    """

    x: torch.Tensor
    views: tuple[str, ...]
    target: torch.Tensor
    corrupted: np.ndarray | None = None


@dataclass(frozen=True)
class EpochRecipe:
    """What one path's epoch is made of (module docstring): the model and its optimiser, the
    schedule and its unit, the loss and its reduction, precision, memory format and the
    steps (the data source, the order and the views of each batch, keyed as the path keys
    them).

    Attributes:
        module: the model, in the modes it trains in (the caller sets them).
        parameters: the parameters that learn (clipped together).
        optimizer: their optimiser.
        steps: the epoch's steps, in order (an iterable made for this epoch).
        n_steps: how many ``steps`` yields.
        learning_rate: the rate of step ``s`` (0-based) of the epoch.
        schedule_unit: ``"epoch"`` or ``"step"`` (:data:`SCHEDULE_UNITS`).
        loss: view name -> logits, target -> the loss (reduced as ``reduction`` says).
        reduction: ``"mean"`` or ``"sum"`` (:data:`REDUCTIONS`).
        precision: ``"fp32"`` or ``"bf16"`` (autocast).
        clip_grad_norm: bound on the gradient's L2 norm, or None.
        memory_format: the module's memory format during the epoch, or None (as it is).
        torch_seed: seed of torch's global generator for the epoch, or None (not seeded).
        on_step: called with ``(step, n_steps, totals)`` (step 1-based, the sums so far) after
            each step.
    """

    module: torch.nn.Module
    parameters: list[torch.nn.Parameter]
    optimizer: torch.optim.Optimizer
    steps: Iterable[Step]
    n_steps: int
    learning_rate: Callable[[int], float]
    schedule_unit: Literal["epoch", "step"]
    loss: Loss
    reduction: Literal["mean", "sum"]
    precision: str = "fp32"
    clip_grad_norm: float | None = None
    memory_format: torch.memory_format | None = None
    torch_seed: int | None = None
    on_step: Callable[[int, int, EpochTotals], None] | None = None

    def __post_init__(self) -> None:
        if self.schedule_unit not in SCHEDULE_UNITS or self.reduction not in REDUCTIONS:
            raise VcrbenchError(f"epoch recipe: schedule_unit {self.schedule_unit!r} must be one "
                                f"of {SCHEDULE_UNITS}, reduction {self.reduction!r} one of "
                                f"{REDUCTIONS}")


@dataclass
class EpochTotals:
    """The sums of an epoch (module docstring, step 5).

    ``loss``, ``correct``, ``count``: per part, ``"clean"`` and ``"corrupted"`` (reduction
    ``"mean"``) or ``"all"`` (``"sum"``; the loss a float64 and the count an int64 tensor on
    the training device until :meth:`summed`). ``lr``: the rate of the epoch's last step.
    """

    loss: dict[str, float | torch.Tensor] = field(default_factory=dict)
    correct: dict[str, int | torch.Tensor] = field(default_factory=dict)
    count: dict[str, int] = field(default_factory=dict)
    lr: float = 0.0

    def add_per_image(self, losses: torch.Tensor, correct: torch.Tensor,
                      corrupted: np.ndarray | None) -> None:
        values = losses.detach().double().cpu().numpy()
        hits = correct.cpu().numpy()
        if corrupted is None:
            corrupted = np.zeros(len(values), bool)
        for part, rows in (("corrupted", corrupted), ("clean", ~corrupted)):
            self.loss[part] = self.loss.get(part, 0.0) + float(values[rows].sum())
            self.correct[part] = self.correct.get(part, 0) + int(hits[rows].sum())
            self.count[part] = self.count.get(part, 0) + len(values[rows])

    def add_summed(self, loss: torch.Tensor, correct: torch.Tensor, n: int) -> None:
        if "all" not in self.loss:
            self.loss["all"] = torch.zeros((), device=loss.device, dtype=torch.float64)
            self.correct["all"] = torch.zeros((), device=loss.device, dtype=torch.int64)
            self.count["all"] = 0
        self.loss["all"] += loss.detach().double()
        self.correct["all"] += correct.sum()
        self.count["all"] += n

    def summed(self) -> tuple[float, int, int]:
        """``(loss sum, correct, images)`` over every part."""
        parts = list(self.count)
        return (sum(float(self.loss[p]) for p in parts), sum(int(self.correct[p]) for p in parts),
                sum(self.count[p] for p in parts))


def sgd(parameters: list[torch.nn.Parameter], lr: float, momentum: float, weight_decay: float,
        nesterov: bool) -> torch.optim.SGD:
    """The optimiser of both paths: SGD with momentum, Nesterov's when asked and momentum > 0
    (torch refuses Nesterov without momentum), L2 weight decay on ``parameters``."""
    return torch.optim.SGD(parameters, lr=lr, momentum=momentum, weight_decay=weight_decay,
                           nesterov=nesterov and momentum > 0)


def autocast(precision: str, device: torch.device):
    """The autocast context of ``precision``: bfloat16 for ``"bf16"``, none for ``"fp32"``."""
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=precision == "bf16")


def run_epoch(recipe: EpochRecipe) -> EpochTotals:
    """Train one epoch as ``recipe`` says (module docstring); returns its sums."""
    module, optimizer = recipe.module, recipe.optimizer
    if recipe.memory_format is not None:
        module.to(memory_format=recipe.memory_format)
    if recipe.torch_seed is not None:
        torch.manual_seed(recipe.torch_seed)
    totals = EpochTotals()
    for step, batch in enumerate(recipe.steps):
        if recipe.schedule_unit == "step" or step == 0:
            totals.lr = recipe.learning_rate(step)
            for group in optimizer.param_groups:
                group["lr"] = totals.lr
        n = len(batch.target)
        with autocast(recipe.precision, batch.x.device):
            out = module(batch.x).float()
        logits = dict(zip(batch.views, out.split(n), strict=True))
        loss = recipe.loss(logits, batch.target)
        optimizer.zero_grad(set_to_none=True)
        (loss.mean() if recipe.reduction == "mean" else loss / n).backward()
        if recipe.clip_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(recipe.parameters, recipe.clip_grad_norm)
        optimizer.step()
        with torch.no_grad():
            correct = logits[INPUT].detach().argmax(1) == batch.target
        if recipe.reduction == "mean":
            totals.add_per_image(loss, correct, batch.corrupted)
        else:
            totals.add_summed(loss, correct, n)
        if recipe.on_step is not None:
            recipe.on_step(step + 1, recipe.n_steps, totals)
    if recipe.memory_format is not None:
        module.to(memory_format=torch.contiguous_format)
    return totals
