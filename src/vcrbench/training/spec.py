"""The settings of one fine-tuning entry and what they determine for every epoch.

:class:`TrainingSpec` is a validated ``finetune[]`` entry (defaults filled); it is stored in
every checkpoint, and an epoch refuses to continue from a checkpoint trained with other
settings. The training method (:data:`METHODS`) and its settings (:class:`AugMixSettings`,
:class:`RevaSettings`, :class:`PgdSettings`) are part of it; a ``standard`` entry stores exactly
the keys it stored before methods existed, so its checkpoints stay valid.
:meth:`TrainingSpec.key` keys every random draw of an epoch (stream
:data:`~vcrbench.core.seeding.FINETUNE`), :func:`epoch_order` is the epoch's order of the
images and :func:`learning_rate` its rate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from vcrbench.core.seeding import EPOCH_ORDER, FINETUNE
from vcrbench.errors import VcrbenchError

#: ``finetune[].method``: standard (cross-entropy on the entry's augmentation), augmix (AugMix
#: views and its Jensen–Shannon loss), reva_minus (REVa with AugMix's own operations) and reva
#: (REVa: AugMix with the targeted corruptions, PGD counterparts, Eq. 2).
METHODS = ("standard", "augmix", "reva_minus", "reva")
#: Methods with AugMix views; methods with PGD counterparts.
AUGMIX_METHODS = ("augmix", "reva_minus", "reva")
ADVERSARIAL_METHODS = ("reva_minus", "reva")


@dataclass(frozen=True)
class AugMixSettings:
    """AugMix (Hendrycks et al. 2020), config ``finetune[].augmix``.

    Attributes:
        width: chains per view (k).
        depth: operations per chain, or None for U{1, 2, 3} drawn per chain.
        alpha: concentration of the chain weights ~ Dirichlet(alpha, …) and of the mix with the
            clean image ~ Beta(alpha, alpha).
        severity: operation severity on AugMix's 1–10 scale (level ~ U(0.1, severity)).
        lam: λ, the weight of the Jensen–Shannon consistency term.
    """

    width: int = 3
    depth: int | None = None
    alpha: float = 1.0
    severity: float = 3.0
    lam: float = 12.0

    @classmethod
    def from_config(cls, augmix: Mapping[str, Any]) -> AugMixSettings:
        """From a config ``augmix`` mapping (``lambda`` is :attr:`lam`); unset keys keep the
        defaults."""
        return cls(width=int(augmix.get("width", 3)),
                   depth=None if augmix.get("depth") is None else int(augmix["depth"]),
                   alpha=float(augmix.get("alpha", 1.0)),
                   severity=float(augmix.get("severity", 3)),
                   lam=float(augmix.get("lambda", 12.0)))


@dataclass(frozen=True)
class PgdSettings:
    """The PGD counterparts (config ``finetune[].reva.pgd``; ε and α in fractions of the
    0–255 range): crafted on the base model once, or with ``recraft`` on the model at the start
    of every epoch."""

    eps: float = 8 / 255
    alpha: float = 2 / 255
    steps: int = 40
    random_start: bool = True
    recraft: bool = False

    @classmethod
    def from_config(cls, pgd: Mapping[str, Any]) -> PgdSettings:
        """From ``finetune[].reva.pgd`` (``shard_size`` is the workflow's, not a setting)."""
        return cls(eps=float(pgd.get("eps", 8 / 255)), alpha=float(pgd.get("alpha", 2 / 255)),
                   steps=int(pgd.get("steps", 40)),
                   random_start=bool(pgd.get("random_start", True)),
                   recraft=bool(pgd.get("recraft", False)))


@dataclass(frozen=True)
class RevaSettings:
    """REVa's enhancement (config ``finetune[].reva``).

    Attributes:
        targeted: the corruptions added to the AugMix operations (empty for reva_minus).
        severity: their ImageNet-C severity (1–5), or None when ``domain_fraction`` is set.
        domain_fraction: else the point ``identity + f · (strongest − identity)`` of each
            parameter's domain.
        augmix_ops: whether the nine AugMix operations stay in the pool next to the targeted
            corruptions (the paper adds them to AugMix's operations).
        gamma: γ of Eq. 2, the weight of the adversarial and corruption terms.
        pgd: the PGD counterparts.
    """

    targeted: tuple[str, ...] = ()
    severity: int | None = 3
    domain_fraction: float | None = None
    augmix_ops: bool = True
    gamma: float = 0.5
    pgd: PgdSettings = field(default_factory=PgdSettings)


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
        method: :data:`METHODS`; augmix, reva: that method's settings.
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
    method: str = "standard"
    augmix: AugMixSettings = field(default_factory=AugMixSettings)
    reva: RevaSettings = field(default_factory=RevaSettings)

    @classmethod
    def from_config(cls, entry: Mapping[str, Any], run_seed: int,
                    targeted: list[str] | None = None) -> TrainingSpec:
        """From a validated ``finetune`` entry; ``seed: null`` takes the run's seed.

        ``targeted``: the corruptions of ``reva.targeted: auto`` (the non-robust group that the
        workflow read from REVa's groups table); an explicit list in the entry is used as is.
        """
        augmentation, optimizer, schedule = (
            entry["augmentation"], entry["optimizer"], entry["schedule"]
        )
        method = entry.get("method", "standard")
        augmix, reva = entry.get("augmix") or {}, entry.get("reva") or {}
        if method == "reva":
            if reva.get("targeted", "auto") == "auto":
                if targeted is None:
                    raise VcrbenchError(
                        f"finetune {entry['name']}: reva.targeted is auto; pass the non-robust "
                        "corruptions of REVa's groups table (the workflow does)")
            else:
                targeted = list(reva["targeted"])
        else:
            targeted = []
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
            method=method,
            augmix=AugMixSettings.from_config(augmix),
            reva=RevaSettings(
                targeted=tuple(targeted),
                severity=None if reva.get("domain_fraction") is not None else int(
                    reva.get("severity", 3)),
                domain_fraction=None if reva.get("domain_fraction") is None else float(
                    reva["domain_fraction"]),
                augmix_ops=bool(reva.get("augmix_ops", True)),
                gamma=float(reva.get("gamma", 0.5)),
                pgd=PgdSettings.from_config(reva.get("pgd") or {}),
            ),
        )

    def as_dict(self) -> dict[str, Any]:
        """The settings as stored in a checkpoint: a ``standard`` entry without the method
        keys (as before methods existed), an ``augmix`` one without REVa's."""
        settings = asdict(self)
        settings["reva"]["targeted"] = list(self.reva.targeted)
        if self.method == "standard":
            for key in ("method", "augmix", "reva"):
                del settings[key]
        elif self.method == "augmix":
            del settings["reva"]
        return settings

    def key(self, epoch: int, stream: int, *spawn: int) -> np.random.SeedSequence:
        """The seed sequence of sub-stream ``stream`` (:data:`~vcrbench.core.seeding.
        EPOCH_ORDER` …) of epoch ``epoch``, item ``spawn`` (e.g. a position in the epoch)."""
        return FINETUNE.key(self.seed, f"finetune/{self.name}", spawn=(epoch, stream, *spawn))


def epoch_order(n_images: int, spec: TrainingSpec, epoch: int) -> np.ndarray:
    """The epoch's order of the training images: a permutation of ``range(n_images)`` keyed by
    ``(seed, name, epoch)``; position ``p`` of the epoch is image ``order[p]``."""
    return np.random.default_rng(spec.key(epoch, EPOCH_ORDER)).permutation(n_images)


def learning_rate(spec: TrainingSpec, epoch: int) -> float:
    """The learning rate of epoch ``epoch`` (1-based)."""
    if spec.schedule == "constant":
        return spec.lr
    if spec.schedule == "cosine":
        return spec.lr * 0.5 * (1.0 + math.cos(math.pi * (epoch - 1) / spec.epochs))
    if spec.schedule == "step":
        return spec.lr * spec.gamma ** ((epoch - 1) // spec.step_size)
    raise VcrbenchError(f"schedule {spec.schedule!r} is not constant, cosine or step")
