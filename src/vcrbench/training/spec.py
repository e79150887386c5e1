"""The settings of one fine-tuning entry and what they determine for every epoch.

:class:`TrainingSpec` is a validated ``finetune[]`` entry (defaults filled); it is stored in
every checkpoint, and an epoch refuses to continue from a checkpoint trained with other
settings. :meth:`TrainingSpec.key` keys every random draw of an epoch (stream
:data:`~vcrbench.core.seeding.FINETUNE`), and :func:`learning_rate` is the epoch's rate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from vcrbench.core.seeding import FINETUNE
from vcrbench.errors import VcrbenchError


@dataclass(frozen=True)
class TrainingSpec:
    """The settings of one fine-tuning entry (config ``finetune[]``, defaults filled).

    Attributes:
        name: entry name (folder ``models/<name>``, model ``finetuned:<name>``).
        base: registry model name it starts from.
        corruption: augmentation corruption, or None for plain fine-tuning.
        fraction: share of each batch that is corrupted, in [0, 1].
        spacing: parameter spacing of the augmentation, ``linear`` (U(C)) or ``visual``.
        epochs, batch_size: passes over the data; images per step.
        trainable: ``all``, ``classifier`` or ``last:<k>``.
        batchnorm: ``frozen`` or ``train``.
        lr, momentum, weight_decay, nesterov: SGD settings.
        schedule, step_size, gamma: learning-rate schedule per epoch.
        seed: seed of every draw.
    """

    name: str
    base: str
    corruption: str | None
    fraction: float
    spacing: str
    epochs: int
    batch_size: int
    trainable: str
    batchnorm: str
    lr: float
    momentum: float
    weight_decay: float
    nesterov: bool
    schedule: str
    step_size: int
    gamma: float
    seed: int

    @classmethod
    def from_config(cls, entry: Mapping[str, Any], run_seed: int) -> TrainingSpec:
        """From a validated ``finetune`` entry; ``seed: null`` takes the run's seed."""
        augmentation, optimizer, schedule = (
            entry["augmentation"], entry["optimizer"], entry["schedule"]
        )
        return cls(
            name=entry["name"],
            base=entry["base"],
            corruption=augmentation["corruption"],
            fraction=float(augmentation["fraction"]),
            spacing=augmentation["spacing"],
            epochs=int(entry["epochs"]),
            batch_size=int(entry["batch_size"]),
            trainable=entry["trainable"],
            batchnorm=entry["batchnorm"],
            lr=float(optimizer["lr"]),
            momentum=float(optimizer["momentum"]),
            weight_decay=float(optimizer["weight_decay"]),
            nesterov=bool(optimizer["nesterov"]),
            schedule=schedule["kind"],
            step_size=int(schedule["step_size"]),
            gamma=float(schedule["gamma"]),
            seed=int(run_seed if entry["seed"] is None else entry["seed"]),
        )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def key(self, epoch: int, stream: int, *spawn: int) -> np.random.SeedSequence:
        """The seed sequence of sub-stream ``stream`` (:data:`~vcrbench.core.seeding.
        EPOCH_ORDER` …) of epoch ``epoch``, item ``spawn`` (e.g. a position in the epoch)."""
        return FINETUNE.key(self.seed, f"finetune/{self.name}", spawn=(epoch, stream, *spawn))


def learning_rate(spec: TrainingSpec, epoch: int) -> float:
    """The learning rate of epoch ``epoch`` (1-based)."""
    if spec.schedule == "constant":
        return spec.lr
    if spec.schedule == "cosine":
        return spec.lr * 0.5 * (1.0 + math.cos(math.pi * (epoch - 1) / spec.epochs))
    if spec.schedule == "step":
        return spec.lr * spec.gamma ** ((epoch - 1) // spec.step_size)
    raise VcrbenchError(f"schedule {spec.schedule!r} is not constant, cosine or step")
