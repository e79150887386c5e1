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
#: Data regimes that the ``auto`` settings follow: CIFAR (32 px, CIFAR-10/100 labels) or
#: ImageNet (224 px, ImageNet labels), from the training images' label space.
REGIMES = ("cifar", "imagenet")
#: AugMix's operation severity per regime (AugMix's and the REVa authors' scripts: 3 on CIFAR,
#: 1 on ImageNet).
AUGMIX_SEVERITY = {"cifar": 3.0, "imagenet": 1.0}
#: PGD counterparts per regime, (ε, α) in fractions of the 0–255 range (the REVa authors'
#: scripts: 8/255 and 2/255 on CIFAR, 4/255 and 1/255 on ImageNet-100).
PGD_EPS_ALPHA = {"cifar": (8 / 255, 2 / 255), "imagenet": (4 / 255, 1 / 255)}
#: ``finetune[].geometry.crop`` values: none, ``pad`` (zero-pad then a random crop of the
#: image's size: AugMix's CIFAR crop) and ``resized`` (a random area and aspect ratio resized
#: back to the image's size: torchvision's RandomResizedCrop, AugMix's ImageNet crop).
CROPS = ("none", "pad", "resized")
#: ``finetune[].geometry.adversarial``: how the PGD counterpart is cropped and flipped: not at
#: all, with the clean image's draws, or with draws of its own.
ADVERSARIAL_GEOMETRIES = ("none", "same", "independent")


def resolve_geometry(geometry: Mapping[str, Any], method: str, regime: str) -> dict[str, Any]:
    """The crops and flips of ``finetune[].geometry`` with ``auto`` resolved.

    ``auto`` follows the REVa authors' scripts (AugMix's data pipeline) for the AugMix methods
    (:data:`AUGMIX_METHODS`): ``crop`` pad on CIFAR, resized on ImageNet; ``flip`` true;
    ``adversarial`` none on CIFAR (their CIFAR script feeds the counterpart as stored),
    independent on ImageNet (their ImageNet-100 script crops and flips it with draws of its
    own). For ``standard`` on ImageNet (the VCR and NOC fine-tuning, and REVa's Standard unless
    set): no crop, no flip. On CIFAR every method crops (pad) and flips: a model trained here
    learnt with CIFAR's pad-4 crops and flips (AugMix's recipe, the fast recipe), and fine-tuning
    it on 32 px images without them overfits the few images it sees. Returns ``crop``,
    ``padding`` (px), ``scale`` (two area fractions), ``flip`` (bool) and ``adversarial``.
    """
    _check_regime(regime)
    augmix = method in AUGMIX_METHODS
    crops_and_flips = augmix or regime == "cifar"
    crop = geometry.get("crop", "auto")
    if crop == "auto":
        crop = ("pad" if regime == "cifar" else "resized") if crops_and_flips else "none"
    flip = geometry.get("flip", "auto")
    if flip == "auto":
        flip = crops_and_flips
    adversarial = geometry.get("adversarial", "auto")
    if adversarial == "auto":
        adversarial = ("none" if regime == "cifar" else "independent") if (
            method in ADVERSARIAL_METHODS) else "none"
    padding = geometry.get("padding", 4)
    scale = tuple(geometry.get("scale", (0.08, 1.0)))
    problems = []
    if crop not in CROPS:
        problems.append(f"crop is {crop!r}; allowed: auto, {', '.join(CROPS)}")
    if not isinstance(flip, bool):
        problems.append(f"flip is {flip!r}; allowed: auto, true, false")
    if adversarial not in ADVERSARIAL_GEOMETRIES:
        problems.append(f"adversarial is {adversarial!r}; allowed: auto, "
                        f"{', '.join(ADVERSARIAL_GEOMETRIES)}")
    if isinstance(padding, bool) or not isinstance(padding, int) or padding < 0:
        problems.append(f"padding must be an integer >= 0 (px), got {padding!r}")
    if len(scale) != 2 or not 0 < scale[0] <= scale[1] <= 1:
        problems.append(f"scale must be [lo, hi] with 0 < lo <= hi <= 1 (fractions of the "
                        f"image's area), got {list(scale)!r}")
    if problems:
        raise VcrbenchError("geometry: " + "; ".join(problems))
    return {"crop": crop, "padding": int(padding), "scale": (float(scale[0]), float(scale[1])),
            "flip": flip, "adversarial": adversarial}


def resolve_clip(value: Any, method: str, regime: str) -> float | None:
    """``finetune[].clip_grad_norm``: ``auto`` is 1.0 for the REVa methods on CIFAR (the
    authors' CIFAR script) and None (no clipping) otherwise (AugMix's scripts and the authors'
    ImageNet-100 script do not clip); null is None; a number > 0 is the bound on the gradient's
    L2 norm over the learning parameters."""
    _check_regime(regime)
    if value == "auto":
        return 1.0 if method in ADVERSARIAL_METHODS and regime == "cifar" else None
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise VcrbenchError(f"clip_grad_norm must be auto, null or a number > 0, got {value!r}")
    return float(value)


def regime_of(dataset: Mapping[str, Any]) -> str:
    """The regime (:data:`REGIMES`) of a validated config dataset block: ``cifar`` for CIFAR-10
    / CIFAR-100 labels, else ``imagenet``."""
    from vcrbench.data.datasets import label_space

    return "cifar" if label_space(dataset).name in ("cifar10", "cifar100") else "imagenet"


def _check_regime(regime: str) -> None:
    if regime not in REGIMES:
        raise VcrbenchError(f"data regime must be one of {REGIMES}, got {regime!r}")


def augmix_severity(value: Any, regime: str) -> float:
    """AugMix's operation severity of a config value: ``auto`` (or unset) gives the regime's
    (:data:`AUGMIX_SEVERITY`), a number in [0.1, 10] itself."""
    _check_regime(regime)
    if value is None or value == "auto":
        return AUGMIX_SEVERITY[regime]
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.1 <= value <= 10:
        raise VcrbenchError(f"augmix.severity must be auto or a number in [0.1, 10] (AugMix's "
                            f"1-10 scale), got {value!r}")
    return float(value)


def resolve_pgd(pgd: Mapping[str, Any], regime: str) -> dict[str, Any]:
    """``finetune[].reva.pgd`` with ``eps`` and ``alpha`` of ``auto`` (or unset) replaced by the
    regime's (:data:`PGD_EPS_ALPHA`); the other keys as given."""
    _check_regime(regime)
    out = dict(pgd)
    for key, default in zip(("eps", "alpha"), PGD_EPS_ALPHA[regime], strict=True):
        value = out.get(key, "auto")
        if value == "auto":
            value = default
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise VcrbenchError(f"reva.pgd.{key} must be auto or a number > 0 (a fraction of "
                                f"the 0-255 range, e.g. {default:.6f}), got {value!r}")
        out[key] = float(value)
    return out


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
    def from_config(cls, augmix: Mapping[str, Any], regime: str) -> AugMixSettings:
        """From a config ``augmix`` mapping (``lambda`` is :attr:`lam`); unset keys keep the
        defaults, ``severity: auto`` (or unset) is the regime's (:func:`augmix_severity`)."""
        return cls(width=int(augmix.get("width", 3)),
                   depth=None if augmix.get("depth") is None else int(augmix["depth"]),
                   alpha=float(augmix.get("alpha", 1.0)),
                   severity=augmix_severity(augmix.get("severity", "auto"), regime),
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
    def from_config(cls, pgd: Mapping[str, Any], regime: str) -> PgdSettings:
        """From ``finetune[].reva.pgd`` (``shard_size`` is the workflow's, not a setting);
        ``eps`` / ``alpha`` of ``auto`` are the regime's (:func:`resolve_pgd`)."""
        pgd = resolve_pgd(pgd, regime)
        return cls(eps=pgd["eps"], alpha=pgd["alpha"],
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
        crop: :data:`CROPS`; crop_padding: px of ``pad``; crop_scale: area fractions of
            ``resized``; flip: random horizontal flips; adversarial_geometry:
            :data:`ADVERSARIAL_GEOMETRIES` (:func:`resolve_geometry`).
        clip_grad_norm: bound on the gradient's L2 norm per step, or None.
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
    crop: str = "none"
    crop_padding: int = 4
    crop_scale: tuple[float, float] = (0.08, 1.0)
    flip: bool = False
    adversarial_geometry: str = "none"
    clip_grad_norm: float | None = None

    @property
    def geometric(self) -> bool:
        """Whether the training images are cropped or flipped."""
        return self.crop != "none" or self.flip

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
        regime = regime_of(entry["train"])
        try:
            geometry = resolve_geometry(entry.get("geometry") or {}, method, regime)
            clip = resolve_clip(entry.get("clip_grad_norm", "auto"), method, regime)
        except VcrbenchError as error:
            raise VcrbenchError(f"finetune {entry['name']}: {error}") from None
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
            augmix=AugMixSettings.from_config(augmix, regime),
            reva=RevaSettings(
                targeted=tuple(targeted),
                severity=None if reva.get("domain_fraction") is not None else int(
                    reva.get("severity", 3)),
                domain_fraction=None if reva.get("domain_fraction") is None else float(
                    reva["domain_fraction"]),
                augmix_ops=bool(reva.get("augmix_ops", True)),
                gamma=float(reva.get("gamma", 0.5)),
                pgd=PgdSettings.from_config(reva.get("pgd") or {}, regime),
            ),
            crop=geometry["crop"], crop_padding=geometry["padding"],
            crop_scale=geometry["scale"], flip=geometry["flip"],
            adversarial_geometry=geometry["adversarial"], clip_grad_norm=clip,
        )

    def as_dict(self) -> dict[str, Any]:
        """The settings as stored in a checkpoint: a ``standard`` entry without the method
        keys (as before methods existed), an ``augmix`` one without REVa's; without the crop,
        flip and clipping keys when none is used (as before they existed)."""
        settings = asdict(self)
        settings["reva"]["targeted"] = list(self.reva.targeted)
        settings["crop_scale"] = list(self.crop_scale)
        if not self.geometric and self.adversarial_geometry == "none" and (
                self.clip_grad_norm is None):
            for key in ("crop", "crop_padding", "crop_scale", "flip", "adversarial_geometry",
                        "clip_grad_norm"):
                del settings[key]
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
