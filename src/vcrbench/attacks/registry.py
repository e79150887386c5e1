"""The attacks by name, their parameters, and :func:`attack_images`, which runs one on uint8
images.

Attacks and defaults (:data:`ATTACKS`; ε, α and ``step`` in fractions of the [0, 1] range):
``fgsm`` (eps 8/255), ``bim``, ``pgd``, ``rfgsm`` (eps 8/255, alpha 2/255, steps 10; PGD also
random_start true), ``mifgsm`` (the same and decay 1.0), all as torchattacks 3.5.1, and
``uap`` (eps 8/255, step 2/255 = ε/4 at that ε, epochs 5, fit_batch_size 32;
:mod:`~vcrbench.attacks.universal`).
torchattacks' BIM takes steps 0 to mean ``min(255 ε + 4, 1.25 · 255 ε)``; here steps ≥ 1.

Quantisation: an attack runs on float images ``x = image / 255``; its result is rounded to
uint8 (``torch.round`` of ``x' · 255``: half to even, as every corrupted image of the pipeline)
and then clipped to ``[image − m, image + m] ∩ [0, 255]`` with ``m = ⌊255 ε + 10⁻⁶⌋`` grey
levels (the 10⁻⁶ absorbs float round-off, so that ε = 8/255 gives 8), so ``‖δ‖∞ ≤ ε`` holds on
the stored pixels (rounding alone could exceed ε by half a grey level when 255 ε is not an
integer, e.g. ε = 0.1 allows 25 levels, not 25.5).

Randomness: PGD's uniform start and R-FGSM's normal draws for image ``image_id`` come from
:data:`vcrbench.core.seeding.ATTACK` keyed by ``(seed, attack name, image_id)`` (numpy float32
on the CPU, then moved to the device), so an image's adversarial version does not depend on the
batch it is in, the batch size or the device, up to the float round-off of the model's batched
kernels (which could flip the sign of a near-zero gradient).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
import torch

from vcrbench.attacks import gradient, universal
from vcrbench.attacks.forward import Forward
from vcrbench.core.progress import Progress
from vcrbench.core.seeding import ATTACK
from vcrbench.errors import VcrbenchError

EPS, ALPHA, STEPS = 8 / 255, 2 / 255, 10


@dataclass(frozen=True)
class Attack:
    """One attack: its parameters with their defaults (torchattacks' for the gradient attacks;
    ε, α and ``step`` are fractions of the [0, 1] range) and a line on what it does."""

    name: str
    defaults: Mapping[str, float | int | bool] = field(default_factory=dict)
    docs: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "defaults", MappingProxyType(dict(self.defaults)))


ATTACKS: Mapping[str, Attack] = MappingProxyType({a.name: a for a in (
    Attack("fgsm", {"eps": EPS}, "one signed gradient step of size eps"),
    Attack("bim", {"eps": EPS, "alpha": ALPHA, "steps": STEPS},
           "steps signed steps of size alpha, projected onto the eps-ball"),
    Attack("pgd", {"eps": EPS, "alpha": ALPHA, "steps": STEPS, "random_start": True},
           "BIM from a uniform random start in the eps-ball (random_start false: from x)"),
    Attack("rfgsm", {"eps": EPS, "alpha": ALPHA, "steps": STEPS},
           "BIM from x + alpha sign(N(0, 1)) (torchattacks' iterative R-FGSM)"),
    Attack("mifgsm", {"eps": EPS, "alpha": ALPHA, "steps": STEPS, "decay": 1.0},
           "BIM on the momentum of the L1-normalised gradients"),
    Attack("uap", {"eps": EPS, "step": ALPHA, "epochs": 5, "fit_batch_size": 32},
           "one universal perturbation for the whole set, fitted by signed-gradient ascent"),
)})

_INTEGERS = ("steps", "epochs", "fit_batch_size")
_BOOLEANS = ("random_start",)


def check_attack_params(name: str, params: Mapping[str, float] | None = None) -> dict:
    """An attack's parameters: its defaults with ``params`` applied, checked (no torch work).

    Integers (``steps``, ``epochs``, ``fit_batch_size``) come back as ``int``, ``random_start``
    as ``bool``, the rest as ``float``. Raises :class:`VcrbenchError` naming an unknown attack
    or parameter, or a bad value, and what is allowed.
    """
    if name not in ATTACKS:
        raise VcrbenchError(f"unknown attack {name!r}; known: {', '.join(ATTACKS)}")
    defaults = ATTACKS[name].defaults
    unknown = sorted(set(params or {}) - set(defaults))
    if unknown:
        raise VcrbenchError(f"attack {name}: unknown parameters {unknown}; its parameters: "
                            f"{', '.join(defaults)}")
    merged = {**defaults, **(params or {})}
    for key, value in merged.items():
        if key in _BOOLEANS:
            if value not in (0, 1):  # True, False, 0 and 1
                raise VcrbenchError(f"attack {name}: {key} must be true or false, got "
                                    f"{value!r}")
        elif (isinstance(value, bool) or not isinstance(value, numbers.Real)
              or not math.isfinite(value)):
            raise VcrbenchError(f"attack {name}: {key} must be a finite number, got {value!r}")
    if not 0 < merged["eps"] <= 1:
        raise VcrbenchError(f"attack {name}: eps must be in (0, 1] (a fraction of the 0–255 "
                            f"range; 8/255 = 0.0314), got {merged['eps']}")
    for key in ("alpha", "step"):
        if key in merged and not merged[key] > 0:
            raise VcrbenchError(f"attack {name}: {key} must be > 0 (a fraction of the 0–255 "
                                f"range; 2/255 = 0.0078), got {merged[key]}")
    for key in _INTEGERS:
        if key in merged and (int(merged[key]) != merged[key] or merged[key] < 1):
            raise VcrbenchError(f"attack {name}: {key} must be an integer >= 1, got "
                                f"{merged[key]}")
    if "decay" in merged and merged["decay"] < 0:
        raise VcrbenchError(f"attack {name}: decay must be >= 0, got {merged['decay']}")
    return {key: int(value) if key in _INTEGERS else bool(value) if key in _BOOLEANS
            else float(value) for key, value in merged.items()}


def _keyed(seed: int, name: str, image_ids: Sequence[str], shape: tuple[int, ...], kind: str,
           like: torch.Tensor) -> torch.Tensor:
    """One float32 draw of ``shape`` per image from the ATTACK stream, stacked on ``like``'s
    device: ``uniform`` on [−1, 1) or ``normal`` N(0, 1)."""
    out = np.empty((len(image_ids), *shape), np.float32)
    for i, image_id in enumerate(image_ids):
        rng = ATTACK.rng(seed, name, str(image_id))
        if kind == "uniform":
            out[i] = rng.random(shape, dtype=np.float32) * 2.0 - 1.0
        else:
            out[i] = rng.standard_normal(shape, dtype=np.float32)
    return torch.from_numpy(out).to(like.device, like.dtype)


def attack_float(name: str, forward: Forward, x: torch.Tensor, labels: torch.Tensor, *,
                 image_ids: Sequence[str], seed: int, params: Mapping[str, float]
                 ) -> torch.Tensor:
    """One per-image attack on a float batch (no quantisation): images ``x`` (B, 3, H, W) in
    [0, 1] on the model's device, true ``labels`` (B,) int64 there, ``image_ids`` (B,) keying the
    random starts -> adversarial images (B, 3, H, W) in [0, 1], within ε of ``x``."""
    p = check_attack_params(name, params)
    if name == "fgsm":
        return gradient.fgsm(forward, x, labels, eps=p["eps"])
    if name == "bim":
        return gradient.bim(forward, x, labels, eps=p["eps"], alpha=p["alpha"],
                            steps=p["steps"])
    if name == "pgd":
        uniform = (_keyed(seed, name, image_ids, tuple(x.shape[1:]), "uniform", x)
                   if p["random_start"] else None)
        return gradient.pgd(forward, x, labels, eps=p["eps"], alpha=p["alpha"],
                            steps=p["steps"], uniform=uniform)
    if name == "rfgsm":
        normal = _keyed(seed, name, image_ids, tuple(x.shape[1:]), "normal", x)
        return gradient.rfgsm(forward, x, labels, eps=p["eps"], alpha=p["alpha"],
                              steps=p["steps"], normal=normal)
    if name == "mifgsm":
        return gradient.mifgsm(forward, x, labels, eps=p["eps"], alpha=p["alpha"],
                               steps=p["steps"], decay=p["decay"])
    raise VcrbenchError(f"attack {name} is not a per-image attack")


def quantise(adversarial: torch.Tensor, clean: torch.Tensor, eps: float) -> torch.Tensor:
    """Float [0, 1] (B, 3, H, W) -> uint8, within ``floor(eps · 255)`` grey levels of the
    uint8 ``clean`` (module docstring)."""
    levels = int(np.floor(eps * 255 + 1e-6))
    rounded = torch.round(adversarial * 255.0).to(torch.int16)
    base = clean.to(torch.int16)
    return torch.clamp(torch.minimum(torch.maximum(rounded, base - levels), base + levels),
                       0, 255).to(torch.uint8)


def _is_integer(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def attack_images(name: str, forward: Forward, images: np.ndarray, labels: np.ndarray, *,
                  image_ids: Sequence[str], seed: int, params: Mapping[str, float] | None = None,
                  batch_size: int = 32, device: str | torch.device = "cpu") -> np.ndarray:
    """Attack uint8 images (N, H, W, 3) of any size (224, CIFAR's 32) with true class
    ``labels`` (N,) of any label space through ``forward``
    (:func:`~vcrbench.attacks.forward.forward_of`): uint8 (N, H, W, 3), within ε of ``images``.

    ``image_ids`` (N,) key the random starts with ``seed``; ``params`` replace the attack's
    defaults (:data:`ATTACKS`). Per-image attacks run ``batch_size`` images at a time on
    ``device`` (the result does not depend on it). The UAP fits one δ on all N images in
    minibatches of its own parameter ``fit_batch_size`` (the fit depends on it and on the
    images' order) and then adds δ to ``batch_size`` images at a time. Raises
    :class:`VcrbenchError` on a bad attack, parameter or input.
    """
    p = check_attack_params(name, params)
    images = np.asarray(images)
    labels = np.asarray(labels)
    image_ids = [str(i) for i in image_ids]
    if images.ndim != 4 or images.shape[-1] != 3 or images.dtype != np.uint8:
        raise VcrbenchError(f"attack {name}: images must be uint8 (N, H, W, 3), got "
                            f"{images.dtype} {images.shape}")
    if labels.shape != (len(images),) or len(image_ids) != len(images):
        raise VcrbenchError(f"attack {name}: {len(images)} images need as many labels and "
                            f"image_ids, got {labels.shape} labels and {len(image_ids)} ids")
    if labels.size and (labels.dtype.kind not in "iu" or labels.min() < 0):
        raise VcrbenchError(f"attack {name}: labels must be class indices >= 0 (untargeted "
                            f"attacks need the true class), got {labels[:5]}…")
    if not _is_integer(batch_size) or batch_size < 1:
        raise VcrbenchError(f"attack {name}: batch_size must be an integer >= 1, got "
                            f"{batch_size!r}")
    if not _is_integer(seed) or seed < 0:
        raise VcrbenchError(f"attack {name}: seed must be an integer >= 0, got {seed!r}")
    size, device = int(batch_size), torch.device(device)
    clean = torch.from_numpy(np.ascontiguousarray(images)).permute(0, 3, 1, 2)
    y = torch.from_numpy(labels.astype(np.int64))
    out = torch.empty_like(clean)
    delta = None
    if name == "uap":
        delta = universal.fit_universal(forward, clean, y, eps=p["eps"], step=p["step"],
                                        epochs=p["epochs"], batch_size=p["fit_batch_size"],
                                        device=device)
    progress = Progress(f"attack {name}", len(images), "images")
    for start in range(0, len(images), size):
        stop = min(len(images), start + size)
        batch = clean[start:stop].to(device)
        if delta is not None:
            adversarial = universal.apply_universal(batch, delta)
        else:
            adversarial = attack_float(name, forward, batch.float().div(255.0),
                                       y[start:stop].to(device), image_ids=image_ids[start:stop],
                                       seed=int(seed), params=p)
        out[start:stop] = quantise(adversarial, batch, p["eps"]).cpu()
        progress.advance(stop - start)
    return out.permute(0, 2, 3, 1).contiguous().numpy()
